"""First-call latency, each in a fresh process: a cold compile, a warm start
from ``cache=True``, and an ahead-of-time build (``xpuc compile``), for a
one-kernel and a five-kernel function, next to Numba's own warm cache load of
the same function on the CPU. Prints a Markdown table.

    python benchmarks/bench_first_call.py [--runs R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

MODULE = '''
import numba
import numpy as np
import xpuc

def one(a, b, c):
    return a * b + c

def five(a):
    b = np.sin(a)
    for i in range(1, b.shape[0]):  # serial loops between parfors keep them apart
        b[i] += b[i - 1]
    c = b * 2.0
    for i in range(1, c.shape[0]):
        c[i] -= c[i - 1]
    d = np.sqrt(np.abs(c))
    for i in range(1, d.shape[0]):
        d[i] += d[i - 1]
    e = d + 1.0
    for i in range(1, e.shape[0]):
        e[i] *= 0.5
    return np.exp(-e)

SIGNATURES = {{"one": "float64[::1](float64[::1], float64[::1], float64[::1])",
               "five": "float64[::1](float64[::1])"}}
ARGS = {{"one": 3, "five": 1}}
MODE = "{mode}"
if MODE == "numba":
    one_jit = numba.njit(cache=True, parallel=True)(one)
    five_jit = numba.njit(cache=True, parallel=True)(five)
elif MODE == "aot":
    one_jit = xpuc.jit(SIGNATURES["one"])(one)
    five_jit = xpuc.jit(SIGNATURES["five"])(five)
else:
    one_jit = xpuc.jit(cache=True)(one)
    five_jit = xpuc.jit(cache=True)(five)
'''

CALLER = '''
import json, time, numpy as np
import xpuc
import mod_{mode} as mod
a = np.random.rand(1000)
fn = getattr(mod, "{function}_jit")
args = [a] * mod.ARGS["{function}"]
xpuc.reset_stats()
start = time.perf_counter()
if "{mode}" == "numba":
    fn(*args)
else:
    with xpuc.device_context("opencl:cpu"):
        fn(*args)
print(json.dumps({{"ms": (time.perf_counter() - start) * 1e3,
                  "compiled": xpuc.stats()["kernels_compiled"]}}))
'''


def first_call(directory: str, mode: str, function: str, cache_dir: str) -> dict:
    env = dict(os.environ, XPUC_CACHE_DIR=cache_dir, NUMBA_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, "-c", CALLER.format(mode=mode, function=function)],
                          cwd=directory, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="warm measurements per case")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for mode in ("jit", "aot", "numba"):
            with open(os.path.join(directory, f"mod_{mode}.py"), "w") as out:
                out.write(MODULE.format(mode=mode))
        for function, kernels in (("one", 1), ("five", 5)):
            cache_dir = os.path.join(directory, f"cache-{function}")
            print(f"{function}: cold compile, cache=True warm, AOT, Numba warm ...", flush=True)
            cold = first_call(directory, "jit", function, cache_dir)
            warm = [first_call(directory, "jit", function, cache_dir) for _ in range(args.runs)]
            subprocess.run([sys.executable, "-m", "xpuc.cli", "compile", "mod_aot.py", "-o",
                            cache_dir], cwd=directory, check=True, capture_output=True)
            ahead = [first_call(directory, "aot", function, cache_dir) for _ in range(args.runs)]
            first_call(directory, "numba", function, cache_dir)  # fills Numba's cache
            numba_warm = [first_call(directory, "numba", function, cache_dir)
                          for _ in range(args.runs)]
            assert cold["compiled"] == kernels, cold
            assert all(r["compiled"] == 0 for r in warm + ahead), (warm, ahead)
            rows.append((f"{function} ({kernels} kernel{'s' * (kernels > 1)})", cold["ms"],
                         statistics.median(r["ms"] for r in warm),
                         statistics.median(r["ms"] for r in ahead),
                         statistics.median(r["ms"] for r in numba_warm)))
    print("\nfirst call in a fresh process (ms; warm: median of "
          f"{args.runs}; MLIR compiles on the warm side: 0)\n")
    print("| function | cold compile | cache=True warm | AOT | Numba parallel, cache warm |")
    print("|---|---:|---:|---:|---:|")
    for name, cold, warm, ahead, numba_warm in rows:
        print(f"| {name} | {cold:.0f} | {warm:.0f} | {ahead:.0f} | {numba_warm:.0f} |")


if __name__ == "__main__":
    main()
