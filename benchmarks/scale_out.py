"""Scale-out over Dask: Black–Scholes and a 2-D stencil over chunked Dask
arrays on 1 and 2 workers, each worker one SYCL sub-device of one compute
unit (``xpuc.dask.LocalSYCLCluster``), next to the same Dask graphs whose
blocks run ``numba.njit(parallel=True)`` on workers of one thread each
(``NUMBA_NUM_THREADS=1``). Reports throughput (million elements a second,
median of ``--repeat`` computes after a warm-up one) and the scaling
efficiency from 1 to 2 workers (time on 1 / (2 x time on 2)).

    python benchmarks/scale_out.py [--elements N] [--repeat R] [--json PATH]

The arrays are made on the workers (``dask.array.random``) and each compute
ends in a sum there, so that moving blocks to and from the client is not
what is measured.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time

import dask.array as da
import numba
import numpy as np
from distributed import Client, LocalCluster
from numba import prange
from timing import cpu_model

import xpuc
from xpuc.dask import LocalSYCLCluster

RATE, VOLATILITY = 0.02, 0.3


def black_scholes_call(price, strike, years):
    call = np.empty_like(price)
    for i in prange(price.shape[0]):
        sqrt_t = math.sqrt(years[i])
        d1 = (math.log(price[i] / strike[i]) + (RATE + 0.5 * VOLATILITY ** 2) * years[i]) / (
            VOLATILITY * sqrt_t)
        d2 = d1 - VOLATILITY * sqrt_t
        discounted = strike[i] * math.exp(-RATE * years[i])
        call[i] = (price[i] * (0.5 + 0.5 * math.erf(d1 / math.sqrt(2.0)))
                   - discounted * (0.5 + 0.5 * math.erf(d2 / math.sqrt(2.0))))
    return call


def stencil(u):
    out = u * 1.0  # the border keeps its values
    for i in prange(1, u.shape[0] - 1):
        for j in range(1, u.shape[1] - 1):
            out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
    return out


def graphs(compile_block, elements: int) -> dict:
    """The two workloads' Dask graphs, blocks compiled by ``compile_block``,
    over inputs made and kept on the workers."""
    chunks = elements // 8
    price, strike = (da.random.uniform(10.0, 50.0, elements, chunks=chunks).persist()
                     for _ in range(2))
    years = da.random.uniform(0.25, 2.0, elements, chunks=chunks).persist()
    side = math.isqrt(elements)
    grid = da.random.random((side, side), chunks=(side // 8, side)).persist()
    bs, step = compile_block(black_scholes_call), compile_block(stencil)
    return {
        "black_scholes": (da.map_blocks(bs, price, strike, years, dtype=float).sum(), elements),
        "stencil": (grid.map_overlap(step, depth=1, boundary="none", dtype=float).sum(),
                    side * side),
    }


def measure(compile_block, elements: int, repeat: int) -> dict:
    """Million elements a second of each workload on the current client."""
    found = {}
    for name, (graph, size) in graphs(compile_block, elements).items():
        graph.compute()  # warm-up: compiles on each worker
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            graph.compute()
            times.append(time.perf_counter() - start)
        found[name] = size / statistics.median(times) / 1e6
    return found


def run(workers: int, implementation: str, elements: int, repeat: int) -> dict:
    if implementation == "xpuc":  # a sub-device of one compute unit each
        cluster = LocalSYCLCluster(devices=["opencl:cpu"], partition=1, n_workers=workers,
                                   dashboard_address=None)
        compile_block = xpuc.jit
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, env={"NUMBA_NUM_THREADS": "1"})
        compile_block = numba.njit(parallel=True)
    with cluster, Client(cluster):
        return measure(compile_block, elements, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=1 << 23)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    figures = {impl: {workers: run(workers, impl, args.elements, args.repeat)
                      for workers in (1, 2)} for impl in ("xpuc", "numba")}
    print(f"scale-out on {cpu_model()}, {args.elements} elements, Mel/s (median of "
          f"{args.repeat}); xpuc {xpuc.__version__}, numba {numba.__version__}")
    print(f"{'workload':14} {'impl':6} {'1 worker':>9} {'2 workers':>10} {'efficiency':>11}")
    for impl, by_workers in figures.items():
        for name in by_workers[1]:
            one, two = by_workers[1][name], by_workers[2][name]
            print(f"{name:14} {impl:6} {one:9.1f} {two:10.1f} {two / (2 * one):11.2f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"cpu": cpu_model(), "elements": args.elements, "figures": figures},
                      out, indent=1)


if __name__ == "__main__":
    main()
