"""The benchmark suite's workloads, as a user writes them: plain NumPy array
expressions and ``prange`` loops, with no xpuc in sight (each implementation
compiles the same Python functions its own way). Each ``Workload`` makes its
inputs at a size, says which arguments are outputs, and checks a result
against NumPy."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import prange


def triad(a, b, c, scalar):
    for i in prange(a.shape[0]):
        a[i] = b[i] + scalar * c[i]


def fused_expression(x, y):
    return np.exp(-x * x) * np.sin(3.0 * x) + np.sqrt(np.abs(y)) * 0.5


def black_scholes(price, strike, t, rate, vol, call, put):
    for i in prange(price.shape[0]):
        sqrt_t = math.sqrt(t[i])
        d1 = (math.log(price[i] / strike[i]) + (rate + 0.5 * vol * vol) * t[i]) / (vol * sqrt_t)
        d2 = d1 - vol * sqrt_t
        cdf_d1 = 0.5 + 0.5 * math.erf(d1 / math.sqrt(2.0))
        cdf_d2 = 0.5 + 0.5 * math.erf(d2 / math.sqrt(2.0))
        discounted = strike[i] * math.exp(-rate * t[i])
        call[i] = price[i] * cdf_d1 - discounted * cdf_d2
        put[i] = discounted * (1.0 - cdf_d2) - price[i] * (1.0 - cdf_d1)


def row_norms(a, out):
    for i in prange(a.shape[0]):
        total = 0.0
        for j in range(a.shape[1]):
            total += a[i, j] * a[i, j]
        out[i] = math.sqrt(total)


def pairwise_distances(points, out):
    for i in prange(points.shape[0]):
        for j in range(points.shape[0]):
            total = 0.0
            for k in range(points.shape[1]):
                d = points[i, k] - points[j, k]
                total += d * d
            out[i, j] = math.sqrt(total)


def jacobi(grid, steps):
    # a copy as an array expression runs where the data is (grid.copy() and
    # other[:] = grid are host copies, which device memory does not allow)
    other = grid * 1.0
    for _ in range(steps):
        other[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                    + grid[1:-1, :-2] + grid[1:-1, 2:])
        grid, other = other, grid
    return grid


def jacobi_rows(grid, steps):
    # the same stencil as a prange over rows, each walking its columns; the
    # rows counted from 0 (numba-dpex 0.23 runs prange(1, n - 1) from 0)
    other = grid * 1.0
    for _ in range(steps):
        for r in prange(grid.shape[0] - 2):
            i = r + 1
            for j in range(1, grid.shape[1] - 1):
                other[i, j] = 0.25 * (grid[i - 1, j] + grid[i + 1, j]
                                      + grid[i, j - 1] + grid[i, j + 1])
        grid, other = other, grid
    return grid


def four_steps(a):
    # four parfors one after another on one array: a call's fixed cost per
    # launch (benchmarks/suite.py's host overheads, tests/test_call_round_trips.py)
    for i in prange(a.shape[0]):
        a[i] += 1.0
    for i in prange(a.shape[0]):
        a[i] *= 2.0
    for i in prange(a.shape[0]):
        a[i] -= 3.0
    for i in prange(a.shape[0]):
        a[i] *= 0.5


def heat_1d(u, steps):
    # explicit Euler steps of the heat equation, the ends held fixed
    other = u * 1.0
    for _ in range(steps):
        for i in prange(1, u.shape[0] - 1):
            other[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, other = other, u
    return u


def _heat_1d_slices(u, steps):
    """heat_1d in NumPy slices (its loop in Python would take minutes)."""
    other = u.copy()
    for _ in range(steps):
        other[1:-1] = u[1:-1] + 0.25 * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        u, other = other, u
    return u


def mandelbrot(out, x0, y0, dx, dy, max_iterations):
    for i in prange(out.shape[0]):
        for j in range(out.shape[1]):
            cx, cy = x0 + j * dx, y0 + i * dy
            x = y = 0.0
            n = 0
            while n < max_iterations and x * x + y * y <= 4.0:
                x, y = x * x - y * y + cx, 2.0 * x * y + cy
                n += 1
            out[i, j] = n


def sum_of_squares(a):
    total = 0.0
    for i in prange(a.shape[0]):
        total += a[i] * a[i]
    return total


def min_max(a):
    low, high = np.inf, -np.inf
    for i in prange(a.shape[0]):
        low = min(low, a[i])
        high = max(high, a[i])
    return low, high


def kmeans_assign(points, centroids, labels):
    for i in prange(points.shape[0]):
        best, best_distance = 0, np.inf
        for c in range(centroids.shape[0]):
            distance = 0.0
            for k in range(points.shape[1]):
                d = points[i, k] - centroids[c, k]
                distance += d * d
            if distance < best_distance:
                best, best_distance = c, distance
        labels[i] = best


def kmeans_update(points, labels, centroids):
    # a prange over the k centroids (few), each a pass over every point (many)
    for c in prange(centroids.shape[0]):
        count = 0
        for k in range(points.shape[1]):
            centroids[c, k] = 0.0
        for i in range(points.shape[0]):
            if labels[i] == c:
                count += 1
                for k in range(points.shape[1]):
                    centroids[c, k] += points[i, k]
        for k in range(points.shape[1]):
            centroids[c, k] /= max(count, 1)


def kmeans_step(points, centroids, labels, new_centroids):
    for i in prange(points.shape[0]):
        best, best_distance = 0, np.inf
        for c in range(centroids.shape[0]):
            distance = 0.0
            for k in range(points.shape[1]):
                d = points[i, k] - centroids[c, k]
                distance += d * d
            if distance < best_distance:
                best, best_distance = c, distance
        labels[i] = best
    for c in prange(new_centroids.shape[0]):
        count = 0
        for k in range(points.shape[1]):
            new_centroids[c, k] = 0.0
        for i in range(points.shape[0]):
            if labels[i] == c:
                count += 1
                for k in range(points.shape[1]):
                    new_centroids[c, k] += points[i, k]
        for k in range(points.shape[1]):
            new_centroids[c, k] /= max(count, 1)


def _centroid_means(points, labels, k):
    """kmeans_update's result in NumPy."""
    sums = np.zeros((k, points.shape[1]))
    np.add.at(sums, labels, points)
    return sums / np.maximum(np.bincount(labels, minlength=k), 1)[:, None]


def _nearest(points, centroids):
    return ((points[:, None, :] - centroids[None]) ** 2).sum(-1).argmin(1)


@dataclass(frozen=True)
class Workload:
    name: str
    function: Callable
    # (rng, scale) -> the call's arguments; ``outputs`` are positions the call writes
    make_inputs: Callable[[np.random.Generator, float], tuple]
    outputs: tuple[int, ...]
    # NumPy: arguments -> the expected result (returned values, or the outputs);
    # None: the result of numba.njit (where NumPy has no same-precision form)
    reference: Callable | None
    streamed_bytes: Callable[[tuple], int] | None = None  # bytes a pass reads + writes
    rtol: float = 1e-9


def _n(base: int, scale: float) -> int:
    return max(int(base * scale), 64)


def _black_scholes_inputs(rng, scale):
    n = _n(4_000_000, scale)
    return (rng.uniform(10, 50, n), rng.uniform(10, 50, n), rng.uniform(0.25, 2, n), 0.02, 0.3,
            np.empty(n), np.empty(n))


def _kmeans_points(rng, scale):
    return rng.random((_n(4_000_000, scale), 4))


def _mandelbrot_inputs(rng, scale):
    rows = _n(1024, math.sqrt(scale))
    cols = rows * 3 // 2
    return np.zeros((rows, cols), np.int32), -2.0, -1.0, 3.0 / cols, 2.0 / rows, 100


WORKLOADS: tuple[Workload, ...] = (
    Workload("triad", triad,
             lambda rng, s: (np.empty(_n(40_000_000, s)), rng.random(_n(40_000_000, s)),
                             rng.random(_n(40_000_000, s)), 3.0),
             (0,), lambda a, b, c, s: (b + s * c,),
             streamed_bytes=lambda args: 3 * args[0].nbytes),
    Workload("fused expression", fused_expression,
             lambda rng, s: (rng.random(_n(20_000_000, s)), rng.random(_n(20_000_000, s))),
             (), lambda x, y: (np.exp(-x * x) * np.sin(3 * x) + np.sqrt(np.abs(y)) * 0.5,),
             streamed_bytes=lambda args: 3 * args[0].nbytes),
    Workload("Black-Scholes", black_scholes, _black_scholes_inputs, (5, 6), None),
    Workload("row L2 norms", row_norms,
             lambda rng, s: (rng.random((_n(20_000_000, s), 3)), np.empty(_n(20_000_000, s))),
             (1,), lambda a, out: (np.sqrt((a * a).sum(axis=1)),),
             streamed_bytes=lambda args: args[0].nbytes + args[1].nbytes),
    Workload("pairwise distances", pairwise_distances,
             lambda rng, s: (rng.random((_n(4096, math.sqrt(s)), 16)),
                             np.empty((_n(4096, math.sqrt(s)),) * 2)),
             (1,), lambda p, out: (np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1)),)),
    Workload("Jacobi 2-D, 50 steps", jacobi,
             lambda rng, s: (rng.random((_n(1024, math.sqrt(s)),) * 2), 50),
             (), lambda g, steps: (jacobi(g.copy(), steps),)),
    Workload("Jacobi 2-D over rows, 50 steps", jacobi_rows,
             lambda rng, s: (rng.random((_n(1024, math.sqrt(s)),) * 2), 50),
             (), lambda g, steps: (jacobi(g.copy(), steps),)),
    Workload("heat 1-D, 10 steps", heat_1d,
             lambda rng, s: (rng.random(_n(16_000_000, s)), 10),
             (), lambda u, steps: (_heat_1d_slices(u, steps),),
             streamed_bytes=lambda args: 2 * (args[1] + 1) * args[0].nbytes),
    Workload("Mandelbrot", mandelbrot, _mandelbrot_inputs, (0,), None),
    Workload("sum of squares", sum_of_squares, lambda rng, s: (rng.random(_n(80_000_000, s)),),
             (), lambda a: (np.dot(a, a),), streamed_bytes=lambda args: args[0].nbytes,
             rtol=1e-8),
    Workload("min/max", min_max, lambda rng, s: (rng.standard_normal(_n(40_000_000, s)),),
             (), lambda a: (a.min(), a.max()), streamed_bytes=lambda args: args[0].nbytes),
    Workload("k-means assignment", kmeans_assign,
             lambda rng, s: (rng.random((_n(4_000_000, s), 4)), rng.random((8, 4)),
                             np.empty(_n(4_000_000, s), np.int64)),
             (2,), lambda p, c, labels: (_nearest(p, c),)),
    Workload("k-means update", kmeans_update,
             lambda rng, s: (_kmeans_points(rng, s),
                             rng.integers(0, 8, _n(4_000_000, s)), np.empty((8, 4))),
             (2,), lambda p, labels, c: (_centroid_means(p, labels, 8),)),
    Workload("k-means step", kmeans_step,
             lambda rng, s: (_kmeans_points(rng, s), rng.random((8, 4)),
                             np.empty(_n(4_000_000, s), np.int64), np.empty((8, 4))),
             (2, 3), lambda p, c, labels, new: (
                 _nearest(p, c), _centroid_means(p, _nearest(p, c), 8))),
)
