"""Updates of one array element by several iterations of a prange
(``h[idx[i]] += w[i]``): made atomic, so that none is lost, and checked
against NumPy's unbuffered ``ufunc.at``, on NumPy arrays under a device
context and on dpnp's USM arrays. An update of the iteration's own element
stays a plain store; what cannot be made atomic is refused naming the line."""

import inspect

import numpy as np
import pytest
from device_support import offload
from numba import prange

import xpuc

dpnp = pytest.importorskip("dpnp")

# many iterations into few bins: without atomics most updates collide
N, BINS = 100_000, 10
rng = np.random.default_rng(33)
INDICES = rng.integers(0, BINS, N)


@xpuc.jit
def histogram(idx, w, h):
    for i in prange(idx.shape[0]):
        h[idx[i]] += w[i]


@xpuc.jit
def histogram_2d(a, b, w, h):
    for i in prange(a.shape[0]):
        h[a[i], b[i]] += w[i]


@xpuc.jit
def take_away(idx, w, h):
    for i in prange(idx.shape[0]):
        h[idx[i]] -= w[i]


@xpuc.jit
def scale(idx, f, h):
    for i in prange(idx.shape[0]):
        h[idx[i]] *= f[i]


@xpuc.jit
def maxima(idx, v, h):
    for i in prange(idx.shape[0]):
        h[idx[i]] = max(h[idx[i]], v[i])


@xpuc.jit
def minima(idx, v, h):
    for i in prange(idx.shape[0]):
        j = idx[i]
        h[j] = min(v[i], h[j])


@xpuc.jit
def numpy_maxima(idx, v, h):
    for i in prange(idx.shape[0]):
        h[idx[i]] = np.maximum(h[idx[i]], v[i])


def _values(dtype, low, high, size=N):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(low, high, size).astype(dtype)
    return rng.integers(low, high, size).astype(dtype)


def _run_both(fn, inputs, h):
    """``fn(*inputs, h)`` on NumPy arrays in the device context and on dpnp
    arrays; the two results as NumPy arrays."""
    host = h.copy()
    offload(fn, *inputs, host)
    usm = dpnp.asarray(h)
    xpuc.reset_stats()
    fn(*(dpnp.asarray(x) for x in inputs), usm)
    assert xpuc.stats()["kernel_launches"] > 0
    return host, dpnp.asnumpy(usm)


def _check(got, want, dtype):
    if np.dtype(dtype).kind == "f":
        # the same sums in another order
        np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-10)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64, np.float32,
                                   np.float64])
def test_histogram_of_ones(dtype):
    """The issue's case: ones into 10 bins, every update counted."""
    for got in _run_both(histogram, (INDICES, np.ones(N, dtype)), np.zeros(BINS, dtype)):
        np.testing.assert_array_equal(got, np.bincount(INDICES, minlength=BINS))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_weighted_histogram(dtype):
    weights = _values(dtype, -5, 6)
    want = np.zeros(BINS, dtype)
    np.add.at(want, INDICES, weights)
    for got in _run_both(histogram, (INDICES, weights), np.zeros(BINS, dtype)):
        _check(got, want, dtype)


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_2d_bins(dtype):
    rows, columns = rng.integers(0, 3, N), rng.integers(0, 4, N)
    weights = _values(dtype, 0, 4)
    want = np.zeros((3, 4), dtype)
    np.add.at(want, (rows, columns), weights)
    for got in _run_both(histogram_2d, (rows, columns, weights), np.zeros((3, 4), dtype)):
        _check(got, want, dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_subtract(dtype):
    weights = _values(dtype, 0, 4)
    start = np.full(BINS, 7, dtype)
    want = start.copy()
    np.subtract.at(want, INDICES, weights)
    for got in _run_both(take_away, (INDICES, weights), start):
        _check(got, want, dtype)


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_multiply(dtype):
    # factors whose products are exact in any order (signs, powers of two),
    # few enough that they stay in range
    count = 20_000
    idx = INDICES[:count]
    factors = rng.choice(np.array([1, -1, 2] if dtype == np.int64 else [2.0, 0.5, -1.0]),
                         count).astype(dtype)
    if dtype == np.int64:  # 2s beyond 62 per bin would overflow
        factors[np.cumsum(factors == 2) > 40] = 1
    want = np.ones(BINS, dtype)
    np.multiply.at(want, idx, factors)
    for got in _run_both(scale, (idx, factors), np.ones(BINS, dtype)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("fn, ufunc", [(maxima, np.maximum), (minima, np.minimum),
                                       (numpy_maxima, np.maximum)],
                         ids=["max", "min", "np.maximum"])
def test_min_max(fn, ufunc, dtype):
    # each bin's extreme comes first, so that a later plain store of a lesser
    # value over a stale read would lose it
    values = (N // 2 - np.arange(N)).astype(dtype)
    if ufunc is np.minimum:
        values = -values
    start = np.zeros(BINS, dtype)
    want = start.copy()
    ufunc.at(want, INDICES, values)
    for got in _run_both(fn, (INDICES, values), start):
        np.testing.assert_array_equal(got, want)


@xpuc.jit
def count_halves(idx, h):
    for i in prange(idx.shape[0]):
        h[idx[i]] += 1.5


def test_update_computed_as_the_body_writes_it():
    """``h[j] += 1.5`` on int64 elements stores ``int(h[j] + 1.5)``: one more
    each time, as the atomic computes it too (not ``h[j] + int(1.5)``)."""
    for got in _run_both(count_halves, (INDICES,), np.zeros(BINS, np.int64)):
        np.testing.assert_array_equal(got, np.bincount(INDICES, minlength=BINS))


@xpuc.jit
def histogram_and_sum(idx, w, h):
    total = 0.0
    for i in prange(idx.shape[0]):
        total += w[i]
        h[idx[i] % h.shape[0]] += 1
    return total


def test_beside_a_reduction():
    weights = _values(np.float64, 0, 1)
    h = np.zeros(BINS, np.int64)
    total = offload(histogram_and_sum, INDICES, weights, h)
    np.testing.assert_allclose(total, weights.sum(), rtol=1e-10)
    np.testing.assert_array_equal(h, np.bincount(INDICES, minlength=BINS))


@xpuc.jit
def own_elements(x, h):
    for i in prange(x.shape[0]):
        h[i] += x[i]


@xpuc.jit
def own_rows(x, h):
    for i in prange(x.shape[0]):
        for j in range(h.shape[1]):
            h[i, j] = max(h[i, j], x[i] * j)


@pytest.mark.parametrize("fn, shape", [(own_elements, (N,)), (own_rows, (N, 3))],
                         ids=["h[i]", "h[i, j]"])
def test_own_element_stays_a_plain_store(fn, shape):
    """An update of the iteration's own element races with no other: no
    atomic op in its kernel."""
    x = _values(np.float64, -1, 1)
    h = np.zeros(shape)
    want = h.copy()
    fn.py_func(x, want)
    offload(fn, x, h)
    np.testing.assert_array_equal(h, want)
    spirv = fn.inspect_mlir("spirv")
    assert "spirv.Atomic" not in spirv
    shared = xpuc.jit(histogram.py_func)  # compiled for these arguments alone
    offload(shared, INDICES, x, np.zeros(BINS))
    assert "spirv.AtomicCompareExchange" in shared.inspect_mlir("spirv")


@xpuc.jit
def read_while_updated(idx, w, h, out):
    for i in prange(idx.shape[0]):
        h[idx[i]] += w[i]
        out[i] = h[idx[i]]


@xpuc.jit
def old_value_used(idx, w, h, out):
    for i in prange(idx.shape[0]):
        old = h[idx[i]]
        h[idx[i]] = old + w[i]
        out[i] = old


@xpuc.jit
def other_form(idx, w, h):
    for i in prange(idx.shape[0]):
        h[idx[i]] = h[idx[i]] * 0.5 + w[i]


@xpuc.jit
def small_integers(idx, h):
    for i in prange(idx.shape[0]):
        h[idx[i]] += 1


def _line_of(fn, text: str) -> str:
    lines, first = inspect.getsourcelines(fn.py_func)
    return f"test_racy_updates.py:{first + next(k for k, line in enumerate(lines) if text in line)}"


@pytest.mark.parametrize("fn, args, line, says", [
    (read_while_updated, (np.zeros(N),), "out[i] = h[idx[i]]", "'h' used here"),
    (old_value_used, (np.zeros(N),), "out[i] = old", "used besides that update"),
    (other_form, (), "h[idx[i]] = h[idx[i]] * 0.5", "only updates with +=, -=, *=, min"),
], ids=["array read elsewhere", "old value used", "other read-modify-write"])
def test_what_cannot_be_atomic_is_refused(fn, args, line, says):
    weights = np.ones(N)
    with pytest.raises(xpuc.UnsupportedError) as error:
        with xpuc.device_context("opencl:cpu"):
            fn(INDICES, weights, np.zeros(BINS), *args)
    message = str(error.value)
    assert _line_of(fn, line) in message and says in message
    assert "$" not in message and "numba" not in message


@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.complex128])
def test_element_type_without_atomics_is_refused(dtype):
    with pytest.raises(xpuc.UnsupportedError) as error:
        with xpuc.device_context("opencl:cpu"):
            small_integers(INDICES, np.zeros(BINS, dtype))
    message = str(error.value)
    assert _line_of(small_integers, "h[idx[i]] += 1") in message
    assert "only int32, int64, float32 and float64" in message
