"""What about the device changes the code xpuc generates for it."""

from __future__ import annotations

import math
from dataclasses import dataclass

# SPIR-V capabilities every kernel may use: OpenCL kernels with 64-bit pointers
# (Addresses, Int64 for the 64-bit index type) and the small integers bools
# and int8 arrays need. spirv-update-vce keeps only those a kernel really uses.
_BASE_CAPS = ("Addresses", "Kernel", "Int8", "Int16", "Int64", "Groups")


@dataclass(frozen=True)
class Target:
    """A device as code generation sees it.

    The work-group sizes are the tile sizes of the parallel loop, per number of
    loop dimensions (x first: the contiguous array dimension); each kernel's
    LocalSize is fixed to them. 1-D: 64, a few SIMD widths of work per group
    without making small arrays all padding. 2-D: 16x16. 3-D: 16x4x4, the same
    256 items as 2-D, with x kept at 16 (an Intel GPU sub-group, 64 bytes of
    f32) so that neighbouring items still read neighbouring elements, y and z
    sharing the rest evenly. Sizes are halved to fit ``max_work_group_size``
    (see ``work_group_size``).
    """

    fp64: bool = True
    fp16: bool = False
    atomic64: bool = True  # 64-bit atomics (explicit kernels' atomic.add)
    max_work_group_size: int = 256
    work_group_size_1d: int = 64
    work_group_size_2d: tuple[int, int] = (16, 16)
    work_group_size_3d: tuple[int, int, int] = (16, 4, 4)
    spirv_version: str = "v1.2"

    def __post_init__(self) -> None:
        for ndim, sizes in enumerate(self._configured_sizes(), start=1):
            if len(sizes) != ndim or min(sizes) < 1:
                raise ValueError(f"work_group_size_{ndim}d must be {ndim} positive sizes, "
                                 f"got {sizes}")
        if self.max_work_group_size < 1:
            raise ValueError("max_work_group_size must be positive")

    def _configured_sizes(self) -> tuple[tuple[int, ...], ...]:
        return (self.work_group_size_1d,), self.work_group_size_2d, self.work_group_size_3d

    def work_group_size(self, ndim: int) -> tuple[int, ...]:
        """The work-group size (= loop tile sizes) of an ``ndim``-D loop.

        While over ``max_work_group_size``, the largest of y and z (z on ties)
        is halved, and x only once they are 1: x is the contiguous dimension.
        """
        sizes = list(self._configured_sizes()[ndim - 1])
        while math.prod(sizes) > self.max_work_group_size:
            outer = [axis for axis in range(1, ndim) if sizes[axis] > 1]
            axis = max(outer, key=lambda a: (sizes[a], a)) if outer else 0
            sizes[axis] //= 2
        return tuple(sizes)

    @property
    def spirv_caps(self) -> tuple[str, ...]:
        """Capabilities the kernels may use (no Float64 on a device without fp64)."""
        return (_BASE_CAPS + ("Float16",) * self.fp16 + ("Float64",) * self.fp64
                + ("Int64Atomics",) * self.atomic64)
