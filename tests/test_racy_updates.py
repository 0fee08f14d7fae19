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


# dpbench's dbscan (dbscan_numba_dpex_p.py), get_neighborhood as written: each
# iteration owns the points j of its block, the last block ending at n
@xpuc.jit
def get_neighborhood(n, dim, data, eps, ind_lst, sz_lst):
    block_size = 1
    nblocks = n // block_size + int(n % block_size > 0)

    # TODO: get rid of it once prange supports dtype
    # https://github.com/IntelPython/numba-dpex/issues/1063
    float0 = data.dtype.type(0.0)

    for i in prange(nblocks):
        start = i * block_size
        stop = n if i + 1 == nblocks else start + block_size
        eps2 = eps * eps
        block_size1 = 256
        nblocks1 = n // block_size1 + int(n % block_size1 > 0)
        for ii in range(nblocks1):
            i1 = ii * block_size1
            i2 = n if ii + 1 == nblocks1 else i1 + block_size1
            for j in range(start, stop):
                for k in range(i1, i2):
                    dist = float0
                    for m in range(dim):
                        diff = data[k * dim + m] - data[j * dim + m]
                        dist += diff * diff
                    if dist <= eps2:
                        size = sz_lst[j]
                        ind_lst[j * n + size] = k
                        sz_lst[j] = size + 1


def _blocked_neighborhood(extra: int):
    """get_neighborhood with ``block_size`` an argument, and its ranges
    ``extra`` longer than the block."""
    def neighborhood(n, dim, data, eps, ind_lst, sz_lst, block_size):
        nblocks = n // block_size + int(n % block_size > 0)
        for i in prange(nblocks):
            start = i * block_size
            stop = n if i + 1 == nblocks else start + block_size + extra
            for j in range(start, stop):
                for k in range(n):
                    dist = 0.0
                    for m in range(dim):
                        diff = data[k * dim + m] - data[j * dim + m]
                        dist += diff * diff
                    if dist <= eps * eps:
                        size = sz_lst[j]
                        ind_lst[j * n + size] = k
                        sz_lst[j] = size + 1
    return xpuc.jit(neighborhood)


blocked_neighborhood = _blocked_neighborhood(0)
overlapping_neighborhood = _blocked_neighborhood(1)

POINTS, DIM = 300, 3
DATA = rng.uniform(0, 1, POINTS * DIM)


@pytest.mark.parametrize("fn, args", [(get_neighborhood, ()), (blocked_neighborhood, (7,))],
                         ids=["dbscan", "blocks of 7"])
def test_dbscan_neighborhoods_own_their_points(fn, args):
    """dbscan's ``sz_lst[j]``, read and incremented, is the iteration's own:
    ``j`` runs over ``[i * b, i * b + b)``, the last block to ``n``. Plain
    loads and stores, the serial answer on dpnp arrays and NumPy ones."""
    empty_indices, empty_sizes = np.full(POINTS * POINTS, -1), np.zeros(POINTS, np.int64)
    want_indices, want_sizes = empty_indices.copy(), empty_sizes.copy()
    fn.py_func(POINTS, DIM, DATA, 0.3, want_indices, want_sizes, *args)
    indices, sizes = empty_indices.copy(), empty_sizes.copy()
    offload(fn, POINTS, DIM, DATA, 0.3, indices, sizes, *args)
    usm_indices, usm_sizes = dpnp.asarray(empty_indices), dpnp.asarray(empty_sizes)
    xpuc.reset_stats()
    fn(POINTS, DIM, dpnp.asarray(DATA), 0.3, usm_indices, usm_sizes, *args)
    assert xpuc.stats()["kernel_launches"] > 0
    assert 0 < want_sizes.min() < want_sizes.max() < POINTS  # neighbourhoods of many sizes
    for got_indices, got_sizes in ((indices, sizes),
                                   (dpnp.asnumpy(usm_indices), dpnp.asnumpy(usm_sizes))):
        np.testing.assert_array_equal(got_sizes, want_sizes)
        np.testing.assert_array_equal(got_indices, want_indices)
    assert "spirv.Atomic" not in fn.inspect_mlir("spirv")


def test_overlapping_blocks_are_refused():
    """With ranges one longer than the block, neighbouring iterations share
    a point j: ``sz_lst[j]`` is shared, and its old value indexes ``ind_lst``."""
    with pytest.raises(xpuc.UnsupportedError) as error:
        offload(overlapping_neighborhood, POINTS, DIM, DATA, 0.3,
                np.zeros(POINTS * POINTS, np.int64), np.zeros(POINTS, np.int64), 7)
    message = str(error.value)
    assert _line_of(overlapping_neighborhood, "ind_lst[j * n + size] = k") in message
    assert "used besides that update" in message


# each iteration counts into its block of s: the blocks as people write them
@xpuc.jit
def count_blocks(b, x, s):
    for i in prange(x.shape[0] // b):
        for j in range(i * b, i * b + b):
            s[j] += x[j]


@xpuc.jit
def count_shifted_blocks(b, x, s):
    for i in prange(x.shape[0] // b):
        for j in range(i * b + 1, (i + 1) * b + 1):
            s[j - 1] += x[j - 1]


@xpuc.jit
def count_clipped_blocks(b, x, s):
    n = x.shape[0]
    for i in prange((n + b - 1) // b):
        for j in range(i * b, min(i * b + b, n), 2):
            s[2 * j + 1] += x[j]


@xpuc.jit
def count_up_to_last(b, x, s):
    n = x.shape[0]
    nblocks = n // b
    for i in prange(nblocks):
        stop = i * b + b if i != nblocks - 1 else n
        for j in range(i * b, stop):
            s[j] += x[j]


@xpuc.jit
def count_next(b, x, s):
    for i in prange(x.shape[0] - 1):
        s[i + 1] += x[i]


BLOCK = 10


def _run_blocks(fn, x, s):
    """``fn(BLOCK, x, s)`` as ``_run_both`` runs it (the block size a number)."""
    host = s.copy()
    offload(fn, BLOCK, x, host)
    usm = dpnp.asarray(s)
    xpuc.reset_stats()
    fn(BLOCK, dpnp.asarray(x), usm)
    assert xpuc.stats()["kernel_launches"] > 0
    return host, dpnp.asnumpy(usm)


@pytest.mark.parametrize("fn", [count_blocks, count_shifted_blocks, count_clipped_blocks,
                                count_up_to_last, count_next],
                         ids=["range(i*b, i*b+b)", "range(i*b+1, (i+1)*b+1)", "min and step",
                              "last to n", "s[i+1]"])
def test_own_ranges_stay_plain_stores(fn):
    """Updates at ``a * j + r``, ``j`` from ranges disjoint across iterations
    (or ``a * i + r``), stay plain loads and stores."""
    x = rng.integers(1, 5, 1003).astype(np.int64)
    want = np.zeros(2 * x.size + 1, np.int64)
    fn.py_func(BLOCK, x, want)
    for got in _run_blocks(fn, x, np.zeros_like(want)):
        np.testing.assert_array_equal(got, want)
    assert "spirv.Atomic" not in fn.inspect_mlir("spirv")


@xpuc.jit
def count_overlapping_blocks(b, x, s):
    for i in prange(x.shape[0] // b):
        for j in range(i * b, i * b + b + 1):
            s[j] += x[i]


@xpuc.jit
def count_up_to_first(b, x, s):
    n = x.shape[0] - b
    nblocks = n // b
    for i in prange(nblocks):
        stop = n if i == 0 else i * b + b
        for j in range(i * b, stop):
            s[j] += x[j]


@xpuc.jit
def count_in_block_offsets(b, x, s):
    for i in prange(x.shape[0] // b):
        for j in range(i * b, i * b + b):
            s[j - i * b] += x[j]


@xpuc.jit
def count_to_the_end(b, x, s):
    for i in prange(x.shape[0] // b):
        for j in range(i * b, x.shape[0]):
            s[j] += x[j]


@pytest.mark.parametrize("fn", [count_overlapping_blocks, count_up_to_first,
                                count_in_block_offsets, count_to_the_end],
                         ids=["range(i*b, i*b+b+1)", "first to n", "s[j - i*b]",
                              "range(i*b, n)"])
def test_ranges_not_provably_disjoint_stay_atomic(fn):
    """Near misses of the rule: iterations may share an element, so the
    update is atomic, and no count is lost."""
    x = rng.integers(1, 5, 1000).astype(np.int64)
    want = np.zeros(x.size + 1, np.int64)
    fn.py_func(BLOCK, x, want)
    for got in _run_blocks(fn, x, np.zeros_like(want)):
        np.testing.assert_array_equal(got, want)
    assert "spirv.Atomic" in fn.inspect_mlir("spirv")
