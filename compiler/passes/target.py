"""What about the device changes the code xpuc generates for it."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

# SPIR-V capabilities every kernel may use: OpenCL kernels with 64-bit pointers
# (Addresses, Int64 for the 64-bit index type) and the small integers bools
# and int8 arrays need. spirv-update-vce keeps only those a kernel really uses.
_BASE_CAPS = ("Addresses", "Kernel", "Int8", "Int16", "Int64", "Groups",
              # work-group multiplies (group.reduce_mul): core OpenCL SPIR-V has
              # group add, min and max only
              "GroupUniformArithmeticKHR")


@dataclass(frozen=True)
class Target:
    """A device as code generation sees it. (Work-group sizes are not part of
    it: parfor kernels leave them to the device runtime, see
    gpu_rewrites.index_by_global_ids.)"""

    # what the code is for, as errors name it: a SYCL device's name, or an
    # Intel GPU architecture as ocloc names it (``xpuc compile --arch dg2``)
    name: str = "the device"
    fp64: bool = True
    fp16: bool = False
    atomic64: bool = True  # 64-bit atomics (explicit kernels' atomic.add)
    spirv_version: str = "v1.2"
    # work-items the device runs side by side as one vector, which reduction
    # kernels lay their lanes out by (see parfor_reductions.reduction_lanes)
    vector_lanes: int = 8
    # whether the device's compiler runs neighbouring work-items in the lanes
    # of one vector (a CPU device; a GPU runs each work-item in a lane of its own)
    vectorizes_work_items: bool = False
    # the device's cache line, on which vectors of work-items that stream an
    # array start (aligned_lanes.py)
    cache_line_bytes: int = 64
    # whether the device's compiler reorders a float sum or product carried by
    # a kernel's loop when it vectorizes the loop (see ordered_reductions.py)
    reorders_loop_reductions: bool = False
    # work-items of a reduction kernel's work-group, which combine their
    # partial results in the kernel: the subgroups (``vector_lanes`` work-items)
    # with shuffles, then the subgroups' results in local memory, leaving one
    # partial result per work-group (a GPU's shape, see
    # parfor_reductions.reduction_layout). 0: no work-groups, each work-item's
    # partial result goes to the host (the lanes a CPU device vectorizes)
    reduction_group_size: int = 0
    # work-groups of a reduction kernel: enough to fill the device
    reduction_groups: int = 0
    # whether a parfor body's independent inner loop becomes another parallel
    # dimension of its kernel (frontend/inner_loops.py): a GPU wants a thread
    # per (i, j) where a prange over rows gives it a few long ones
    parallel_inner_loops: bool = False
    # bytes of loads each work-item of a streaming kernel should have in flight:
    # a 1-D kernel that loads before it stores runs as many iterations per
    # work-item as that takes (coarsening.py). 0: one iteration a work-item
    work_item_bytes_in_flight: int = 0
    # the device family, which picks the stage table's tail (stages_for):
    # "sycl" (SPIR-V for a SYCL runtime) or "cuda" (PTX for the CUDA driver)
    family: str = "sycl"
    # a CUDA device's architecture as ptxas names it ("sm_90"); "" on SYCL
    sm_arch: str = ""
    # the PTX ISA version the PTX declares ("ptx80"), which the CUDA driver
    # that loads it must know; "" on SYCL
    ptx_version: str = ""
    # the fastmath flags (Numba's names) of the function whose kernels these
    # are, sorted: what the kernels may do that NumPy's rounding does not allow
    # (fast_math.py). () everywhere but in a function compiled with them
    fast_math: tuple[str, ...] = ()

    @property
    def spirv_caps(self) -> tuple[str, ...]:
        """Capabilities the kernels may use (no Float64 on a device without fp64)."""
        return (_BASE_CAPS + ("Float16",) * self.fp16 + ("Float64",) * self.fp64
                + ("Int64Atomics",) * self.atomic64)

    def to_json(self) -> str:
        """The target on one line, as ``from_json`` reads it back (what a
        stage's reproducer file records)."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Target:
        fields = json.loads(text)
        fields["fast_math"] = tuple(fields.get("fast_math", ()))  # a list in JSON
        return cls(**fields)
