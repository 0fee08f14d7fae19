"""What compiling records, kept apart from the compiler itself so that a
process which only runs compiled code (loaded from the cache) never imports
the compiler: the device a build is for, the parfors each signature
compiled to, and the count of kernels compiled in the process."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..passes import Lowered, Target
    from ..runtime import Queue
    from .parfor_to_mlir import ParforKernel


@dataclass
class CompiledParfor:
    kernel: ParforKernel
    lowered: Lowered


@dataclass
class OffloadTarget:
    """What lowering needs to know about the device it compiles for, and where
    it records what it produced (per signature, for ``inspect_mlir``)."""

    target: Target
    compiled: dict[tuple, list[CompiledParfor]] = field(default_factory=dict)
    # the queue of the latest call on the device: what is compiled for it is
    # built on it ahead of its launch (runtime.build_ahead)
    queue: Queue | None = None


_kernels_compiled = 0
_count_lock = threading.Lock()


def kernels_compiled() -> int:
    """SPIR-V modules produced by the MLIR pipeline in this process."""
    return _kernels_compiled


def count_kernel_compiled() -> None:
    global _kernels_compiled
    with _count_lock:
        _kernels_compiled += 1
