"""A prange body that reads elements other iterations write (a loop-carried
dependence) is refused naming the line and the array; one whose accesses are
each the iteration's own (a row, an element at the loop's index) runs, as do
stores to an array the body does not read."""

import inspect

import numba as nb
import numpy as np
import pytest
from device_support import offload
from numba import prange

import xpuc


@xpuc.jit
def cholesky(A):
    for i in range(1, A.shape[0]):
        for j in nb.prange(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return A


@xpuc.jit
def smooth_in_place(a):
    for i in prange(1, a.shape[0] - 1):
        a[i] = a[i - 1] + a[i + 1]


@xpuc.jit
def sum_of_all(a):
    for i in prange(a.shape[0]):
        a[i] = np.sum(a)


@xpuc.jit
def transposed_2d(a):
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            a[i, j] = a[j, i] + 1.0


def _line_of(fn, text: str) -> str:
    lines, first = inspect.getsourcelines(fn.py_func)
    return f"test_loop_carried.py:{first + next(k for k, line in enumerate(lines) if text in line)}"


@pytest.mark.parametrize("fn, shape, line", [
    (cholesky, (40, 40), "A[i, j] -= np.dot"),
    (smooth_in_place, (64,), "a[i] = a[i - 1] + a[i + 1]"),
    (sum_of_all, (64,), "a[i] = np.sum(a)"),
    (transposed_2d, (8, 8), "a[i, j] = a[j, i]"),
], ids=["cholesky", "smoothing in place", "whole array read", "nested prange transposed"])
def test_read_of_what_other_iterations_write_is_refused(fn, shape, line):
    with pytest.raises(xpuc.UnsupportedError) as error:
        with xpuc.device_context("opencl:cpu"):
            fn(np.ones(shape))
    message = str(error.value)
    name = "'A'" if fn is cholesky else "'a'"
    assert _line_of(fn, line) in message and name in message
    assert "loop-carried dependence" in message
    assert "$" not in message and "numba" not in message and "xpuc/" not in message


@xpuc.jit
def double(a):
    for i in prange(a.shape[0]):
        a[i] *= 2


@xpuc.jit
def scale_rows(A, s):
    for i in prange(A.shape[0]):
        A[i, :] = A[i, 0] * s[i]


@xpuc.jit
def prefix_sums_of_rows(A):
    for i in prange(A.shape[0]):
        for k in range(A.shape[1] - 1):
            A[i, k + 1] += A[i, k]


@xpuc.jit
def normalize_rows(A):
    for i in prange(A.shape[0]):
        row = A[i]
        total = np.sum(row)
        for k in range(row.shape[0]):
            row[k] = row[k] / total


@xpuc.jit
def blocks_in_place(a):
    # each iteration owns the block of elements its serial loop covers
    for b in prange((a.shape[0] + 3) // 4):
        for j in range(b * 4, min(b * 4 + 4, a.shape[0])):
            a[j] = a[j] * 2 + 1


@xpuc.jit
def add_one_2d(a):
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            a[i, j] = a[i, j] + 1.0


@xpuc.jit
def stencil(a, b):
    for i in prange(1, a.shape[0] - 1):
        b[i] = a[i - 1] + a[i + 1]


@pytest.mark.parametrize("fn, make, want", [
    (double, lambda: np.arange(64.0), lambda a: a * 2),
    (prefix_sums_of_rows, lambda: np.arange(48.0).reshape(6, 8),
     lambda a: np.cumsum(a, axis=1)),
    (normalize_rows, lambda: np.arange(1.0, 49.0).reshape(6, 8),
     lambda a: a / a.sum(axis=1, keepdims=True)),
    (blocks_in_place, lambda: np.arange(30.0), lambda a: a * 2 + 1),
    (add_one_2d, lambda: np.arange(48.0).reshape(6, 8), lambda a: a + 1),
], ids=["a[i] *= 2", "serial loop over a row", "row view", "blocks of a serial loop",
        "nested prange own element"])
def test_accesses_the_iteration_owns_run(fn, make, want):
    a = make()
    expected = want(a.copy())
    offload(fn, a)
    np.testing.assert_allclose(a, expected)


def test_row_update_runs():
    A, s = np.arange(48.0).reshape(6, 8), np.arange(6.0)
    expected = np.repeat(A[:, :1] * s[:, None], 8, axis=1)
    offload(scale_rows, A, s)
    np.testing.assert_allclose(A, expected)


def test_stencil_into_another_array_runs():
    a, b = np.arange(64.0) ** 2, np.zeros(64)
    offload(stencil, a, b)
    np.testing.assert_allclose(b[1:-1], a[:-2] + a[2:])


@xpuc.jit
def scatter(idx, x, out):
    for i in prange(idx.shape[0]):
        out[idx[i]] = x[i]


def test_scatter_without_reads_runs():
    idx = np.random.default_rng(5).permutation(100)
    x, out = np.arange(100.0), np.zeros(100)
    offload(scatter, idx, x, out)
    np.testing.assert_allclose(out[idx], x)
