"""NumPy arrays held in globals or closure variables, read in parfor bodies
(a lookup table, a stencil's weights): the host passes each to the kernel as
a read-only array, as Numba compiles it as a constant (constant_arrays.py)."""

import numba
import numpy as np
import pytest

import xpuc

DEVICE = "opencl:cpu"

WEIGHTS = np.array([0.25, 0.5, 0.25])
TABLE = np.arange(16, dtype=np.int32) * 3
GRID = np.arange(12.0).reshape(3, 4)
EVERY_OTHER = np.arange(10.0)[::2]


def smooth(x):
    out = np.empty(x.shape[0] - 2)
    for i in numba.prange(x.shape[0] - 2):
        acc = 0.0
        for k in range(3):
            acc += WEIGHTS[k] * x[i + k]
        out[i] = acc
    return out


def look_up(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = TABLE[x[i] % 16] + x[i]


def nested(out):
    for i in numba.prange(GRID.shape[0]):
        for j in numba.prange(GRID.shape[1]):
            out[i, j] = GRID[i, j] * EVERY_OTHER[j]


def scaled_by_a_closure():
    factors = np.array([2.0, 3.0])

    def inner(y):
        out = np.empty_like(y)
        for i in numba.prange(y.shape[0]):
            out[i] = y[i] * factors[i % 2]
        return out

    return xpuc.jit(inner), factors


@pytest.fixture
def launches():
    before = xpuc.stats()["kernel_launches"]
    yield lambda: xpuc.stats()["kernel_launches"] - before


def test_a_global_array_read_in_a_prange_body(launches):
    x = np.random.default_rng(0).random(1000)
    with xpuc.device_context(DEVICE):
        got = xpuc.jit(smooth)(x)
    np.testing.assert_allclose(got, numba.njit(parallel=True)(smooth)(x))
    assert launches() >= 1


def test_a_global_table_indexed_by_data(launches):
    x = np.arange(100, dtype=np.int32)
    out = np.zeros(100, np.int32)
    with xpuc.device_context(DEVICE):
        xpuc.jit(look_up)(x, out)
    np.testing.assert_array_equal(out, TABLE[x % 16] + x)
    assert launches() == 1


def test_global_arrays_in_nested_pranges_and_strided():
    out = np.zeros((3, 4))
    with xpuc.device_context(DEVICE):
        xpuc.jit(nested)(out)
    np.testing.assert_array_equal(out, GRID * EVERY_OTHER[:4])


def test_a_global_array_with_usm_arguments():
    dpnp = pytest.importorskip("dpnp")
    x = np.random.default_rng(1).random(200)
    got = xpuc.jit(smooth)(dpnp.asarray(x, usm_type="device"))
    np.testing.assert_allclose(dpnp.asnumpy(got), numba.njit(parallel=True)(smooth)(x))


def test_a_closure_array_in_a_prange_body(launches):
    inner, factors = scaled_by_a_closure()
    x = np.arange(5.0)
    with xpuc.device_context(DEVICE):
        got = inner(x)
    np.testing.assert_array_equal(got, x * np.resize(factors, 5))
    assert launches() == 1
