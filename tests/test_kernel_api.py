"""numba-dpex's kernel API over xpuc's explicit kernels (SPEC "Explicit
kernels", numba-dpex's kernel API): kernels that take their work-item first,
launched by ``xpuc.call_kernel``, checked against NumPy."""

import numpy as np
import pytest

import xpuc
from xpuc import kernel_api as kapi
from xpuc.array_library import tensor as dpt

DEVICE = "opencl:cpu"


def launched(kernel, index_range, *args, usm):
    """Launch with ``args`` as USM arrays, or as NumPy arrays in a device
    context; the arrays' contents afterwards, as NumPy arrays."""
    if usm:
        placed = [xpuc.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        xpuc.call_kernel(kernel, index_range, *placed)
        return [dpt.asnumpy(a) if isinstance(a, dpt.usm_ndarray) else a for a in placed]
    with xpuc.device_context(DEVICE):
        xpuc.call_kernel(kernel, index_range, *args)
    return list(args)


on_usm_and_numpy = pytest.mark.parametrize("usm", [True, False], ids=["usm", "numpy"])


@xpuc.kernel
def centroid_sums(item: kapi.Item, points, clusters, sums, counts):
    """dpbench kmeans_numba_dpex_p's calCentroidsSum2."""
    i = item.get_id(0)
    ci = clusters[i]
    sums_ref = kapi.AtomicRef(sums, index=(ci, 0))
    sums_ref.fetch_add(points[i, 0])
    sums_ref = kapi.AtomicRef(sums, index=(ci, 1))
    sums_ref.fetch_add(points[i, 1])
    counts_ref = kapi.AtomicRef(counts, index=ci)
    counts_ref.fetch_add(1)


@on_usm_and_numpy
def test_kmeans_centroid_sums(usm):
    rng = np.random.default_rng(1)
    points, clusters = rng.random((1000, 2)), rng.integers(0, 5, 1000)
    sums, counts = launched(centroid_sums, kapi.Range(1000), points, clusters,
                            np.zeros((5, 2)), np.zeros(5, np.int64), usm=usm)[2:]
    expected = np.zeros((5, 2))
    np.add.at(expected, clusters, points)
    np.testing.assert_allclose(sums, expected)
    np.testing.assert_array_equal(counts, np.bincount(clusters, minlength=5))


@xpuc.kernel
def item_positions(item, out):
    i, j = item.get_id(0), item.get_id(1)
    out[i, j] = i * 1000 + j * 10 + item.get_range(0) * 100000 + item.get_range(1)


@on_usm_and_numpy
def test_item_ids_and_ranges(usm):
    (out,) = launched(item_positions, kapi.Range(3, 5), np.zeros((3, 5), np.int64), usm=usm)
    i, j = np.indices((3, 5))
    np.testing.assert_array_equal(out, i * 1000 + j * 10 + 300005)


@xpuc.kernel
def item_linear_positions(item, out):
    out[item.get_id(0), item.get_id(1), item.get_id(2)] = (
        item.get_linear_id() * 1000 + item.get_linear_range())


@on_usm_and_numpy
def test_item_linear_id_and_range(usm):
    (out,) = launched(item_linear_positions, kapi.Range(2, 3, 4), np.zeros((2, 3, 4), np.int64),
                      usm=usm)
    np.testing.assert_array_equal(out, np.arange(24).reshape(2, 3, 4) * 1000 + 24)


@xpuc.kernel
def nd_item_linear_positions(nd_item, out):
    i, j = nd_item.get_global_id(0), nd_item.get_global_id(1)
    group = nd_item.get_group()
    out[i, j, 0] = nd_item.get_global_linear_id()
    out[i, j, 1] = nd_item.get_local_linear_id()
    out[i, j, 2] = group.get_group_linear_id()
    out[i, j, 3] = group.get_group_range(0) * 100 + group.get_group_range(1)
    out[i, j, 4] = (nd_item.get_global_linear_range() * 10000
                    + nd_item.get_local_linear_range() * 100 + group.get_group_linear_range())
    out[i, j, 5] = group.get_local_linear_range()


def test_nd_item_and_group_linear_ids_and_ranges():
    (out,) = launched(nd_item_linear_positions, kapi.NdRange((4, 6), (2, 3)),
                      np.zeros((4, 6, 6), np.int64), usm=True)
    i, j = np.indices((4, 6))
    np.testing.assert_array_equal(out[..., 0], i * 6 + j)
    np.testing.assert_array_equal(out[..., 1], i % 2 * 3 + j % 3)
    np.testing.assert_array_equal(out[..., 2], i // 2 * 2 + j // 3)
    np.testing.assert_array_equal(out[..., 3], 202)
    np.testing.assert_array_equal(out[..., 4], 24 * 10000 + 6 * 100 + 4)
    np.testing.assert_array_equal(out[..., 5], 6)


@xpuc.kernel
def nd_item_positions(nd_item: kapi.NdItem, out):
    i, j = nd_item.get_global_id(0), nd_item.get_global_id(1)
    group = nd_item.get_group()
    out[i, j, 0] = nd_item.get_local_id(0) * 100 + nd_item.get_local_id(1)
    out[i, j, 1] = group.get_group_id(0) * 100 + group.get_group_id(1)
    out[i, j, 2] = nd_item.get_global_range(0) * 100 + nd_item.get_global_range(1)
    out[i, j, 3] = nd_item.get_local_range(0) * 100 + nd_item.get_local_range(1)
    out[i, j, 4] = group.get_local_range(0) * 100 + group.get_local_range(1)


@on_usm_and_numpy
def test_nd_item_and_group(usm):
    (out,) = launched(nd_item_positions, kapi.NdRange(kapi.Range(4, 6), kapi.Range(2, 3)),
                      np.zeros((4, 6, 5), np.int64), usm=usm)
    i, j = np.indices((4, 6))
    np.testing.assert_array_equal(out[..., 0], i % 2 * 100 + j % 3)
    np.testing.assert_array_equal(out[..., 1], i // 2 * 100 + j // 3)
    np.testing.assert_array_equal(out[..., 2], 406)
    np.testing.assert_array_equal(out[..., 3:], 203)


@xpuc.kernel
def combine(item, values, totals, operation):
    """Each work-item's value into its total by the atomic ``operation`` names."""
    i = item.get_id(0)
    ref = kapi.AtomicRef(totals, i % 4)
    if operation == 0:
        ref.fetch_add(values[i])
    elif operation == 1:
        ref.fetch_sub(values[i])
    elif operation == 2:
        ref.fetch_min(values[i])
    elif operation == 3:
        ref.fetch_max(values[i])
    elif operation == 4:
        ref.fetch_and(values[i])
    elif operation == 5:
        ref.fetch_or(values[i])
    else:
        ref.fetch_xor(values[i])


# each operation of ``combine``: the totals' start, and NumPy's reduction
OPERATIONS = {
    "fetch_add": (0, np.add.reduce), "fetch_sub": (0, lambda v: -np.add.reduce(v)),
    "fetch_min": (2**62, np.minimum.reduce), "fetch_max": (-(2**62), np.maximum.reduce),
    "fetch_and": (-1, np.bitwise_and.reduce), "fetch_or": (0, np.bitwise_or.reduce),
    "fetch_xor": (0, np.bitwise_xor.reduce),
}


@on_usm_and_numpy
@pytest.mark.parametrize("operation", OPERATIONS)
def test_atomic_ref_read_modify_writes(operation, usm):
    start, reduce = OPERATIONS[operation]
    values = np.random.default_rng(2).integers(-1000, 1000, 400)
    (totals,) = launched(combine, kapi.Range(400), values, np.full(4, start),
                         list(OPERATIONS).index(operation), usm=usm)[1:2]
    np.testing.assert_array_equal(totals, [reduce(values[k::4]) for k in range(4)])


@xpuc.kernel
def exchange_and_load(item, a, old, loaded):
    i = item.get_id(0)
    ref = kapi.AtomicRef(a, index=i)
    loaded[i] = ref.load()
    old[i] = ref.exchange(val=i * 2.0)
    kapi.AtomicRef(loaded, index=i).store(loaded[i] + 1.0)
    kapi.atomic_fence(kapi.MemoryOrder.SEQ_CST, kapi.MemoryScope.DEVICE)


@on_usm_and_numpy
def test_atomic_ref_load_store_exchange(usm):
    a = np.arange(10.0) + 0.5
    after, old, loaded = launched(exchange_and_load, kapi.Range(10), a.copy(), np.zeros(10),
                                  np.zeros(10), usm=usm)
    np.testing.assert_array_equal(after, np.arange(10) * 2.0)
    np.testing.assert_array_equal(old, a)
    np.testing.assert_array_equal(loaded, a + 1)


@xpuc.kernel
def first_claims(item, owners, claimed, expected):
    """Each work-item claims slot i % 4 if it is still free (-1): one wins."""
    i = item.get_id(0)
    expected[i, 0] = -1
    claimed[i] = kapi.AtomicRef(owners, index=i % 4).compare_exchange(expected[i], i)


@on_usm_and_numpy
def test_atomic_ref_compare_exchange(usm):
    owners, claimed, expected = launched(first_claims, kapi.Range(40), np.full(4, -1),
                                         np.zeros(40, np.bool_), np.zeros((40, 1), np.int64),
                                         usm=usm)
    assert sorted(owners % 4) == [0, 1, 2, 3]
    np.testing.assert_array_equal(np.flatnonzero(claimed), np.sort(owners))
    # a loser's expected value is the winner it found
    losers = np.flatnonzero(~claimed)
    np.testing.assert_array_equal(expected[losers, 0], owners[losers % 4])
    np.testing.assert_array_equal(expected[owners, 0], -1)


@xpuc.kernel
def reversed_windows(item, a, out):
    """Each work-item reverses its window of 4 through a private array."""
    i = item.get_id(0)
    window = kapi.PrivateArray(shape=4, dtype=a.dtype)
    for k in range(4):
        window[k] = a[i * 4 + k]
    for k in range(4):
        out[i * 4 + k] = window[3 - k]


@xpuc.kernel
def zeroed_windows(item, out):
    """A private array filled with zeros, half of it then written."""
    i = item.get_id(0)
    window = kapi.PrivateArray(4, np.float32, fill_zeros=True)
    for k in range(2):
        window[k] = i + k
    for k in range(4):
        out[i, k] = window[k]


def test_private_array_filled_with_zeros():
    (out,) = launched(zeroed_windows, kapi.Range(8), np.full((8, 4), 7, np.float32), usm=True)
    expected = np.zeros((8, 4), np.float32)
    expected[:, 0], expected[:, 1] = np.arange(8), np.arange(8) + 1
    np.testing.assert_array_equal(out, expected)


@on_usm_and_numpy
def test_private_array(usm):
    a = np.arange(32, dtype=np.float32)
    (out,) = launched(reversed_windows, kapi.Range(8), a, np.zeros_like(a), usm=usm)[1:]
    np.testing.assert_array_equal(out, a.reshape(8, 4)[:, ::-1].ravel())


@xpuc.kernel
def work_group_sums(nd_item, a, sums, partial):
    """Each work-group's sum, a tree in its local accessor."""
    local = nd_item.get_local_id(0)
    partial[local] = a[nd_item.get_global_id(0)]
    kapi.group_barrier(nd_item.get_group())
    stride = nd_item.get_local_range(0) // 2
    while stride > 0:
        if local < stride:
            partial[local] += partial[local + stride]
        kapi.group_barrier(nd_item.get_group())
        stride //= 2
    if local == 0:
        sums[nd_item.get_group().get_group_id(0)] = partial[0]


@on_usm_and_numpy
def test_work_group_sum_with_a_local_accessor_and_group_barriers(usm):
    a = np.random.default_rng(3).random(1024)
    sums = launched(work_group_sums, kapi.NdRange((1024,), (64,)), a, np.zeros(16),
                    kapi.LocalAccessor(64, np.float64), usm=usm)[1]
    np.testing.assert_allclose(sums, a.reshape(16, 64).sum(axis=1))


def test_compiled_once_per_accessor_shape():
    a, sums = xpuc.asarray(np.ones(256)), xpuc.asarray(np.zeros(16))
    xpuc.reset_stats()
    for _ in range(2):
        xpuc.call_kernel(work_group_sums, kapi.NdRange(256, 32), a, sums,
                         kapi.LocalAccessor(32, np.float64))
    assert xpuc.stats()["kernels_compiled"] == 1
    np.testing.assert_array_equal(dpt.asnumpy(sums)[:8], 32.0)
    xpuc.call_kernel(work_group_sums, kapi.NdRange(256, 16), a, sums,
                     kapi.LocalAccessor(16, np.float64))
    assert xpuc.stats()["kernels_compiled"] == 2
    np.testing.assert_array_equal(dpt.asnumpy(sums), 16.0)


# ---- what is refused ---------------------------------------------------------------

def test_an_unsupported_method_names_the_line():
    @xpuc.kernel
    def dimensions(item, out):
        out[0] = item.dimensions

    with pytest.raises(xpuc.UnsupportedError,
                       match=r"test_kernel_api.py:\d+: kernel_api.Item.dimensions is not "
                             r"supported \(supported: get_id, get_range, get_linear_id, "):
        xpuc.call_kernel(dimensions, kapi.Range(4), xpuc.asarray(np.zeros(4)))


def test_an_nd_item_method_over_a_range_is_refused():
    with pytest.raises(xpuc.UnsupportedError, match="kernel_api.Item.get_global_id is not"):
        xpuc.call_kernel(nd_item_positions, kapi.Range(4, 6),
                         xpuc.asarray(np.zeros((4, 6, 5), np.int64)))


def test_unsupported_atomic_ref_uses():
    @xpuc.kernel
    def swap(item, a):
        kapi.AtomicRef(a, 0).compare_exchange(a, 1.0, 0, 1)

    @xpuc.kernel
    def ordered(item, a):
        kapi.AtomicRef(a, 0, memory_order=kapi.MemoryOrder.SEQ_CST).fetch_add(1.0)

    @xpuc.kernel
    def referenced(item, a):
        a[1] = kapi.AtomicRef(a, 0).ref

    @xpuc.kernel
    def misnamed(item, a):
        kapi.AtomicRef(a, 0).fetch_add(value=1.0)

    a = xpuc.asarray(np.zeros(4))
    with pytest.raises(xpuc.UnsupportedError, match="AtomicRef: unexpected argument 'value'"):
        xpuc.call_kernel(misnamed, kapi.Range(4), a)
    with pytest.raises(xpuc.UnsupportedError, match="kernel_api.AtomicRef.ref is not supported"):
        xpuc.call_kernel(referenced, kapi.Range(4), a)
    with pytest.raises(xpuc.UnsupportedError,
                       match="AtomicRef.compare_exchange: too many positional arguments"):
        xpuc.call_kernel(swap, kapi.Range(4), a)
    with pytest.raises(xpuc.UnsupportedError, match="AtomicRef's memory_order"):
        xpuc.call_kernel(ordered, kapi.Range(4), a)


def test_the_item_as_a_value_is_refused():
    @xpuc.kernel
    def passes_item(item, a):
        a[0] = len(item)

    with pytest.raises(xpuc.UnsupportedError,
                       match=r"test_kernel_api.py:\d+: kernel_api.Item used as a value"):
        xpuc.call_kernel(passes_item, kapi.Range(4), xpuc.asarray(np.zeros(4)))


@pytest.mark.parametrize("index_range", [4, [4], "4", None], ids=repr)
def test_a_wrong_range_type(index_range):
    with pytest.raises(TypeError, match="over a kernel_api.Range or kernel_api.NdRange"):
        xpuc.call_kernel(item_positions, index_range, xpuc.asarray(np.zeros((4, 4))))


def test_wrong_launches():
    a = xpuc.asarray(np.zeros(4))
    with pytest.raises(TypeError, match=r"takes its work-item and 1 arguments \(out\), got 2"):
        xpuc.call_kernel(item_positions, kapi.Range(4), a, a)
    with pytest.raises(TypeError, match="a LocalAccessor argument needs an NdRange"):
        xpuc.call_kernel(work_group_sums, kapi.Range(4), a, a, kapi.LocalAccessor(4, np.float64))
    with pytest.raises(TypeError, match="launches an @xpuc.kernel function"):
        xpuc.call_kernel(item_positions.py_func, kapi.Range(4), a)
    with pytest.raises(TypeError, match="its dtype is one of"):
        kapi.LocalAccessor(4, np.complex128)
    with pytest.raises(TypeError, match="1 to 3 positive ints"):
        kapi.LocalAccessor((0, 4), np.float32)
    with pytest.raises(TypeError, match="sizes of a Range are ints"):
        kapi.Range(4.0)
    with pytest.raises(RuntimeError, match="only be called inside an @xpuc.kernel"):
        kapi.AtomicRef(np.zeros(4), 0)
