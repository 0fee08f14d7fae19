"""First-call latency, each in a fresh process: a cold compile, a warm start
from ``cache=True``, and an ahead-of-time build (``xpuc compile``), for a
one-kernel and a five-kernel function, next to Numba's own on the CPU: its
cold compile (``njit`` and ``njit(parallel=True)``, after ``import xpuc`` as
xpuc's, so that both find the same modules loaded) and its warm cache load.
A cold process also times ``import xpuc`` and, after its first call, a
further cold compile (another one-kernel function), for Numba too.
Prints the CPU model and a Markdown table of medians over ``--runs``
processes; the cold runs each start with an empty cache.

``--starts P`` times whole starts instead, as a user's script pays them:
P pairs of fresh processes, xpuc's and Numba's in turns, each timed from
its first line (its imports, then one call of ``a * b + c`` on 1000
elements: xpuc's in a device context, Numba's ``parallel=True``), warm
(``cache=True``, the cache filled) and cold; medians of each side and of
the pairs' ratios.

    python benchmarks/bench_first_call.py [--runs R] [--size N] [--starts P]
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile

from timing import cpu_model

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

def further(a, b):
    return a - b * 0.5

SIGNATURES = {{"one": "float64[::1](float64[::1], float64[::1], float64[::1])",
               "five": "float64[::1](float64[::1])"}}
ARGS = {{"one": 3, "five": 1}}
MODE = "{mode}"
if MODE == "numba":
    one_jit = numba.njit(cache=True, parallel=True)(one)
    five_jit = numba.njit(cache=True, parallel=True)(five)
elif MODE in ("numba_cold", "numba_serial_cold"):
    compile_cold = numba.njit(parallel=MODE == "numba_cold")
    one_jit, five_jit, further_jit = map(compile_cold, (one, five, further))
elif MODE == "aot":
    one_jit = xpuc.jit(SIGNATURES["one"])(one)
    five_jit = xpuc.jit(SIGNATURES["five"])(five)
else:
    one_jit = xpuc.jit(cache=True)(one)
    five_jit = xpuc.jit(cache=True)(five)
    further_jit = xpuc.jit(further)
'''

CALLER = '''
import contextlib, json, time
start = time.perf_counter()
import xpuc
import_ms = (time.perf_counter() - start) * 1e3
import numpy as np
import mod_{mode} as mod
a = np.random.rand({size})
fn = getattr(mod, "{function}_jit")
args = [a] * mod.ARGS["{function}"]
xpuc.reset_stats()
start = time.perf_counter()
on_cpu = "{mode}".startswith("numba")
with contextlib.nullcontext() if on_cpu else xpuc.device_context("opencl:cpu"):
    fn(*args)
ms = (time.perf_counter() - start) * 1e3
compiled = xpuc.stats()["kernels_compiled"]
further_ms = None
if hasattr(mod, "further_jit"):
    start = time.perf_counter()
    with contextlib.nullcontext() if on_cpu else xpuc.device_context("opencl:cpu"):
        mod.further_jit(a, a)
    further_ms = (time.perf_counter() - start) * 1e3
print(json.dumps({{"ms": ms, "compiled": compiled, "import_ms": import_ms,
                  "further_ms": further_ms}}))
'''


def first_call(directory: str, mode: str, function: str, cache_dir: str, size: int) -> dict:
    env = dict(os.environ, XPUC_CACHE_DIR=cache_dir, NUMBA_CACHE_DIR=cache_dir)
    code = CALLER.format(mode=mode, function=function, size=size)
    done = subprocess.run([sys.executable, "-c", code], cwd=directory, env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


START = '''
import time
start = time.perf_counter()
import numpy as np
import {library}

@{decorator}
def fma(a, b, c):
    return a * b + c

a = np.random.rand(1000)
with {context}:
    fma(a, a, a)
print((time.perf_counter() - start) * 1e3)
'''

START_SIDES = {"xpuc": dict(library="xpuc", decorator="xpuc.jit({options})",
                            context='xpuc.device_context("opencl:cpu")'),
               "numba": dict(library="contextlib, numba",
                             decorator="numba.njit(parallel=True{options})",
                             context="contextlib.nullcontext()")}


def start_ms(directory: str, side: str, warm: bool, cache_dir: str) -> float:
    """Milliseconds of one fresh process's start (imports and first call)."""
    options = ("cache=True" if side == "xpuc" else ", cache=True") if warm else ""
    fields = {key: value.format(options=options) for key, value in START_SIDES[side].items()}
    script = os.path.join(directory, f"start_{side}_{'warm' if warm else 'cold'}.py")
    with open(script, "w") as out:
        out.write(START.format(**fields))
    env = dict(os.environ, XPUC_CACHE_DIR=cache_dir, NUMBA_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, script], cwd=directory, env=env,
                          capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def process_starts(pairs: int) -> None:
    """Warm and cold starts of xpuc and Numba, in turns (see the module's text)."""
    print(f"process starts on {cpu_model()}: {pairs} pairs in turns, ms\n")
    print("| start | xpuc | Numba parallel | ratio (median of pairs) | ratios |")
    print("|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as directory:
        for warm in (True, False):
            times: dict[str, list[float]] = {"xpuc": [], "numba": []}
            for pair in range(pairs + warm):  # a warm run's first pair fills the caches
                for side in times:
                    cache_dir = os.path.join(directory, "cache" if warm else f"cold-{pair}")
                    times[side].append(start_ms(directory, side, warm, cache_dir))
            if warm:
                times = {side: found[1:] for side, found in times.items()}
            ratios = sorted(x / n for x, n in zip(times["xpuc"], times["numba"]))
            print(f"| {'warm, cache=True' if warm else 'cold'} | "
                  f"{statistics.median(times['xpuc']):.0f} | "
                  f"{statistics.median(times['numba']):.0f} | "
                  f"{statistics.median(ratios):.2f}x | "
                  + ", ".join(f"{r:.2f}" for r in ratios) + " |", flush=True)


def compile_bytecode() -> None:
    """Byte-compile xpuc's modules and Numba's, as their installs from wheels
    do. A process that may not write bytecode (``PYTHONDONTWRITEBYTECODE``)
    compiles each module whose source changed since its ``.pyc`` was written,
    at every start: in a checkout being worked on, xpuc's (40 ms of CPU for
    the compiler's, in a cold process), never Numba's."""
    for package in ("xpuc", "numba"):
        for directory in importlib.util.find_spec(package).submodule_search_locations:
            compileall.compile_dir(directory, quiet=1)


def median(rows: list[dict], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="processes per case (median)")
    parser.add_argument("--size", type=int, default=10**6, help="elements of each array")
    parser.add_argument("--starts", type=int, default=0,
                        help="time P pairs of whole process starts instead")
    args = parser.parse_args()
    compile_bytecode()
    if args.starts:
        process_starts(args.starts)
        return
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for mode in ("jit", "aot", "numba", "numba_cold", "numba_serial_cold"):
            with open(os.path.join(directory, f"mod_{mode}.py"), "w") as out:
                out.write(MODULE.format(mode=mode))
        for function, kernels in (("one", 1), ("five", 5)):
            print(f"{function}: xpuc cold, warm and AOT, Numba warm and cold ...", flush=True)
            cold = [first_call(directory, "jit", function,
                               os.path.join(directory, f"cold-{function}-{run}"), args.size)
                    for run in range(args.runs)]
            cache_dir = os.path.join(directory, f"cache-{function}")
            first_call(directory, "jit", function, cache_dir, args.size)  # fills the cache
            warm = [first_call(directory, "jit", function, cache_dir, args.size)
                    for _ in range(args.runs)]
            subprocess.run([sys.executable, "-m", "xpuc.cli", "compile", "mod_aot.py", "-o",
                            cache_dir], cwd=directory, check=True, capture_output=True)
            ahead = [first_call(directory, "aot", function, cache_dir, args.size)
                     for _ in range(args.runs)]
            first_call(directory, "numba", function, cache_dir, args.size)  # fills Numba's cache
            numba_warm = [first_call(directory, "numba", function, cache_dir, args.size)
                          for _ in range(args.runs)]
            numba_cold, serial_cold = (
                [first_call(directory, mode, function, cache_dir, args.size)
                 for _ in range(args.runs)]
                for mode in ("numba_cold", "numba_serial_cold"))
            assert all(r["compiled"] == kernels for r in cold), cold
            assert all(r["compiled"] == 0 for r in warm + ahead), (warm, ahead)
            rows.append((f"{function} ({kernels} kernel{'s' * (kernels > 1)})",
                         median(cold, "import_ms"), median(cold, "ms"),
                         median(cold, "further_ms"), median(warm, "ms"), median(ahead, "ms"),
                         median(numba_warm, "ms"), median(numba_cold, "ms"),
                         median(numba_cold, "further_ms"), median(serial_cold, "ms"),
                         median(serial_cold, "further_ms")))
    print(f"\nfirst call in a fresh process on {cpu_model()} (ms, median of {args.runs} "
          f"processes; arrays of {args.size} float64; MLIR compiles on the warm side: 0)\n")
    print("| function | import xpuc | cold compile | further function, cold | "
          "cache=True warm | AOT | Numba parallel, cache warm | Numba parallel, cold | "
          "its further function | Numba serial, cold | its further function |")
    print("|---|" + "---:|" * 10)
    for name, *times in rows:
        print(f"| {name} | " + " | ".join(f"{t:.0f}" for t in times) + " |")


if __name__ == "__main__":
    main()
