"""Intel GPU architectures xpuc compiles for without the GPU being present
(``xpuc compile --arch NAME``): each one's ``Target`` comes from this table of
its aspects, not from a live device's queries."""

from __future__ import annotations

from dataclasses import dataclass

from .passes import Target


@dataclass(frozen=True)
class IntelGpu:
    """What about an architecture changes xpuc's code for it."""

    description: str
    fp64: bool
    atomic64: bool  # 64-bit integer atomics
    sub_group_sizes: tuple[int, ...]

    def target(self, name: str) -> Target:
        # a GPU runs each work-item in a lane of its own, sub-groups of up
        # to its widest size side by side (as targets.vector_lanes says of
        # a live GPU); every Xe core computes in half precision
        return Target(name=name, fp64=self.fp64, fp16=True, atomic64=self.atomic64,
                      vector_lanes=max(self.sub_group_sizes), parallel_inner_loops=True)


_PVC = IntelGpu("Data Center GPU Max (Ponte Vecchio, Xe-HPC)", fp64=True, atomic64=True,
                sub_group_sizes=(16, 32))
_DG2 = IntelGpu("Arc A-series (Alchemist, Xe-HPG)", fp64=False, atomic64=True,
                sub_group_sizes=(8, 16, 32))


def _xe_lp(description: str) -> IntelGpu:
    return IntelGpu(description, fp64=False, atomic64=True, sub_group_sizes=(8, 16, 32))


# By the names ``ocloc -device`` takes (Debian's ocloc 22.43 knows these).
# Its builds agree with the fp64 column: a kernel using double fails on each
# architecture without it ("Double type is not supported on this platform"),
# and int64 atomics build on all of them.
ARCHITECTURES: dict[str, IntelGpu] = {
    "pvc": _PVC,
    "dg2": _DG2,
    "acm-g10": _DG2,
    "tgllp": _xe_lp("Iris Xe, 11th-generation Core (Tiger Lake, Xe-LP)"),
    "adlp": _xe_lp("Iris Xe, 12th-generation Core mobile (Alder Lake-P, Xe-LP)"),
    "adls": _xe_lp("UHD Graphics 770, 12th-generation Core desktop (Alder Lake-S, Xe-LP)"),
}
