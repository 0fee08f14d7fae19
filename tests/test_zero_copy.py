"""NumPy arguments inside a device context on a device that can use host
memory (SPEC rule 5; the CPU device has ``usm_system_allocations``): kernels
take the arrays' own memory, so nothing is allocated or copied, and every
write is in the arrays when the call returns. The copying path, which other
devices need, is tests/test_residency.py."""

import numba
import numpy as np
import pytest
from device_support import DEVICE

import xpuc


def run_in_place(fn, *args):
    """``fn(*args)`` under the device context; checks that kernels ran and
    that nothing was allocated or copied for the call."""
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        result = fn(*args)
    stats = xpuc.stats()
    assert stats["kernel_launches"] > 0, "nothing ran on the device"
    assert stats["h2d_bytes"] == stats["d2h_bytes"] == 0, stats
    assert stats["usm_allocs"] == stats["usm_frees"] == 0, stats
    return result


@xpuc.jit
def triad(a, b, s):
    return a + s * b


@xpuc.jit
def scale_into(a, out, s):
    for i in numba.prange(a.shape[0]):
        out[i] = a[i] * s


@xpuc.jit
def two_phases(a, b):
    for i in numba.prange(a.shape[0]):
        b[i] = a[i] + 1.0
    first = b[0]  # host code reads what a kernel wrote, between parfors
    b[1] = -1.0  # and writes what the next kernel reads
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] * 2.0
    return first


def test_an_array_expression_runs_on_the_arrays_memory():
    a, b = np.arange(1000.0), np.ones(1000)
    result = run_in_place(triad, a, b, 2.0)
    assert isinstance(result, np.ndarray)
    np.testing.assert_array_equal(result, a + 2.0 * b)


def test_writes_are_in_the_arrays_when_the_call_returns():
    a, out = np.arange(100.0), np.zeros(100)
    run_in_place(scale_into, a, out, 3.0)
    np.testing.assert_array_equal(out, a * 3.0)


def test_host_code_between_parfors_sees_and_makes_the_kernels_data():
    a, b = np.arange(8.0), np.zeros(8)
    expected_a, expected_b = a.copy(), b.copy()
    expected_first = two_phases.py_func(expected_a, expected_b)
    assert run_in_place(two_phases, a, b) == expected_first
    np.testing.assert_array_equal(a, expected_a)
    np.testing.assert_array_equal(b, expected_b)


@pytest.mark.parametrize("view", [
    lambda x: x[::3], lambda x: x[5:-7], lambda x: x[::-2],
], ids=["step", "offset", "reversed"])
def test_strided_views_are_read_and_written_in_place(view):
    base_a, base_out = np.arange(300.0), np.zeros(300)
    run_in_place(scale_into, view(base_a), view(base_out), 2.0)
    expected = np.zeros(300)
    view(expected)[:] = view(base_a) * 2.0
    np.testing.assert_array_equal(base_out, expected)  # and nothing else written


@xpuc.jit
def doubled_into(grid, out):
    for i in numba.prange(grid.shape[0]):
        for j in range(grid.shape[1]):
            out[i, j] = grid[i, j] * 2.0


def test_two_dimensional_views_in_place():
    grid = np.arange(60.0).reshape(6, 10)
    out = np.zeros((10, 6))
    run_in_place(doubled_into, grid.T, out)
    np.testing.assert_array_equal(out, grid.T * 2.0)
    window = np.zeros((8, 12))
    run_in_place(doubled_into, grid[1:5, ::3], window[2:6, 1:8:2])
    expected = np.zeros((8, 12))
    expected[2:6, 1:8:2] = grid[1:5, ::3] * 2.0
    np.testing.assert_array_equal(window, expected)
    columns = np.asfortranarray(grid)
    np.testing.assert_array_equal(run_in_place(triad, columns[:, 1:], columns[:, 1:], 1.0),
                                  grid[:, 1:] * 2.0)


def test_read_only_arrays_are_read_in_place():
    a = np.arange(50.0)
    a.flags.writeable = False
    out = np.zeros(50)
    run_in_place(scale_into, a, out, 2.0)
    np.testing.assert_array_equal(out, a * 2.0)


def test_writing_a_read_only_array_is_refused_as_numba_refuses_it():
    a = np.arange(50.0)
    a.flags.writeable = False
    with pytest.raises(numba.core.errors.TypingError, match="readonly"):
        numba.njit(parallel=True)(scale_into.py_func)(np.ones(50), a, 2.0)
    with pytest.raises(numba.core.errors.TypingError, match="readonly"):
        with xpuc.device_context(DEVICE):
            scale_into(np.ones(50), a, 2.0)
    np.testing.assert_array_equal(a, np.arange(50.0))


def test_arrays_made_inside_the_function_are_host_memory_too():
    @xpuc.jit
    def made_inside(n):
        out = np.empty(n)
        for i in numba.prange(n):
            out[i] = i * 0.5
        return out + 1.0

    np.testing.assert_array_equal(run_in_place(made_inside, 1000),
                                  np.arange(1000) * 0.5 + 1.0)


def test_reductions_over_host_memory():
    a = np.arange(1, 10001, dtype=np.int64)
    assert run_in_place(xpuc.jit(lambda x: (x * x).sum()), a) == (a * a).sum()


def test_a_kernel_takes_numpy_arrays_in_place():
    @xpuc.kernel
    def add_one(a):
        i = xpuc.get_global_id(0)
        a[i] += 1

    a = np.arange(64, dtype=np.int32)
    run_in_place(lambda x: add_one[x.size](x), a[::2])
    np.testing.assert_array_equal(a[::2], np.arange(0, 64, 2) + 1)
    np.testing.assert_array_equal(a[1::2], np.arange(1, 64, 2))
