"""The fixed cost of an ``xpuc.jit`` call on CUDA arrays: a 1-element triad
``a[i] = b[i] + s * c[i]`` on CuPy arrays, beside CuPy's own
``ElementwiseKernel`` call of the same triad, and what the call is made of
(keying the arguments, converting them, the compiled entry point with its
runtime calls, launch and wait), with the driver's waits on an idle device
for scale. Microseconds, medians of ``--repeat`` batches of ``--calls``
calls; "waited" figures wait for the device after every call, as the suite
does. Needs a CUDA GPU and CuPy; run from the repository's root as
scripts/cuda-device-tests.sh sets up (``xpuc`` importable).

    python benchmarks/bench_cuda_dispatch.py [--calls N] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import cupy as cp
import numba
import numpy as np

import xpuc
from xpuc import runtime
from xpuc.device import get_current_queue
from xpuc.placement import keyed_arguments


def triad(a, b, c, s):
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


def per_call_us(run: Callable[[], object], calls: int, repeat: int) -> float:
    """The median over ``repeat`` batches of ``run``'s time a call."""
    run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times) * 1e6


def waited(run: Callable[[], object]) -> Callable[[], None]:
    synchronize = cp.cuda.runtime.deviceSynchronize

    def call() -> None:
        run()
        synchronize()
    return call


def bench(dtype: type, calls: int, repeat: int) -> list[tuple[str, float]]:
    a, b, c = (cp.ones(1, dtype) for _ in range(3))
    s = dtype(2.0)
    function = xpuc.jit(triad)
    kernel = cp.ElementwiseKernel("T b, T c, T s", "T a", "a = b + s * c", "triad_1")
    args = (a, b, c, s)
    for _ in range(2):  # the second call makes the plan (the first meets cupy.ndarray)
        function(*args)
    kernel(b, c, s, a)
    np.testing.assert_array_equal(cp.asnumpy(a), [3.0])
    key, placed = keyed_arguments(args)
    plan = function._plans[(get_current_queue(), key)]
    found = [
        ("xpuc call, waited", per_call_us(waited(lambda: function(*args)), calls, repeat)),
        ("CuPy ElementwiseKernel call, waited",
         per_call_us(waited(lambda: kernel(b, c, s, a)), calls, repeat)),
        ("xpuc call", per_call_us(lambda: function(*args), calls, repeat)),
        ("CuPy ElementwiseKernel call", per_call_us(lambda: kernel(b, c, s, a), calls, repeat)),
        ("xpuc: keying the arguments, made ready for compiled code",
         per_call_us(lambda: keyed_arguments(args), calls, repeat)),
    ]
    runtime.call_queue(plan.handle)
    found.append(("xpuc: compiled entry point (unbox, runtime, launch, wait)",
                  per_call_us(lambda: plan.target(*placed), calls, repeat)))
    stream = cp.cuda.get_current_stream()
    found += [
        ("driver: device synchronize, idle",
         per_call_us(cp.cuda.runtime.deviceSynchronize, calls, repeat)),
        ("driver: stream synchronize, idle", per_call_us(stream.synchronize, calls, repeat)),
    ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    print(f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, "
          f"driver {cp.cuda.runtime.driverGetVersion()}, CuPy {cp.__version__}, "
          f"medians of {options.repeat} batches of {options.calls} calls")
    print("| dtype | what | us a call |")
    print("| --- | --- | --- |")
    for dtype in (np.float32, np.float64):
        for what, us in bench(dtype, options.calls, options.repeat):
            print(f"| {np.dtype(dtype).name} | {what} | {us:.2f} |", flush=True)


if __name__ == "__main__":
    main()
