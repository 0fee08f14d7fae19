"""The suite's workloads (workloads.py) on a CUDA GPU, float32 and float64:
xpuc on NumPy arrays under ``device_context("cuda:0")`` (copied in and out
at each call) and on CuPy arrays (used in place; also compiled with
``fastmath=True``, not a peer), side by side with CuPy's
array expressions, CuPy's ``ElementwiseKernel`` / ``ReductionKernel``,
numba-cuda's explicit kernels and ``torch.compile`` of the array style. Every
result is checked against NumPy (or ``numba.njit`` where the workload has no
NumPy form); what fails, or does not run, is reported with its reason and
the rest goes on. The roof of memory-bound workloads is the device's
measured device-to-device copy bandwidth (bytes read and written).

Steady calls: each implementation warms with two calls, then ``--repeat``
rounds call each once in turn (interleaved), each call waited for; the
median. xpuc on NumPy arrays, whose calls spend tens of ms copying while the
GPU idles, has rounds of its own after the others. Prints a Markdown table,
writes JSON (``--json``) with the GPU, driver and versions. Run from the repository's root as
scripts/cuda-device-tests.sh sets up (``xpuc`` importable):

    python benchmarks/bench_cuda_suite.py [--repeat R] [--only NAME] [--leave-out PATH]
        [--json PATH]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cupy as cp
import numba
import numpy as np
import torch
from workloads import WORKLOADS, Workload

import xpuc

XPUC_NUMPY, XPUC_CUPY = "xpuc, NumPy in device_context", "xpuc, CuPy arrays"
# the same on CuPy arrays, compiled with Numba's fastmath: contracted into
# fused multiply-adds as the peers' kernels are by default (not NumPy's rounding)
XPUC_FASTMATH = "xpuc, CuPy arrays, fastmath=True"
CUPY, CUPY_KERNEL = "CuPy, array style", "CuPy, Elementwise/ReductionKernel"
NUMBA_CUDA, TORCH = "numba-cuda, explicit kernel", "torch.compile"
PEERS = (CUPY, CUPY_KERNEL, NUMBA_CUDA, TORCH)

# the suite's workloads run here, each at a size for an 80 GB GPU (the scale
# of workloads.py's inputs), and whether memory bandwidth bounds it
# (Mandelbrot last: torch.compile unrolls its 100 iterations, the longest compile)
SUITE = {
    "triad": (1.0, True), "Black-Scholes": (4.0, True), "row L2 norms": (1.0, True),
    "pairwise distances": (1.0, False), "Jacobi 2-D, 50 steps": (4.0, True),
    "Jacobi 2-D over rows, 50 steps": (4.0, True),
    "sum of squares": (1.0, True), "k-means assignment": (1.0, True),
    "Mandelbrot": (4.0, False),
}


def _numba_cuda() -> tuple[object | None, str]:
    """numba-cuda's ``cuda`` module and how it compiles, or None and why not.

    numba-cuda 0.30.4 reads ``np.row_stack`` when it compiles a first kernel,
    an alias of ``np.vstack`` that NumPy 2.x removed: where that fails, the
    alias is put back (the same function) and the kernel compiled again, and
    the results say so."""
    try:
        from numba import cuda

        @cuda.jit
        def probe(a):
            a[0] = 1.0
    except Exception as error:  # the reason is what the report shows
        return None, _first_line(error)
    probe_array = cp.zeros(1)
    try:
        probe[1, 1](probe_array)
        return cuda, "numba-cuda"
    except AttributeError as error:
        if "row_stack" not in str(error):
            return None, _first_line(error)
        reason = _first_line(error)
    np.row_stack = np.vstack
    try:
        probe[1, 1](probe_array)
    except Exception as error:
        return None, f"{reason}; with np.row_stack restored: {_first_line(error)}"
    return cuda, f"numba-cuda, with np.row_stack = np.vstack restored ({reason})"


def _first_line(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    return text.splitlines()[0][:300]


cuda, NUMBA_CUDA_NOTE = _numba_cuda()


def synchronize() -> None:
    cp.cuda.Device().synchronize()


# ---- the peers' implementations, by workload: (make(args on device) -> call) ---------

def _kernel_launch(n: int, threads: int = 256) -> tuple[int, int]:
    return (n + threads - 1) // threads, threads


def _triad():
    kernel = cp.ElementwiseKernel("T b, T c, T s", "T a", "a = b + s * c", "xpuc_triad")

    def numba_kernel():
        @cuda.jit
        def triad(a, b, c, s):
            i = cuda.grid(1)
            if i < a.shape[0]:
                a[i] = b[i] + s * c[i]
        return triad

    def with_cupy(a, b, c, s):
        def run():
            a[...] = b + s * c
        return run

    def with_kernel(a, b, c, s):
        return lambda: kernel(b, c, a.dtype.type(s), a)

    def with_numba(a, b, c, s):
        k = numba_kernel()
        blocks, threads = _kernel_launch(a.size)
        return lambda: k[blocks, threads](a, b, c, a.dtype.type(s))

    def with_torch(a, b, c, s):
        fn = torch.compile(lambda a, b, c: a.copy_(b + s * c))
        tensors = [torch.as_tensor(x) for x in (a, b, c)]
        return lambda: fn(*tensors)

    return with_cupy, with_kernel, with_numba, with_torch


def _black_scholes():
    from cupyx.scipy.special import erf

    body = """
    T sqrt_t = sqrt(t);
    T d1 = (log(price / strike) + (rate + (T)0.5 * vol * vol) * t) / (vol * sqrt_t);
    T d2 = d1 - vol * sqrt_t;
    T cdf_d1 = (T)0.5 + (T)0.5 * erf(d1 / sqrt((T)2.0));
    T cdf_d2 = (T)0.5 + (T)0.5 * erf(d2 / sqrt((T)2.0));
    T discounted = strike * exp(-rate * t);
    call = price * cdf_d1 - discounted * cdf_d2;
    put = discounted * ((T)1.0 - cdf_d2) - price * ((T)1.0 - cdf_d1);
    """
    kernel = cp.ElementwiseKernel("T price, T strike, T t, T rate, T vol", "T call, T put",
                                  body, "xpuc_black_scholes")

    def numba_kernel():
        @cuda.jit
        def black_scholes(price, strike, t, rate, vol, call, put):
            i = cuda.grid(1)
            if i < price.shape[0]:
                sqrt_t = math.sqrt(t[i])
                d1 = (math.log(price[i] / strike[i]) + (rate + 0.5 * vol * vol) * t[i]) / (
                    vol * sqrt_t)
                d2 = d1 - vol * sqrt_t
                cdf_d1 = 0.5 + 0.5 * math.erf(d1 / math.sqrt(2.0))
                cdf_d2 = 0.5 + 0.5 * math.erf(d2 / math.sqrt(2.0))
                discounted = strike[i] * math.exp(-rate * t[i])
                call[i] = price[i] * cdf_d1 - discounted * cdf_d2
                put[i] = discounted * (1.0 - cdf_d2) - price[i] * (1.0 - cdf_d1)
        return black_scholes

    def array_style(xp, erf_fn, price, strike, t, rate, vol):
        sqrt_t = xp.sqrt(t)
        d1 = (xp.log(price / strike) + (rate + 0.5 * vol * vol) * t) / (vol * sqrt_t)
        d2 = d1 - vol * sqrt_t
        cdf_d1 = 0.5 + 0.5 * erf_fn(d1 / math.sqrt(2.0))
        cdf_d2 = 0.5 + 0.5 * erf_fn(d2 / math.sqrt(2.0))
        discounted = strike * xp.exp(-rate * t)
        return (price * cdf_d1 - discounted * cdf_d2,
                discounted * (1.0 - cdf_d2) - price * (1.0 - cdf_d1))

    def with_cupy(price, strike, t, rate, vol, call, put):
        def run():
            call[...], put[...] = array_style(cp, erf, price, strike, t, rate, vol)
        return run

    def with_kernel(price, strike, t, rate, vol, call, put):
        scalar = price.dtype.type
        return lambda: kernel(price, strike, t, scalar(rate), scalar(vol), call, put)

    def with_numba(price, strike, t, rate, vol, call, put):
        k = numba_kernel()
        blocks, threads = _kernel_launch(price.size)
        return lambda: k[blocks, threads](price, strike, t, rate, vol, call, put)

    def with_torch(price, strike, t, rate, vol, call, put):
        def both(p, k, tt, c, q):
            new_call, new_put = array_style(torch, torch.erf, p, k, tt, rate, vol)
            c.copy_(new_call)
            q.copy_(new_put)

        fn = torch.compile(both)
        tensors = [torch.as_tensor(x) for x in (price, strike, t, call, put)]
        return lambda: fn(*tensors)

    return with_cupy, with_kernel, with_numba, with_torch


def _row_norms():
    kernel = cp.ElementwiseKernel(
        "raw T a, int64 cols", "T out",
        "T s = 0; for (long long j = 0; j < cols; j++) { T x = a[i * cols + j]; s += x * x; }"
        " out = sqrt(s);", "xpuc_row_norms")

    def numba_kernel():
        @cuda.jit
        def row_norms(a, out):
            i = cuda.grid(1)
            if i < a.shape[0]:
                total = 0.0
                for j in range(a.shape[1]):
                    total += a[i, j] * a[i, j]
                out[i] = math.sqrt(total)
        return row_norms

    def with_cupy(a, out):
        def run():
            out[...] = cp.sqrt((a * a).sum(axis=1))
        return run

    def with_kernel(a, out):
        return lambda: kernel(a, a.shape[1], out)

    def with_numba(a, out):
        k = numba_kernel()
        blocks, threads = _kernel_launch(out.size)
        return lambda: k[blocks, threads](a, out)

    def with_torch(a, out):
        fn = torch.compile(lambda x, o: o.copy_(torch.sqrt((x * x).sum(dim=1))))
        ta, tout = torch.as_tensor(a), torch.as_tensor(out)
        return lambda: fn(ta, tout)

    return with_cupy, with_kernel, with_numba, with_torch


def _pairwise():
    kernel = cp.ElementwiseKernel(
        "raw T p, int64 n, int64 d", "T out",
        "long long r = i / n, c = i % n; T s = 0;"
        " for (long long k = 0; k < d; k++) { T x = p[r * d + k] - p[c * d + k]; s += x * x; }"
        " out = sqrt(s);", "xpuc_pairwise")

    def numba_kernel():
        @cuda.jit
        def pairwise(points, out):
            i, j = cuda.grid(2)
            if i < out.shape[0] and j < out.shape[1]:
                total = 0.0
                for k in range(points.shape[1]):
                    d = points[i, k] - points[j, k]
                    total += d * d
                out[i, j] = math.sqrt(total)
        return pairwise

    def with_cupy(p, out):
        def run():
            out[...] = cp.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1))
        return run

    def with_kernel(p, out):
        return lambda: kernel(p, p.shape[0], p.shape[1], out)

    def with_numba(p, out):
        k = numba_kernel()
        n = out.shape[0]
        blocks = ((n + 15) // 16, (n + 15) // 16)
        return lambda: k[blocks, (16, 16)](p, out)

    def with_torch(p, out):
        fn = torch.compile(
            lambda x, o: o.copy_(torch.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))))
        tp, tout = torch.as_tensor(p), torch.as_tensor(out)
        return lambda: fn(tp, tout)

    return with_cupy, with_kernel, with_numba, with_torch


def _jacobi():
    kernel = cp.ElementwiseKernel(
        "raw T grid, int64 n", "raw T other",
        "long long r = i / (n - 2) + 1, c = i % (n - 2) + 1;"
        " other[r * n + c] = (T)0.25 * (grid[(r - 1) * n + c] + grid[(r + 1) * n + c]"
        " + grid[r * n + c - 1] + grid[r * n + c + 1]);", "xpuc_jacobi")

    def numba_kernel():
        @cuda.jit
        def step(grid, other):
            i, j = cuda.grid(2)
            if 1 <= i < grid.shape[0] - 1 and 1 <= j < grid.shape[1] - 1:
                other[i, j] = 0.25 * (grid[i - 1, j] + grid[i + 1, j]
                                      + grid[i, j - 1] + grid[i, j + 1])
        return step

    # the workload's function returns the grid after ``steps``; each peer
    # returns it too (the last one written), which the check reads

    def with_cupy(grid, steps):
        def run():
            g, other = grid, grid * 1.0
            for _ in range(steps):
                other[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1]
                                            + g[1:-1, :-2] + g[1:-1, 2:])
                g, other = other, g
            return g
        return run

    def with_kernel(grid, steps):
        n = grid.shape[0]

        def run():
            g, other = grid, grid * 1.0
            for _ in range(steps):
                kernel(g, n, other, size=(n - 2) * (n - 2))
                g, other = other, g
            return g
        return run

    def with_numba(grid, steps):
        k = numba_kernel()
        n = grid.shape[0]
        blocks = ((n + 15) // 16, (n + 15) // 16)

        def run():
            g, other = grid, grid * 1.0
            for _ in range(steps):
                k[blocks, (16, 16)](g, other)
                g, other = other, g
            return g
        return run

    def with_torch(grid, steps):
        # one step compiled, called ``steps`` times: compiling the unrolled
        # loop of 50 steps takes minutes
        @torch.compile
        def step(g, other):
            other[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])

        tgrid = torch.as_tensor(grid)

        def run():
            g, other = tgrid, tgrid * 1.0
            for _ in range(steps):
                step(g, other)
                g, other = other, g
            return cp.asarray(g)
        return run

    return with_cupy, with_kernel, with_numba, with_torch


def _mandelbrot():
    kernel = cp.ElementwiseKernel(
        "float64 x0, float64 y0, float64 dx, float64 dy, int32 max_iterations, int64 cols",
        "int32 out",
        "long long r = i / cols, c = i % cols; double cx = x0 + c * dx, cy = y0 + r * dy;"
        " double x = 0, y = 0; int n = 0;"
        " while (n < max_iterations && x * x + y * y <= 4.0) {"
        " double t = x * x - y * y + cx; y = 2.0 * x * y + cy; x = t; n++; }"
        " out = n;", "xpuc_mandelbrot")

    def numba_kernel():
        @cuda.jit
        def mandelbrot(out, x0, y0, dx, dy, max_iterations):
            i, j = cuda.grid(2)
            if i < out.shape[0] and j < out.shape[1]:
                cx, cy = x0 + j * dx, y0 + i * dy
                x = y = 0.0
                n = 0
                while n < max_iterations and x * x + y * y <= 4.0:
                    x, y = x * x - y * y + cx, 2.0 * x * y + cy
                    n += 1
                out[i, j] = n
        return mandelbrot

    def array_style(xp, out, x0, y0, dx, dy, max_iterations):
        rows, cols = out.shape
        cx = x0 + xp.arange(cols)[None, :] * dx + xp.zeros((rows, 1))
        cy = y0 + xp.arange(rows)[:, None] * dy + xp.zeros((1, cols))
        x, y = xp.zeros_like(cx), xp.zeros_like(cy)
        count = xp.zeros(out.shape, dtype=xp.int32)
        for _ in range(max_iterations):
            inside = x * x + y * y <= 4.0
            x, y = (xp.where(inside, x * x - y * y + cx, x),
                    xp.where(inside, 2.0 * x * y + cy, y))
            count += inside
        return count

    def with_cupy(out, x0, y0, dx, dy, max_iterations):
        def run():
            out[...] = array_style(cp, out, x0, y0, dx, dy, max_iterations)
        return run

    def with_kernel(out, x0, y0, dx, dy, max_iterations):
        return lambda: kernel(x0, y0, dx, dy, max_iterations, out.shape[1], out)

    def with_numba(out, x0, y0, dx, dy, max_iterations):
        k = numba_kernel()
        blocks = ((out.shape[0] + 15) // 16, (out.shape[1] + 15) // 16)
        return lambda: k[blocks, (16, 16)](out, x0, y0, dx, dy, max_iterations)

    def with_torch(out, x0, y0, dx, dy, max_iterations):
        tout = torch.as_tensor(out)
        fn = torch.compile(
            lambda o: o.copy_(array_style(torch, o, x0, y0, dx, dy, max_iterations)))
        return lambda: fn(tout)

    return with_cupy, with_kernel, with_numba, with_torch


def _sum_of_squares():
    kernel = cp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0",
                                "xpuc_sum_of_squares")

    def numba_kernel():
        @cuda.jit
        def sum_of_squares(a, out):
            # a grid-strided share per thread, a tree in shared memory per
            # block, one atomic add per block
            partial = cuda.shared.array(256, numba.float64)
            total = 0.0
            start, stride = cuda.grid(1), cuda.gridsize(1)
            for i in range(start, a.shape[0], stride):
                total += a[i] * a[i]
            t = cuda.threadIdx.x
            partial[t] = total
            cuda.syncthreads()
            half = 128
            while half:
                if t < half:
                    partial[t] += partial[t + half]
                cuda.syncthreads()
                half //= 2
            if t == 0:
                cuda.atomic.add(out, 0, partial[0])
        return sum_of_squares

    def with_cupy(a):
        return lambda: (a * a).sum()

    def with_kernel(a):
        return lambda: kernel(a)

    def with_numba(a):
        k = numba_kernel()
        out = cp.zeros(1, np.float64)
        blocks = cp.cuda.Device().attributes["MultiProcessorCount"] * 8

        def run():
            out[0] = 0
            k[blocks, 256](a, out)
            return out[0]
        return run

    def with_torch(a):
        fn = torch.compile(lambda x: (x * x).sum())
        ta = torch.as_tensor(a)
        return lambda: cp.asarray(fn(ta))

    return with_cupy, with_kernel, with_numba, with_torch


def _kmeans():
    kernel = cp.ElementwiseKernel(
        "raw T points, raw T centroids, int64 k, int64 d", "int64 label",
        "long long best = 0; T best_distance = 0;"
        " for (long long c = 0; c < k; c++) { T distance = 0;"
        " for (long long j = 0; j < d; j++) {"
        " T x = points[i * d + j] - centroids[c * d + j]; distance += x * x; }"
        " if (c == 0 || distance < best_distance) { best = c; best_distance = distance; } }"
        " label = best;", "xpuc_kmeans")

    def numba_kernel():
        @cuda.jit
        def assign(points, centroids, labels):
            i = cuda.grid(1)
            if i < points.shape[0]:
                best, best_distance = 0, math.inf
                for c in range(centroids.shape[0]):
                    distance = 0.0
                    for k in range(points.shape[1]):
                        d = points[i, k] - centroids[c, k]
                        distance += d * d
                    if distance < best_distance:
                        best, best_distance = c, distance
                labels[i] = best
        return assign

    def with_cupy(points, centroids, labels):
        def run():
            labels[...] = ((points[:, None, :] - centroids[None]) ** 2).sum(-1).argmin(1)
        return run

    def with_kernel(points, centroids, labels):
        return lambda: kernel(points, centroids, centroids.shape[0], points.shape[1], labels)

    def with_numba(points, centroids, labels):
        k = numba_kernel()
        blocks, threads = _kernel_launch(labels.size)
        return lambda: k[blocks, threads](points, centroids, labels)

    def with_torch(points, centroids, labels):
        fn = torch.compile(
            lambda p, c, labels: labels.copy_(((p[:, None, :] - c[None]) ** 2).sum(-1).argmin(1)))
        tensors = [torch.as_tensor(x) for x in (points, centroids, labels)]
        return lambda: fn(*tensors)

    return with_cupy, with_kernel, with_numba, with_torch


PEER_IMPLEMENTATIONS: dict[str, Callable] = {
    "triad": _triad, "Black-Scholes": _black_scholes, "row L2 norms": _row_norms,
    "pairwise distances": _pairwise, "Jacobi 2-D, 50 steps": _jacobi,
    # the same stencil as a prange over rows: the peers' Jacobi
    "Jacobi 2-D over rows, 50 steps": _jacobi,
    "Mandelbrot": _mandelbrot, "sum of squares": _sum_of_squares,
    "k-means assignment": _kmeans,
}


# ---- running, checking, timing ---------------------------------------------------------

@dataclass
class Outcome:
    workload: str
    dtype: str
    path: str
    ms: float | None = None
    gb_s: float | None = None
    checked: bool = False
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def _as_dtype(args: tuple, dtype: type) -> tuple:
    """The inputs with their float arrays in ``dtype`` (integers, scalars as they are)."""
    return tuple(a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                 for a in args)


def _results(workload: Workload, args: tuple, returned: object) -> list[np.ndarray]:
    values = ([args[i] for i in workload.outputs] if workload.outputs
              else list(returned) if isinstance(returned, tuple) else [returned])
    return [cp.asnumpy(v) if isinstance(v, cp.ndarray) else
            v.cpu().numpy() if isinstance(v, torch.Tensor) else np.asarray(v) for v in values]


def _reference(workload: Workload, args: tuple) -> list[np.ndarray]:
    """NumPy's result (numba.njit's where the workload has no NumPy form), in
    float64 from the same inputs."""
    wide = _as_dtype(args, np.float64)
    fresh = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in wide)
    if workload.reference is not None:
        returned = workload.reference(*fresh)
        return [np.asarray(v) for v in returned]
    returned = numba.njit(workload.function)(*fresh)
    return _results(workload, fresh, returned)


def _agrees(name: str, got: list[np.ndarray], want: list[np.ndarray], dtype: type) -> str | None:
    """None if ``got`` is ``want`` to the precision of ``dtype``, else what differs."""
    rtol = 2e-4 if dtype == np.float32 else 1e-9
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"shape {g.shape}, expected {w.shape}"
        if w.dtype.kind in "iu":
            # Mandelbrot's counts and k-means' labels: a point on a boundary
            # may go either way when rounding differs (contracted fmas)
            wrong = np.count_nonzero(g != w) / max(w.size, 1)
            if wrong > 1e-3:
                return f"{wrong:.2%} of the integers differ"
        elif not np.allclose(g, w, rtol=rtol, atol=rtol * float(np.max(np.abs(w), initial=0))):
            return f"max relative difference {np.max(np.abs(g - w) / (np.abs(w) + 1e-300)):.2e}"
    return None


def _median_ms(calls: dict[str, Callable], repeat: int) -> dict[str, float]:
    """Each call's median milliseconds, the calls interleaved round by round."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            synchronize()
            start = time.perf_counter()
            call()
            synchronize()
            times[name].append((time.perf_counter() - start) * 1e3)
    return {name: statistics.median(values) for name, values in times.items()}


def copy_roof_gb_s(nbytes: int = 1 << 30, repeat: int = 20) -> float:
    """The device-to-device copy bandwidth, bytes read plus written."""
    src = cp.ones(nbytes // 8, np.float64)
    dst = cp.empty_like(src)
    ms = _median_ms({"copy": lambda: cp.copyto(dst, src)}, repeat)["copy"]
    return 2 * src.nbytes / ms / 1e6


def run_workload(workload: Workload, dtype: type, scale: float, memory_bound: bool,
                 repeat: int, leave_out: frozenset[str] = frozenset()) -> list[Outcome]:
    rng = np.random.default_rng(2026)
    host_args = _as_dtype(workload.make_inputs(rng, scale), dtype)
    want = _reference(workload, host_args)
    name_of_dtype = np.dtype(dtype).name
    streamed = workload.streamed_bytes(host_args) if workload.streamed_bytes else None
    if streamed is None and memory_bound:
        streamed = sum(a.nbytes for a in host_args if isinstance(a, np.ndarray))
        if workload.name.startswith("Jacobi"):  # each step reads and writes the grid
            streamed = 2 * host_args[0].nbytes * host_args[1]
    outcomes: dict[str, Outcome] = {}
    calls: dict[str, Callable] = {}

    def prepare(path: str, make: Callable[[], tuple[Callable, tuple]]) -> None:
        """Build the path's call, run it once and check its result."""
        outcome = outcomes[path] = Outcome(workload.name, name_of_dtype, path)
        if path in leave_out:
            outcome.error = "left out (--leave-out)"
            return
        started = time.perf_counter()
        try:
            call, args = make()
            returned = call()
            synchronize()
            difference = _agrees(workload.name, _results(workload, args, returned), want, dtype)
            if difference is not None:
                outcome.error = f"wrong result: {difference}"
                return
            outcome.checked = True
            call()  # the second warm call
            synchronize()
            calls[path] = call
        except Exception as error:  # the report says what failed, and the suite goes on
            outcome.error = _first_line(error)
            traceback.print_exc(limit=3)
        finally:  # a compile that takes minutes shows where the time goes
            print(f"  {path}: built, run and checked in {time.perf_counter() - started:.1f} s",
                  file=sys.stderr, flush=True)

    offloaded = xpuc.jit(workload.function)

    def xpuc_numpy():
        args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in host_args)

        def call():
            with xpuc.device_context("cuda:0"):
                return offloaded(*args)
        return call, args

    def device_args() -> tuple:
        return tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in host_args)

    def xpuc_cupy(function=offloaded):
        args = device_args()
        return lambda: function(*args), args

    prepare(XPUC_NUMPY, xpuc_numpy)
    prepare(XPUC_CUPY, xpuc_cupy)
    prepare(XPUC_FASTMATH, lambda: xpuc_cupy(xpuc.jit(fastmath=True)(workload.function)))
    makers = PEER_IMPLEMENTATIONS[workload.name]()
    for path, maker in zip(PEERS, makers):
        if path == NUMBA_CUDA and cuda is None:
            outcomes[path] = Outcome(workload.name, name_of_dtype, path,
                                     error=f"numba-cuda unavailable: {NUMBA_CUDA_NOTE}")
            continue

        def make(maker=maker):
            args = device_args()
            return maker(*args), args
        prepare(path, make)
        if path == NUMBA_CUDA:
            outcomes[path].notes.append(NUMBA_CUDA_NOTE)
    # the NumPy path's calls copy through pageable memory for tens of ms
    # while the GPU idles, and the call after one of them ran slower (a 40M
    # triad on CuPy arrays on an H100: 397 us, against 231 us after itself),
    # so that path is timed in rounds of its own
    host_bound = {path: calls.pop(path) for path in (XPUC_NUMPY,) if path in calls}
    for path, ms in {**_median_ms(calls, repeat), **_median_ms(host_bound, repeat)}.items():
        outcomes[path].ms = ms
        if streamed is not None and memory_bound:
            outcomes[path].gb_s = streamed / ms / 1e6
    return list(outcomes.values())


def versions() -> dict[str, str]:
    found = {"python": sys.version.split()[0]}
    for package in ("numpy", "numba", "numba-cuda", "cupy-cuda13x", "torch", "triton"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    found["cuda runtime"] = str(cp.cuda.runtime.runtimeGetVersion())
    found["cuda driver api"] = str(cp.cuda.runtime.driverGetVersion())
    # a copy of the tree inside another repository would name that one's commit
    root = Path(__file__).resolve().parent.parent
    found["xpuc commit"] = "unknown (not a git checkout)"
    if (root / ".git").exists():
        found["xpuc commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
            cwd=root).stdout.strip()
    return found


def gpu() -> dict[str, str]:
    query = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                            "--format=csv,noheader"], capture_output=True, text=True)
    name, driver, memory = ([part.strip() for part in query.stdout.splitlines()[0].split(",")]
                            if query.returncode == 0 else ("?", "?", "?"))
    properties = cp.cuda.runtime.getDeviceProperties(0)
    return {"name": name, "driver": driver, "memory": memory,
            "multiprocessors": str(properties["multiProcessorCount"]),
            "compute capability": f"{properties['major']}.{properties['minor']}"}


def table(outcomes: list[Outcome], roof: float) -> str:
    lines = ["| workload | dtype | path | ms | GB/s | % of copy roof | vs best peer | check |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    by_case: dict[tuple[str, str], list[Outcome]] = {}
    for outcome in outcomes:
        by_case.setdefault((outcome.workload, outcome.dtype), []).append(outcome)
    for case in by_case.values():
        peers = [o.ms for o in case if o.path in PEERS and o.ms is not None]
        best = min(peers) if peers else None
        for o in case:
            if o.ms is None:
                lines.append(f"| {o.workload} | {o.dtype} | {o.path} | – | – | – | – | "
                             f"{o.error} |")
                continue
            ratio = f"{best / o.ms:.2f}x" if best else "–"
            gb = f"{o.gb_s:.0f}" if o.gb_s else "–"
            roof_share = f"{100 * o.gb_s / roof:.0f}%" if o.gb_s else "–"
            lines.append(f"| {o.workload} | {o.dtype} | {o.path} | {o.ms:.3f} | {gb} | "
                         f"{roof_share} | {ratio} | ok |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--only", action="append", help="a workload's name (repeatable)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--leave-out", action="append", default=[],
                        choices=[XPUC_NUMPY, XPUC_CUPY, XPUC_FASTMATH, *PEERS],
                        help="a path not to run (repeatable)")
    # float32 alone: for a process run under XPUC_FP64=0, where xpuc types Python
    # floats as float32 (NumPy 2's weak scalars) and refuses float64
    parser.add_argument("--dtype", action="append", choices=["float32", "float64"],
                        help="only this precision (repeatable; both by default)")
    options = parser.parse_args()
    precisions = [np.dtype(name).type for name in options.dtype or ("float32", "float64")]
    record = {"gpu": gpu(), "versions": versions(), "numba-cuda": NUMBA_CUDA_NOTE,
              "repeat": options.repeat, "roof_gb_s": copy_roof_gb_s(), "results": []}
    print(json.dumps({k: v for k, v in record.items() if k != "results"}, indent=1), flush=True)
    outcomes: list[Outcome] = []
    by_name = {workload.name: workload for workload in WORKLOADS}
    for name, (scale, memory_bound) in SUITE.items():
        if options.only and name not in options.only:
            continue
        workload = by_name[name]
        inputs = workload.make_inputs(np.random.default_rng(0), 1e-6)
        # a workload of no float arrays (Mandelbrot: scalars in, counts out)
        # is the same in both
        floats = any(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in inputs)
        for dtype in precisions if floats else (np.float64,):
            started = time.perf_counter()
            found = run_workload(workload, dtype, scale, memory_bound, options.repeat,
                                 frozenset(options.leave_out))
            outcomes += found
            print(f"{workload.name} {np.dtype(dtype).name}: "
                  f"{time.perf_counter() - started:.1f} s", flush=True)
            record["results"] = [vars(o) for o in outcomes]
            if options.json:
                options.json.write_text(json.dumps(record, indent=1))
    print(table(outcomes, record["roof_gb_s"]))


if __name__ == "__main__":
    main()
