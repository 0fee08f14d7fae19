"""NumPy arguments inside a device context (SPEC rule 5) on a device that
cannot use host memory (forced here on the CPU device): each is copied to the
device once, stays there across parfors while host code leaves it alone, is
synced when host code reads or writes it, and holds the kernels' results when
the call returns. The byte counters show exactly which copies happened."""

import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from device_support import offload
from numba.core.runtime import _nrt_python, rtsys

import xpuc

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
import workloads  # noqa: E402

pytestmark = pytest.mark.usefixtures("copying_host_arrays")


@xpuc.jit
def jacobi(a, b, steps):
    for _ in range(steps):
        for i in numba.prange(1, a.shape[0] - 1):
            b[i] = 0.5 * (a[i - 1] + a[i + 1])
        for i in numba.prange(1, a.shape[0] - 1):
            a[i] = 0.5 * (b[i - 1] + b[i + 1])


@xpuc.jit
def jacobi_2d(grid, steps):
    other = grid.copy()
    for _ in range(steps):
        other[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                    + grid[1:-1, :-2] + grid[1:-1, 2:])
        grid, other = other, grid
    return grid


@xpuc.jit
def read_between(a, b):
    for i in numba.prange(a.shape[0]):
        b[i] = a[i] + 1.0
    first = b[0]  # host reads b: b comes back, a stays on the device
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] * 2.0
    return first


@xpuc.jit
def write_between(a, b):
    for i in numba.prange(a.shape[0]):
        b[i] = a[i] + 1.0
    b[1] = 100.0  # host writes b: b comes back, then goes in again
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] * 2.0


@xpuc.jit
def serial_scan_between(a):
    a[:] = a * 2.0
    for i in range(1, a.shape[0]):  # a serial host loop over a
        a[i] += a[i - 1]
    a[:] = a + 1.0


@xpuc.jit
def fresh_result(a):
    return np.sin(a) + a


def bytes_of(*arrays):
    return sum(a.nbytes for a in arrays)


def test_time_loop_copies_each_array_once():
    rng = np.random.default_rng(1)
    a, b = rng.random(4096), np.zeros(4096)
    expected_a, expected_b = a.copy(), b.copy()
    jacobi.py_func(expected_a, expected_b, 25)
    offload(jacobi, a, b, 25)
    stats = xpuc.stats()
    assert stats["kernel_launches"] == 50
    assert stats["h2d_bytes"] == bytes_of(a, b)
    assert stats["d2h_bytes"] == bytes_of(a, b)
    assert stats["usm_allocs"] == stats["usm_frees"] == 2
    np.testing.assert_allclose(a, expected_a)
    np.testing.assert_allclose(b, expected_b)


def test_stencil_time_loop_with_swapped_arrays():
    grid = np.random.default_rng(2).random((64, 48))
    expected = jacobi_2d.py_func(grid.copy(), 10)
    result = offload(jacobi_2d, grid, 10)
    np.testing.assert_allclose(result, expected)
    assert isinstance(result, np.ndarray)


def test_host_read_syncs_only_that_array():
    a, b = np.arange(1000.0), np.zeros(1000)
    first = offload(read_between, a, b)
    stats = xpuc.stats()
    assert first == 1.0
    assert stats["h2d_bytes"] == bytes_of(a, b)
    # b when the host read it, a at the end (b was not written after)
    assert stats["d2h_bytes"] == bytes_of(a, b)
    np.testing.assert_array_equal(b, np.arange(1000.0) + 1)
    np.testing.assert_array_equal(a, 2 * (np.arange(1000.0) + 1))


def test_host_write_sends_the_array_again():
    a, b = np.arange(1000.0), np.zeros(1000)
    offload(write_between, a, b)
    stats = xpuc.stats()
    assert stats["h2d_bytes"] == bytes_of(a, b, b)
    expected_b = np.arange(1000.0) + 1
    expected_b[1] = 100.0
    np.testing.assert_array_equal(b, expected_b)
    np.testing.assert_array_equal(a, 2 * expected_b)


def test_serial_host_loop_between_parfors():
    a = np.arange(100.0)
    expected = a.copy()
    serial_scan_between.py_func(expected)
    offload(serial_scan_between, a)
    np.testing.assert_array_equal(a, expected)


def test_fresh_arrays_are_not_copied_in():
    a = np.linspace(0, 1, 1000)
    result = offload(fresh_result, a)
    np.testing.assert_allclose(result, np.sin(a) + a)
    assert xpuc.stats()["h2d_bytes"] == a.nbytes


def test_overlapping_argument_views_share_one_device_copy():
    @xpuc.jit
    def shift_add(dst, src):
        for i in numba.prange(dst.shape[0]):
            dst[i] = dst[i] + 1.0
        for i in numba.prange(src.shape[0]):
            src[i] = src[i] * 2.0

    base = np.arange(20.0)
    expected = base.copy()
    shift_add.py_func(expected[:15], expected[5:])
    offload(shift_add, base[:15], base[5:])
    np.testing.assert_array_equal(base, expected)
    assert xpuc.stats()["h2d_bytes"] == base.nbytes


def test_buffers_are_freed_after_an_error():
    @xpuc.jit
    def fails_midway(a, n):
        a[:] = a + 1.0
        if n > a.shape[0]:
            raise ValueError("n is too large")  # raised by host code, after a kernel
        return a

    a = np.zeros(4)
    with pytest.raises(ValueError, match="too large"):
        offload(fails_midway, a, 10)
    stats = xpuc.stats()
    assert stats["usm_allocs"] == stats["usm_frees"]
    np.testing.assert_array_equal(a, np.ones(4))  # the kernel's result came back


# ---- arrays the function makes, carried through a time loop -----------------
# Each of these makes its second array on the device (``grid * 1.0``) and swaps
# the two in host code at every step; the host never reads them in the loop.
TIME_LOOPS = {
    "jacobi": (workloads.jacobi, (40, 32)),  # array-expression stencil
    "jacobi_rows": (workloads.jacobi_rows, (40, 32)),  # prange over rows
    "heat_1d": (workloads.heat_1d, (3000,)),
}


@pytest.mark.parametrize("name", TIME_LOOPS)
def test_swapped_time_loop_copies_in_once_and_out_once(name):
    fn, shape = TIME_LOOPS[name]
    grid = np.random.default_rng(3).random(shape)
    expected = fn(grid.copy(), 10)  # NumPy's (prange runs as range)
    result = offload(xpuc.jit(fn), grid, 10)
    stats = xpuc.stats()
    np.testing.assert_allclose(result, expected)
    # the argument in; after an even number of swaps the result is the
    # argument again, and the array made in the call died unread
    assert stats["h2d_bytes"] == grid.nbytes
    assert stats["d2h_bytes"] == grid.nbytes
    assert stats["usm_allocs"] == stats["usm_frees"]


def test_odd_time_loop_returns_the_made_array_and_updates_the_argument():
    grid = np.random.default_rng(4).random((40, 32))
    expected_grid = grid.copy()
    expected = workloads.jacobi(expected_grid, 9)
    result = offload(xpuc.jit(workloads.jacobi), grid, 9)
    np.testing.assert_allclose(result, expected)
    # kernels wrote the argument (as `other` at every other step): it holds
    # what they wrote, as NumPy's in-place writes would leave it
    np.testing.assert_allclose(grid, expected_grid)
    assert xpuc.stats()["h2d_bytes"] == grid.nbytes
    assert xpuc.stats()["d2h_bytes"] == 2 * grid.nbytes


@xpuc.jit
def jacobi_watched(grid, steps):
    other = grid * 1.0
    corners = np.empty(steps)
    for step in range(steps):
        other[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                    + grid[1:-1, :-2] + grid[1:-1, 2:])
        grid, other = other, grid
        corners[step] = grid[1, 1]  # the host reads the newest grid
    return grid, corners


@xpuc.jit
def jacobi_forced(grid, steps):
    other = grid * 1.0
    for step in range(steps):
        other[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                    + grid[1:-1, :-2] + grid[1:-1, 2:])
        grid, other = other, grid
        grid[0, 1] = step  # the host writes an edge the next step reads


def test_host_read_in_a_swapped_time_loop_sees_each_step():
    grid = np.random.default_rng(5).random((40, 32))
    expected, expected_corners = jacobi_watched.py_func(grid.copy(), 6)
    result, corners = offload(jacobi_watched, grid, 6)
    np.testing.assert_allclose(corners, expected_corners)
    np.testing.assert_allclose(result, expected)
    stats = xpuc.stats()
    # in once; each step's result out once, when the host reads it (the
    # host wrote nothing, so nothing goes in again)
    assert stats["h2d_bytes"] == grid.nbytes
    assert stats["d2h_bytes"] == 6 * grid.nbytes


def test_host_write_in_a_swapped_time_loop_reaches_the_next_step():
    grid = np.random.default_rng(6).random((40, 32))
    expected = grid.copy()
    jacobi_forced.py_func(expected, 6)
    offload(jacobi_forced, grid, 6)
    np.testing.assert_allclose(grid, expected)
    stats = xpuc.stats()
    # each step's result comes out for the host's write and goes back in for
    # the next step (the last step's stays on the host)
    assert stats["d2h_bytes"] == 6 * grid.nbytes
    assert stats["h2d_bytes"] == 6 * grid.nbytes


@xpuc.jit
def relax_fresh(a, steps):
    for _ in range(steps):
        a = 0.5 * a + 1.0  # a new array each step; the one before dies
    return a


def test_arrays_dead_in_the_loop_are_not_copied_back_or_kept():
    a = np.linspace(0.0, 1.0, 5000)
    offload(relax_fresh, a, 1)  # compiled
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        result = offload(relax_fresh, a, 20)
        after = rtsys.get_allocation_stats()
    finally:
        _nrt_python.memsys_disable_stats()
    np.testing.assert_allclose(result, relax_fresh.py_func(a, 20))
    stats = xpuc.stats()
    assert stats["h2d_bytes"] == a.nbytes
    assert stats["d2h_bytes"] == a.nbytes  # the result only
    assert stats["usm_allocs"] == stats["usm_frees"]
    # the call let go of every array it held: only the result lives on
    assert (after.mi_alloc - before.mi_alloc) - (after.mi_free - before.mi_free) == 1
