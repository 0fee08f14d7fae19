"""NVIDIA GPU architectures xpuc compiles for, by the names ptxas takes
(``xpuc compile --arch sm_90``, or a CUDA device's compute capability): each
one's ``Target`` comes from this table, which the PTX it gets depends on."""

from __future__ import annotations

from dataclasses import dataclass

from .passes import Target

# a warp: the threads an NVIDIA GPU runs in lockstep, which reduction kernels
# lay their lanes out by (Target.vector_lanes)
_WARP = 32
# bytes of loads a thread of a streaming kernel keeps in flight (coarsening.py):
# on an H100 full of threads a float64 triad's 16 (two loads a thread) ran at
# the copy bandwidth and a float32 triad's 8 at 79% of it; two float32
# iterations a thread (16 bytes) took it to 92%, four (32 bytes) to 89%
# (docs/performance.md, CUDA run 12)
_BYTES_IN_FLIGHT = 16
# the threads of a reduction kernel's block (Target.reduction_group_size):
# 8 warps, whose results meet in shared memory
_REDUCTION_BLOCK = 256


@dataclass(frozen=True)
class NvidiaGpu:
    """What about an architecture changes xpuc's code for it."""

    description: str
    # the oldest PTX ISA that knows the architecture: the PTX declares it,
    # and a driver loads PTX of the ISA versions it knows (CUDA 12.0's knows 8.0)
    ptx_version: str
    # the streaming multiprocessors of the architecture's largest part, and
    # the threads each holds at once: what a reduction kernel's blocks fill
    # when no device tells its own count (``xpuc compile --arch``)
    multiprocessors: int
    threads_per_multiprocessor: int

    def target(self, name: str, multiprocessors: int | None = None) -> Target:
        """The Target of this architecture, for a device of ``multiprocessors``
        (the architecture's largest part's unless told)."""
        blocks_per_multiprocessor = self.threads_per_multiprocessor // _REDUCTION_BLOCK
        # every architecture listed computes in double and half precision and
        # has 64-bit atomics
        return Target(name=name, family="cuda", sm_arch=name, ptx_version=self.ptx_version,
                      fp64=True, fp16=True, atomic64=True, vector_lanes=_WARP,
                      reduction_group_size=_REDUCTION_BLOCK, parallel_inner_loops=True,
                      work_item_bytes_in_flight=_BYTES_IN_FLIGHT,
                      reduction_groups=(multiprocessors or self.multiprocessors)
                      * blocks_per_multiprocessor)


# the architectures CUDA 13 (its ptxas) compiles for: Turing and later
ARCHITECTURES: dict[str, NvidiaGpu] = {
    "sm_75": NvidiaGpu("Turing (T4, RTX 20)", "ptx63", 72, 1024),
    "sm_80": NvidiaGpu("Ampere (A100)", "ptx70", 108, 2048),
    "sm_86": NvidiaGpu("Ampere (RTX 30, A10, A40)", "ptx71", 84, 1536),
    "sm_89": NvidiaGpu("Ada Lovelace (L4, L40, RTX 40)", "ptx78", 142, 1536),
    # ptx80, not 7.8: what the H100 these machines lend has run
    "sm_90": NvidiaGpu("Hopper (H100, H200)", "ptx80", 132, 2048),
    "sm_100": NvidiaGpu("Blackwell (B200)", "ptx86", 148, 2048),
    "sm_120": NvidiaGpu("Blackwell (RTX 50)", "ptx87", 170, 1536),
}


def is_architecture(name: str) -> bool:
    """Whether ``name`` is spelled as an NVIDIA architecture (``sm_NN``),
    known or not."""
    return name.startswith("sm_")
