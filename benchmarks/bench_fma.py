"""``a * b + c`` on 10^7 float32: first call (compile) and steady time for NumPy,
``numba.njit(parallel=True)`` and xpuc on the default SYCL device (NumPy
arguments under a device context, and USM arguments), same inputs, one run.
Prints a Markdown table and writes JSON next to it.

    python benchmarks/bench_fma.py [--n N] [--repeat R] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable

import dpctl
import dpctl.tensor as dpt
import numba
import numpy as np

import xpuc


def fma(a, b, c):
    return a * b + c


def measure(run: Callable[[], np.ndarray], repeat: int) -> tuple[float, float, np.ndarray]:
    """Seconds of the first call, median seconds of ``repeat`` further calls, result."""
    start = time.perf_counter()
    result = run()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return first, statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--device", default="opencl:cpu")
    parser.add_argument("--json", default="benchmarks/results/fma.json")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    a, b, c = (rng.random(args.n, dtype=np.float32) for _ in range(3))
    expected = a * b + c

    numba_parallel = numba.njit(parallel=True)(fma)
    offloaded = xpuc.jit(fma)

    def run_xpuc() -> np.ndarray:
        with xpuc.device_context(args.device):
            return offloaded(a, b, c)

    queue = dpctl.SyclQueue(args.device)
    usm_a, usm_b, usm_c = (xpuc.asarray(x, queue=queue) for x in (a, b, c))

    rows = {}
    for name, run in [("NumPy", lambda: fma(a, b, c)),
                      ("numba.njit(parallel=True)", lambda: numba_parallel(a, b, c)),
                      (f"xpuc {args.device} (NumPy in/out)", run_xpuc),
                      (f"xpuc {args.device} (USM in/out)", lambda: offloaded(usm_a, usm_b, usm_c))]:
        print(f"running {name} ...", flush=True)
        first, steady, result = measure(run, args.repeat)
        if isinstance(result, dpt.usm_ndarray):
            result = dpt.asnumpy(result)
        np.testing.assert_allclose(result, expected, rtol=1e-6)
        rows[name] = {"first_call_ms": first * 1e3, "steady_ms": steady * 1e3}

    base = rows["NumPy"]["steady_ms"]
    print(f"\n`a * b + c`, n = {args.n:,} float32, median of {args.repeat} "
          f"({platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d')})\n")
    print("| implementation | first call (ms) | steady (ms) | speed-up vs NumPy |")
    print("|---|---:|---:|---:|")
    for name, row in rows.items():
        print(f"| {name} | {row['first_call_ms']:.1f} | {row['steady_ms']:.2f} | "
              f"{base / row['steady_ms']:.2f}x |")
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as out:
        json.dump({"n": args.n, "dtype": "float32", "results": rows}, out, indent=2)


if __name__ == "__main__":
    main()
