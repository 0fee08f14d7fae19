"""How the suite and numba-dpex's peer process time a call: imported by both,
so a steady call means the same thing on each side. Plain Python, no xpuc
(the peer runs in numba-dpex's own environment)."""

from __future__ import annotations

import time
from collections.abc import Callable


def call_times(run: Callable[[], object], repeat: int) -> list[float]:
    """Milliseconds of each of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def steady_ms(call: Callable[[], object], warm_calls: int) -> float:
    """Milliseconds of one steady call: one that follows ``warm_calls`` calls
    of the same implementation, which woke its threads and left its data
    where a repeated call finds it."""
    for _ in range(warm_calls):
        call()
    return call_times(call, 1)[0]


def cpu_model() -> str:
    """The CPU's model name, which every figure is recorded with."""
    try:
        with open("/proc/cpuinfo") as info:
            return next(line.split(":", 1)[1].strip() for line in info
                        if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown CPU"
