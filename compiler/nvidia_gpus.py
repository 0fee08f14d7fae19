"""NVIDIA GPU architectures xpuc compiles for, by the names ptxas takes
(``xpuc compile --arch sm_90``, or a CUDA device's compute capability): each
one's ``Target`` comes from this table, which the PTX it gets depends on."""

from __future__ import annotations

from dataclasses import dataclass

from .passes import Target

# a warp: the threads an NVIDIA GPU runs in lockstep, which reduction kernels
# lay their lanes out by (Target.vector_lanes)
_WARP = 32


@dataclass(frozen=True)
class NvidiaGpu:
    """What about an architecture changes xpuc's code for it."""

    description: str
    # the oldest PTX ISA that knows the architecture: the PTX declares it,
    # and a driver loads PTX of the ISA versions it knows (CUDA 12.0's knows 8.0)
    ptx_version: str

    def target(self, name: str) -> Target:
        # every architecture listed computes in double and half precision and
        # has 64-bit atomics
        return Target(name=name, family="cuda", sm_arch=name, ptx_version=self.ptx_version,
                      fp64=True, fp16=True, atomic64=True, vector_lanes=_WARP)


# the architectures CUDA 13 (its ptxas) compiles for: Turing and later
ARCHITECTURES: dict[str, NvidiaGpu] = {
    "sm_75": NvidiaGpu("Turing (T4, RTX 20)", "ptx63"),
    "sm_80": NvidiaGpu("Ampere (A100)", "ptx70"),
    "sm_86": NvidiaGpu("Ampere (RTX 30, A10, A40)", "ptx71"),
    "sm_89": NvidiaGpu("Ada Lovelace (L4, L40, RTX 40)", "ptx78"),
    # ptx80, not 7.8: what the H100 these machines lend has run
    "sm_90": NvidiaGpu("Hopper (H100, H200)", "ptx80"),
    "sm_100": NvidiaGpu("Blackwell (B200)", "ptx86"),
    "sm_120": NvidiaGpu("Blackwell (RTX 50)", "ptx87"),
}


def is_architecture(name: str) -> bool:
    """Whether ``name`` is spelled as an NVIDIA architecture (``sm_NN``),
    known or not."""
    return name.startswith("sm_")
