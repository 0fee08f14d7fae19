"""Explicit kernels against NumPy and Numba's CPU threads, same inputs, one run:
a tiled matrix multiplication (work-group local memory and barriers) and a
histogram (atomics). First call (compile) and median of steady calls.
Prints a Markdown table and writes JSON.

    python benchmarks/bench_kernels.py [--size N] [--samples M] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable

import numba
import numpy as np

import xpuc

TILE = 16
BINS = 256


@xpuc.kernel
def tiled_matmul(a, b, c):
    row = xpuc.get_global_id(0)
    col = xpuc.get_global_id(1)
    local_row = xpuc.get_local_id(0)
    local_col = xpuc.get_local_id(1)
    tile_a = xpuc.local.array((TILE, TILE), np.float32)
    tile_b = xpuc.local.array((TILE, TILE), np.float32)
    total = np.float32(0)
    for t in range(a.shape[1] // TILE):
        tile_a[local_row, local_col] = a[row, t * TILE + local_col]
        tile_b[local_row, local_col] = b[t * TILE + local_row, col]
        xpuc.barrier()
        for k in range(TILE):
            total += tile_a[local_row, k] * tile_b[k, local_col]
        xpuc.barrier()
    c[row, col] = total


@numba.njit(parallel=True)
def numba_matmul(a, b, c):
    for i in numba.prange(a.shape[0]):
        for k in range(a.shape[1]):
            aik = a[i, k]
            for j in range(b.shape[1]):
                c[i, j] += aik * b[k, j]


@xpuc.kernel
def histogram(data, counts):
    """Counts per work-group in local memory, then one global atomic per bin."""
    i = xpuc.get_global_id(0)
    local = xpuc.get_local_id(0)
    bins = xpuc.local.array(BINS, np.int32)
    bins[local] = 0
    xpuc.barrier()
    xpuc.atomic.add(bins, data[i], 1)
    xpuc.barrier()
    xpuc.atomic.add(counts, local, bins[local])


@numba.njit(parallel=True)
def numba_histogram(data, counts):
    chunks = numba.get_num_threads()
    partial = np.zeros((chunks, counts.shape[0]), dtype=counts.dtype)
    size = (data.shape[0] + chunks - 1) // chunks
    for chunk in numba.prange(chunks):
        for i in range(chunk * size, min((chunk + 1) * size, data.shape[0])):
            partial[chunk, data[i]] += 1
    counts[:] = partial.sum(axis=0)


def measure(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Milliseconds of the first call and the median of ``repeat`` more."""
    start = time.perf_counter()
    run()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return first * 1e3, statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512, help="matrix size (multiple of 16)")
    parser.add_argument("--samples", type=int, default=10**7, help="histogram inputs")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--device", default="opencl:cpu")
    parser.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "results",
                                                            "kernels.json"))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = args.size - args.size % TILE
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    data = rng.integers(0, BINS, args.samples - args.samples % BINS).astype(np.int32)
    usm_a, usm_b = xpuc.asarray(a), xpuc.asarray(b)
    usm_c = xpuc.asarray(np.zeros((n, n), np.float32))
    usm_data, usm_counts = xpuc.asarray(data), xpuc.asarray(np.zeros(BINS, np.int32))
    expected_c, expected_counts = a @ b, np.bincount(data, minlength=BINS)

    def xpuc_matmul_numpy():
        c = np.zeros((n, n), np.float32)
        with xpuc.device_context(args.device):
            tiled_matmul[xpuc.NdRange((n, n), (TILE, TILE))](a, b, c)
        return c

    def xpuc_histogram_numpy():
        counts = np.zeros(BINS, np.int32)
        with xpuc.device_context(args.device):
            histogram[xpuc.NdRange(data.size, BINS)](data, counts)
        return counts

    def numba_matmul_run():
        c = np.zeros((n, n), np.float32)
        numba_matmul(a, b, c)
        return c

    def numba_histogram_run():
        counts = np.zeros(BINS, np.int64)
        numba_histogram(data, counts)
        return counts

    cases = {
        f"matmul {n}x{n} float32": [
            ("NumPy (BLAS)", lambda: a @ b),
            ("numba.njit(parallel=True)", numba_matmul_run),
            (f"xpuc kernel {args.device} (NumPy in/out)", xpuc_matmul_numpy),
            (f"xpuc kernel {args.device} (USM)",
             lambda: tiled_matmul[xpuc.NdRange((n, n), (TILE, TILE))](usm_a, usm_b, usm_c)),
        ],
        f"histogram {data.size:,} int32 -> {BINS} bins": [
            ("NumPy (bincount)", lambda: np.bincount(data, minlength=BINS)),
            ("numba.njit(parallel=True)", numba_histogram_run),
            (f"xpuc kernel {args.device} (NumPy in/out)", xpuc_histogram_numpy),
            (f"xpuc kernel {args.device} (USM)",
             lambda: histogram[xpuc.NdRange(data.size, BINS)](usm_data, usm_counts)),
        ],
    }
    rows = []
    for case, runs in cases.items():
        for name, run in runs:
            print(f"running {case}: {name} ...", flush=True)
            first, steady = measure(run, args.repeat)
            rows.append({"case": case, "implementation": name, "first_call_ms": first,
                         "steady_ms": steady})
    # results agree (the USM runs write usm_c / usm_counts in place)
    np.testing.assert_allclose(xpuc_matmul_numpy(), expected_c, rtol=1e-4)
    np.testing.assert_allclose(numba_matmul_run(), expected_c, rtol=1e-4)
    np.testing.assert_array_equal(xpuc_histogram_numpy(), expected_counts)
    np.testing.assert_array_equal(numba_histogram_run(), expected_counts)

    print(f"\n({platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{time.strftime('%Y-%m-%d')}, median of {args.repeat})\n")
    print("| case | implementation | first call (ms) | steady (ms) |")
    print("|---|---|---:|---:|")
    for row in rows:
        print(f"| {row['case']} | {row['implementation']} | {row['first_call_ms']:.1f} | "
              f"{row['steady_ms']:.2f} |")
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as out:
        json.dump(rows, out, indent=2)


if __name__ == "__main__":
    main()
