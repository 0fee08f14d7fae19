"""NumPy arguments inside a device context (SPEC rule 5) on a device that
cannot use host memory (forced here on the CPU device): each is copied to the
device once, stays there across parfors while host code leaves it alone, is
synced when host code reads or writes it, and holds the kernels' results when
the call returns. The byte counters show exactly which copies happened."""

import numba
import numpy as np
import pytest
from device_support import offload

import xpuc

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
