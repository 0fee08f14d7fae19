"""Explicit kernels (SPEC "Explicit kernels"): work-item functions, work-group
local memory and barriers, atomics, placement like jit, launch checks."""

import math

import dpctl
import numba
import numpy as np
import pytest
from device_support import still_computing

import xpuc
from xpuc.array_library import tensor as dpt

DEVICE = "opencl:cpu"
TILE = 8


@xpuc.kernel
def multiply(a, b, c):
    i = xpuc.get_global_id(0)
    c[i] = a[i] * b[i]


@xpuc.kernel
def coordinates(out):
    i = xpuc.get_global_id(0)
    j = xpuc.get_global_id(1)
    out[i, j, 0] = i
    out[i, j, 1] = j
    out[i, j, 2] = xpuc.get_local_id(0) * 100 + xpuc.get_local_id(1)
    out[i, j, 3] = xpuc.get_group_id(0) * 100 + xpuc.get_group_id(1)
    out[i, j, 4] = xpuc.get_global_size(0) * 100 + xpuc.get_global_size(1)
    out[i, j, 5] = xpuc.get_local_size(0) * 100 + xpuc.get_local_size(1)


@xpuc.kernel
def volume(out):
    i = xpuc.get_global_id(0)
    j = xpuc.get_global_id(1)
    k = xpuc.get_global_id(2)
    out[i, j, k] = i * 10000 + j * 100 + k


@xpuc.kernel
def group_sums(a, sums):
    """Each work-group of 64 sums its elements in local memory (a tree)."""
    i = xpuc.get_global_id(0)
    local = xpuc.get_local_id(0)
    partial = xpuc.local.array(64, np.float64)
    partial[local] = a[i]
    xpuc.barrier()
    stride = 32
    while stride > 0:
        if local < stride:
            partial[local] += partial[local + stride]
        xpuc.barrier()
        stride //= 2
    if local == 0:
        sums[xpuc.get_group_id(0)] = partial[0]


@xpuc.kernel
def histogram(data, counts):
    i = xpuc.get_global_id(0)
    xpuc.atomic.add(counts, data[i], 1)


@xpuc.kernel
def weighted_histogram(values, weights, low, width, totals):
    i = xpuc.get_global_id(0)
    bin_ = int((values[i] - low) / width)
    if bin_ >= totals.shape[0]:
        bin_ = totals.shape[0] - 1
    xpuc.atomic.add(totals, bin_, weights[i])


@xpuc.kernel
def local_histogram(data, counts):
    """Counts per work-group in local memory (local integer atomics), then
    one global atomic per bin and group."""
    i = xpuc.get_global_id(0)
    local = xpuc.get_local_id(0)
    bins = xpuc.local.array(16, np.int32)
    if local < 16:
        bins[local] = 0
    xpuc.barrier()
    xpuc.atomic.add(bins, data[i], 1)
    xpuc.barrier()
    if local < 16:
        xpuc.atomic.add(counts, local, bins[local])


@xpuc.kernel
def tiled_matmul(a, b, c):
    row = xpuc.get_global_id(0)
    col = xpuc.get_global_id(1)
    local_row = xpuc.get_local_id(0)
    local_col = xpuc.get_local_id(1)
    tile_a = xpuc.local.array((TILE, TILE), np.float32)
    tile_b = xpuc.local.array((TILE, TILE), np.float32)
    total = np.float32(0)
    for t in range(a.shape[1] // TILE):
        tile_a[local_row, local_col] = a[row, t * TILE + local_col]
        tile_b[local_row, local_col] = b[t * TILE + local_row, col]
        xpuc.barrier()
        for k in range(TILE):
            total += tile_a[local_row, k] * tile_b[k, local_col]
        xpuc.barrier()
    c[row, col] = total


@pytest.mark.parametrize("copying", [False, True], ids=["in place", "copied"])
def test_elementwise_kernel_on_numpy_arrays_in_a_context(copying, request):
    """The CPU device uses host memory, so the kernel takes the arrays in
    place; forced to copy them as other devices need, it copies each in once
    and the written one back."""
    if copying:
        request.getfixturevalue("copying_host_arrays")
    a, b = np.arange(1000, dtype=np.float32), np.full(1000, 3, dtype=np.float32)
    c = np.zeros_like(a)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        multiply[a.size](a, b, c)
    np.testing.assert_array_equal(c, a * b)
    stats = xpuc.stats()
    assert stats["kernel_launches"] == 1
    assert (stats["h2d_bytes"], stats["d2h_bytes"], stats["usm_allocs"]) == (
        (3 * a.nbytes, c.nbytes, 3) if copying else (0, 0, 0))


def test_elementwise_kernel_on_usm_arrays_without_a_context():
    a, b = np.arange(1000.0), np.full(1000, 0.5)
    ua, ub, uc = xpuc.asarray(a), xpuc.asarray(b, usm_type="shared"), xpuc.asarray(a * 0)
    xpuc.reset_stats()
    multiply[xpuc.NdRange(a.size, 100)](ua, ub, uc)
    np.testing.assert_array_equal(dpt.asnumpy(uc), a * b)
    assert xpuc.stats()["h2d_bytes"] == xpuc.stats()["d2h_bytes"] == 0


def test_a_launch_waits_for_the_work_on_its_queue():
    """dpctl's kernels making the inputs are still running when the launch
    comes (dpctl's operations do not wait for their work)."""
    queue = dpctl.SyclQueue(DEVICE)
    a = np.random.default_rng(0).random(4_000_000)
    uc = dpt.empty(a.shape, sycl_queue=queue)
    for _ in range(3):
        pending = still_computing(a, queue)
        xpuc.reset_stats()
        multiply[xpuc.NdRange(a.size, 100)](pending, pending, uc)
        assert xpuc.stats()["kernel_launches"] == 1
        np.testing.assert_allclose(dpt.asnumpy(uc), np.sin(np.cos(np.sin(a))) ** 2)


def test_work_item_functions_in_two_dimensions():
    out = np.zeros((8, 12, 6), dtype=np.int64)
    with xpuc.device_context(DEVICE):
        coordinates[xpuc.NdRange((8, 12), (4, 3))](out)
    i, j = np.meshgrid(np.arange(8), np.arange(12), indexing="ij")
    np.testing.assert_array_equal(out[..., 0], i)
    np.testing.assert_array_equal(out[..., 1], j)
    np.testing.assert_array_equal(out[..., 2], (i % 4) * 100 + j % 3)
    np.testing.assert_array_equal(out[..., 3], (i // 4) * 100 + j // 3)
    assert (out[..., 4] == 812).all() and (out[..., 5] == 403).all()


def test_three_dimensional_range():
    out = np.zeros((3, 4, 5), dtype=np.int64)
    with xpuc.device_context(DEVICE):
        volume[3, 4, 5](out)
    i, j, k = np.meshgrid(np.arange(3), np.arange(4), np.arange(5), indexing="ij")
    np.testing.assert_array_equal(out, i * 10000 + j * 100 + k)


def test_work_group_reduction_with_local_memory_and_barriers():
    a = np.random.default_rng(0).random(64 * 37)
    sums = np.zeros(37)
    with xpuc.device_context(DEVICE):
        group_sums[xpuc.NdRange(a.size, 64)](a, sums)
    np.testing.assert_allclose(sums, a.reshape(37, 64).sum(axis=1))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_histogram_with_atomics(dtype):
    data = np.random.default_rng(1).integers(0, 16, 200_000)
    counts = np.zeros(16, dtype=dtype)
    with xpuc.device_context(DEVICE):
        histogram[data.size](data, counts)
    np.testing.assert_array_equal(counts, np.bincount(data, minlength=16))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weighted_histogram_with_float_atomics(dtype):
    rng = np.random.default_rng(2)
    values, weights = rng.random(50_000), rng.random(50_000).astype(dtype)
    totals = np.zeros(10, dtype=dtype)
    with xpuc.device_context(DEVICE):
        weighted_histogram[values.size](values, weights, 0.0, 0.1, totals)
    expected, _ = np.histogram(values, bins=10, range=(0, 1), weights=weights)
    np.testing.assert_allclose(totals, expected, rtol=1e-4 if dtype == np.float32 else 1e-10)


def test_local_memory_atomics():
    data = np.random.default_rng(3).integers(0, 16, 64 * 100)
    counts = np.zeros(16, dtype=np.int32)
    with xpuc.device_context(DEVICE):
        local_histogram[xpuc.NdRange(data.size, 64)](data, counts)
    np.testing.assert_array_equal(counts, np.bincount(data, minlength=16))


def test_tiled_matrix_multiplication():
    rng = np.random.default_rng(4)
    a, b = rng.random((48, 32), dtype=np.float32), rng.random((32, 40), dtype=np.float32)
    c = np.zeros((48, 40), dtype=np.float32)
    with xpuc.device_context(DEVICE):
        tiled_matmul[xpuc.NdRange(c.shape, (TILE, TILE))](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


@xpuc.kernel
def row_sums(a, out):
    i = xpuc.get_global_id(0)
    total = 0.0
    for j in range(a.shape[1]):
        total += a[i, j]
    out[i] = total


def test_a_sum_in_a_kernels_loop_keeps_its_order():
    # the CPU device's compiler reorders such a sum (see ordered_reductions)
    a = np.ones((40, 1001))
    a[:, 0], a[:, -1] = 1e16, -1e16
    out = np.full(40, np.nan)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        row_sums[40](a, out)
    assert xpuc.stats()["kernel_launches"] == 1
    np.testing.assert_array_equal(out, 0.0)  # 1e16 + 1 == 1e16


def test_compiled_once_per_signature_and_rank():
    @xpuc.kernel
    def fill(out, value):
        out[xpuc.get_global_id(0)] = value

    out = np.zeros(10)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        fill[10](out, 1.5)
        fill[10](out, 2.5)
        assert xpuc.stats()["kernels_compiled"] == 1
        fill[10](np.zeros(10, dtype=np.int32), 1)
    assert xpuc.stats()["kernels_compiled"] == 2
    assert (out == 2.5).all()
    assert "gpu.func @fill" in fill.inspect_mlir("gpu")
    assert "spirv.func @fill" in fill.inspect_mlir("spirv")
    (binary,) = fill.inspect_spirv().values()
    assert binary[:4] == b"\x03\x02\x23\x07"  # the SPIR-V magic number


# ---- placement --------------------------------------------------------------

def test_numpy_arguments_need_a_context():
    with pytest.raises(xpuc.ExecutionPlacementError, match="no device context"):
        multiply[4](np.ones(4), np.ones(4), np.ones(4))


def test_numpy_mixed_with_usm_is_refused():
    with pytest.raises(xpuc.ExecutionPlacementError, match="cannot mix NumPy arrays"):
        multiply[4](xpuc.asarray(np.ones(4)), np.ones(4), np.ones(4))


def test_non_equivalent_queues_are_refused():
    other = dpctl.SyclQueue(DEVICE, property="in_order")
    a = xpuc.asarray(np.ones(4))
    with pytest.raises(xpuc.ExecutionPlacementError, match="different queues"):
        multiply[4](a, xpuc.asarray(np.ones(4), queue=other), a)


# ---- bad launches -------------------------------------------------------------

def test_local_size_must_divide_global_size():
    with pytest.raises(ValueError, match=r"local size \(3,\) does not divide global size"):
        xpuc.NdRange(10, 3)


def test_work_group_larger_than_the_device_allows():
    limit = dpctl.SyclDevice(DEVICE).max_work_group_size
    a = xpuc.asarray(np.ones(2 * limit))
    with pytest.raises(ValueError, match=f"larger than .* allows \\({limit}\\)"):
        multiply[xpuc.NdRange(2 * limit, 2 * limit)](a, a, a)


def test_wrong_argument_count():
    with pytest.raises(TypeError, match=r"takes 3 arguments \(a, b, c\), got 2"):
        multiply[4](np.ones(4), np.ones(4))


def test_wrong_argument_type():
    a = xpuc.asarray(np.ones(4))
    with pytest.raises(TypeError, match="argument b is str"):
        multiply[4](a, "text", a)


def test_bad_ranges():
    with pytest.raises(ValueError, match="tuple of 1 to 3 ints"):
        multiply[1, 2, 3, 4]
    with pytest.raises(ValueError, match="tuple of 1 to 3 ints"):
        multiply[()]
    with pytest.raises(ValueError, match="negative"):
        multiply[-1]
    with pytest.raises(ValueError, match="negative"):
        xpuc.NdRange((8, -4), (4, 4))
    with pytest.raises(ValueError, match="zero size"):
        xpuc.NdRange(8, 0)


@pytest.mark.parametrize("launch_range", [(4, "8"), "8", 4.0, (4, 2.0), True, (None,), {4: 4}],
                         ids=repr)
def test_a_range_of_the_wrong_type_is_a_type_error(launch_range):
    with pytest.raises(TypeError, match="tuple of 1 to 3 ints"):
        multiply[launch_range]
    with pytest.raises(TypeError, match="tuple of 1 to 3 ints"):
        xpuc.NdRange(launch_range, 1)
    with pytest.raises(TypeError, match="launched over a range"):
        multiply(np.ones(4), np.ones(4), np.ones(4))


def test_dimension_beyond_the_range_is_refused():
    a = xpuc.asarray(np.zeros((4, 4)))
    with pytest.raises(xpuc.UnsupportedError, match="dimension 1 of a 1-D range"):
        coordinates[4](xpuc.asarray(np.zeros((4, 4, 6), dtype=np.int64)))
    del a


def test_a_kernel_returns_nothing():
    @xpuc.kernel
    def returns(a):
        return a[0]

    with pytest.raises(xpuc.UnsupportedError, match="a kernel returns nothing"):
        returns[1](xpuc.asarray(np.ones(1)))


def test_refusals_in_a_kernel_say_kernel_not_parfor_body():
    @xpuc.kernel
    def makes_a_list(a):
        i = xpuc.get_global_id(0)
        pair = [a[i], 1.0]
        a[i] = pair[0]

    @xpuc.kernel
    def sorts(a):
        i = xpuc.get_global_id(0)
        a[i] = np.sort(a)[0]

    first = makes_a_list.py_func.__code__.co_firstlineno
    with pytest.raises(xpuc.UnsupportedError) as refusal:
        makes_a_list[4](xpuc.asarray(np.ones(4)))
    assert str(refusal.value) == f"{__file__}:{first + 3}: a list in a kernel"
    with pytest.raises(xpuc.UnsupportedError) as refusal:
        sorts[4](xpuc.asarray(np.ones(4)))
    assert str(refusal.value).startswith(
        f"{__file__}:{sorts.py_func.__code__.co_firstlineno + 3}: call to numpy.sort of an "
        "array in a kernel, where")


def test_thread_count_in_a_kernel():
    @xpuc.kernel
    def counts(out):
        i = xpuc.get_global_id(0)
        out[i] = numba.get_num_threads()

    out = np.zeros(8, np.int64)
    with xpuc.device_context(DEVICE):
        counts[8](out)
    np.testing.assert_array_equal(out, numba.get_num_threads())


# every scalar kind, at the edges of its range, as a kernel and as a jit argument
SCALAR_ARGUMENTS = [
    np.bool_(True), np.bool_(False), np.int8(-128), np.int16(-32768), np.int32(-2**31),
    np.int64(-2**63), np.uint8(255), np.uint16(65535), np.uint32(2**32 - 1),
    np.uint64(2**64 - 1), np.float32(-3.4028235e38), np.float32(1e-45),
    np.float64(5e-324), np.float64(-np.inf), np.complex64(2 + 1j),
    np.complex64(-1.5 - 3.25e-40j), np.complex128(2 + 1j), np.complex128(-np.inf + 1e-300j),
]


@xpuc.kernel
def store_scalar(out, s):
    out[xpuc.get_global_id(0)] = s


@xpuc.jit
def store_scalar_in_parfor(out, s):
    for i in numba.prange(out.shape[0]):
        out[i] = s


@pytest.mark.parametrize("value", SCALAR_ARGUMENTS, ids=repr)
def test_scalar_arguments_of_every_kind_arrive_intact(value):
    expected = np.full(3, value)
    for launch in (lambda out: store_scalar[3](out, value),
                   lambda out: store_scalar_in_parfor(out, value)):
        out = np.zeros(3, value.dtype)
        xpuc.reset_stats()
        with xpuc.device_context(DEVICE):
            launch(out)
        assert xpuc.stats()["kernel_launches"] == 1
        np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))


@xpuc.kernel
def scale(a, b, s):
    i = xpuc.get_global_id(0)
    b[i] = a[i] * s


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_scalar_multiplies_a_kernels_array(dtype):
    a, b = np.ones(4, dtype), np.zeros(4, dtype)
    with xpuc.device_context(DEVICE):
        scale[4](a, b, dtype(2 + 1j))
    np.testing.assert_array_equal(b, np.full(4, 2 + 1j, dtype))


def test_a_launch_over_an_empty_range_does_nothing():
    out = np.full(4, 7.0)
    launches = [lambda: store_scalar[0](out, 1.0),
                lambda: store_scalar[xpuc.NdRange((0,), (4,))](out, 1.0),
                lambda: coordinates[0, 3](np.zeros((0, 3, 6), np.int64))]
    for launch in launches:
        xpuc.reset_stats()
        with xpuc.device_context(DEVICE):
            launch()
        stats = xpuc.stats()
        assert stats["kernel_launches"] == stats["h2d_bytes"] == stats["d2h_bytes"] == 0
    np.testing.assert_array_equal(out, 7.0)


@xpuc.kernel
def does_nothing(a):
    pass


@xpuc.kernel
def reads_only(a):
    unused = a[xpuc.get_global_id(0)] + 1  # noqa: F841


@pytest.mark.parametrize("kernel", [does_nothing, reads_only])
def test_a_kernel_with_no_effect_is_not_launched(kernel):
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        kernel[4](np.ones(4))
    stats = xpuc.stats()
    assert stats["kernels_compiled"] == 1  # compiled (its errors still show), not launched
    assert stats["kernel_launches"] == stats["h2d_bytes"] == stats["d2h_bytes"] == 0


@xpuc.kernel
def add_value(a, value):
    xpuc.atomic.add(a, 0, value)


@pytest.mark.parametrize(("dtype", "value", "message"), [
    (np.int32, 1.5, "a float64 value on an array of int32"),
    (np.int64, np.float32(2.0), "a float32 value on an array of int64"),
    (np.float64, 1 + 2j, "a complex128 value on an array of float64"),
    (np.uint32, np.float64(1.0), "a float64 value on an array of uint32"),
])
def test_an_atomic_value_of_another_kind_is_a_typing_error(dtype, value, message):
    with pytest.raises(numba.core.errors.TypingError, match=message):
        with xpuc.device_context(DEVICE):
            add_value[1](np.zeros(1, dtype), value)


@pytest.mark.parametrize(("dtype", "value"), [
    (np.int32, np.int64(3)), (np.int64, np.int8(3)), (np.float32, 3.0), (np.float64, 3)])
def test_an_atomic_converts_a_value_of_the_same_kind(dtype, value):
    a = np.zeros(1, dtype)
    with xpuc.device_context(DEVICE):
        add_value[4](a, value)
    np.testing.assert_array_equal(a, [12])


@xpuc.kernel
def reversed_in_groups(a):
    """Each work-group of 4 reverses its elements through local memory made
    with keyword arguments and the array's own dtype."""
    tile = xpuc.local.array(shape=4, dtype=a.dtype)
    i, local = xpuc.get_global_id(0), xpuc.get_local_id(0)
    tile[local] = a[i]
    xpuc.barrier()
    a[i] = tile[3 - local]


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_local_array_with_keywords_and_the_arrays_dtype(dtype):
    a = np.arange(8, dtype=dtype)
    with xpuc.device_context(DEVICE):
        reversed_in_groups[xpuc.NdRange(8, 4)](a)
    np.testing.assert_array_equal(a, [3, 2, 1, 0, 7, 6, 5, 4])


@xpuc.kernel
def metadata(a, out):
    out[0] = a.size
    out[1] = a.ndim
    out[2] = a.shape[0]
    out[3] = a.shape[a.ndim - 1]


@pytest.mark.parametrize("shape", [(7,), (2, 5), (3, 1, 4)])
def test_array_metadata_in_a_kernel(shape):
    out = np.zeros(4, np.int64)
    with xpuc.device_context(DEVICE):
        metadata[1](np.zeros(shape), out)
    np.testing.assert_array_equal(out, [np.prod(shape), len(shape), shape[0], shape[-1]])


def test_array_metadata_in_a_parfor_body():
    @xpuc.jit
    def scaled_by_size(a, out):
        for i in numba.prange(out.shape[0]):
            out[i] = a.size * 10 + a.ndim

    out = np.zeros(3, np.int64)
    with xpuc.device_context(DEVICE):
        scaled_by_size(np.zeros((4, 6)), out)
    np.testing.assert_array_equal(out, 242)


def test_an_unknown_name_under_xpuc_is_refused_with_its_line():
    @xpuc.kernel
    def misspelt(a):
        xpuc.atomic.nosuch(a, 0, 1)

    line = misspelt.py_func.__code__.co_firstlineno + 2
    with pytest.raises(xpuc.UnsupportedError,
                       match=rf"test_kernels.py:{line}: xpuc.atomic.nosuch does not exist "
                             r"\(xpuc.atomic offers add"):
        with xpuc.device_context(DEVICE):
            misspelt[1](np.zeros(1))


def test_a_keyword_argument_the_callee_does_not_take_is_refused():
    @xpuc.kernel
    def wrong_keyword(a):
        tile = xpuc.local.array(4, dtype=a.dtype, order="C")
        tile[0] = a[0]

    with pytest.raises(numba.core.errors.TypingError):
        with xpuc.device_context(DEVICE):
            wrong_keyword[1](np.zeros(1))


@xpuc.kernel
def prefix_sums_per_item(a, out):
    """Each work-item's own arrays, made three ways, 1-D and 2-D."""
    i = xpuc.get_global_id(0)
    running = np.zeros(4, np.float64)
    counts = np.ones((2, 3), np.int32)
    scratch = xpuc.private.array(shape=(2, 2), dtype=a.dtype)
    total = 0.0
    for j in range(4):
        total += a[i] * j
        running[j] = total
    scratch[1, 1] = running[3]
    counts[1, 2] += 1
    out[i, 0] = scratch[1, 1]
    out[i, 1] = running[0] + running[1] + running[2]
    out[i, 2] = counts[0, 0] + counts[1, 2]
    leftover = np.empty(3, np.float64)
    leftover[0] = a[i]
    out[i, 3] = leftover[0]


def test_private_arrays_in_a_kernel():
    a = np.arange(1.0, 9.0)
    out = np.zeros((8, 4))
    with xpuc.device_context(DEVICE):
        prefix_sums_per_item[8](a, out)
    np.testing.assert_array_equal(out, np.stack([6 * a, 4 * a, np.full(8, 3.0), a], axis=1))


ATOMIC_DTYPES = [np.int32, np.int64, np.uint32, np.float32, np.float64]


@xpuc.kernel
def every_atomic(values, out, olds):
    """Every work-item applies each atomic to its own slot of ``out``: the
    final values and the old values returned are those of a serial run in
    any order (the operations commute)."""
    i = xpuc.get_global_id(0)
    v = values[i]
    olds[0, i] = xpuc.atomic.add(out, 0, v)
    olds[1, i] = xpuc.atomic.sub(out, 1, v)
    olds[2, i] = xpuc.atomic.min(out, 2, v)
    olds[3, i] = xpuc.atomic.max(out, 3, v)
    olds[4, i] = xpuc.atomic.load(out, 4)


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
def test_atomic_add_sub_min_max_load(dtype):
    values = np.arange(1, 65, dtype=dtype)
    out = np.array([0, 10_000, 1_000, 0, 7], dtype=dtype)
    olds = np.zeros((5, 64), dtype)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        every_atomic[64](values, out, olds)
    assert xpuc.stats()["kernel_launches"] == 1
    np.testing.assert_array_equal(out, [values.sum(), 10_000 - values.sum(), 1, 64, 7])
    # each work-item saw some state before its own update: sums of a subset
    # of the values, never its own included
    assert set(olds[0]) <= set(range(int(values.sum()) + 1)) and len(set(olds[0])) == 64
    # the first min and max to land saw the initial values
    assert 1_000 in olds[2] and 0 in olds[3]
    np.testing.assert_array_equal(olds[4], 7)


@xpuc.kernel
def every_local_atomic(values, out, olds):
    """every_atomic on a local array, one per work-group of 16."""
    i, local, group = xpuc.get_global_id(0), xpuc.get_local_id(0), xpuc.get_group_id(0)
    slots = xpuc.local.array(5, values.dtype)
    if local == 0:
        slots[0], slots[1], slots[2], slots[3], slots[4] = 0, 10_000, 1_000, 0, 7
    xpuc.barrier()
    v = values[i]
    olds[0, i] = xpuc.atomic.add(slots, 0, v)
    olds[1, i] = xpuc.atomic.sub(slots, 1, v)
    olds[2, i] = xpuc.atomic.min(slots, 2, v)
    olds[3, i] = xpuc.atomic.max(slots, 3, v)
    olds[4, i] = xpuc.atomic.load(slots, 4)
    xpuc.barrier()
    if local < 5:
        out[group, local] = slots[local]


@pytest.mark.parametrize("dtype", ATOMIC_DTYPES)
def test_every_atomic_on_local_arrays(dtype):
    values = np.arange(1, 65, dtype=dtype)
    out = np.zeros((4, 5), dtype)
    olds = np.zeros((5, 64), dtype)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        every_local_atomic[xpuc.NdRange(64, 16)](values, out, olds)
    assert xpuc.stats()["kernel_launches"] == 1
    groups = values.reshape(4, 16)
    sums = groups.sum(1)
    expected = np.stack([sums, 10_000 - sums, groups.min(1), groups.max(1), np.full(4, 7)], 1)
    np.testing.assert_array_equal(out, expected.astype(dtype))
    for g in range(4):  # each work-item saw a distinct partial sum of its group's values
        assert len(set(olds[0, g * 16:(g + 1) * 16])) == 16
    np.testing.assert_array_equal(olds[4], 7)


@xpuc.kernel
def local_claims_and_bits(winners, bits):
    """In each work-group one work-item claims a local slot by a
    compare-exchange; all xor their bit into a local word."""
    i, local, group = xpuc.get_global_id(0), xpuc.get_local_id(0), xpuc.get_group_id(0)
    slot = xpuc.local.array(1, winners.dtype)
    word = xpuc.local.array(1, bits.dtype)
    if local == 0:
        slot[0] = -1
        word[0] = 0
    xpuc.barrier()
    if xpuc.atomic.compare_exchange(slot, 0, -1, i) == -1:
        winners[group, 1] = i  # only the winner gets -1 back
    xpuc.atomic.xor(word, 0, 1 << local)
    xpuc.barrier()
    if local == 0:
        winners[group, 0] = slot[0]
        bits[group] = word[0]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_compare_exchange_and_xor_on_local_arrays(dtype):
    winners = np.full((4, 2), -2, dtype)
    bits = np.zeros(4, dtype)
    with xpuc.device_context(DEVICE):
        local_claims_and_bits[xpuc.NdRange(64, 16)](winners, bits)
    assert (winners[:, 0] == winners[:, 1]).all()
    assert all(g * 16 <= w < (g + 1) * 16 for g, w in enumerate(winners[:, 0]))
    np.testing.assert_array_equal(bits, 0xFFFF)


@xpuc.kernel
def bitwise_atomics(bits, masks, out, olds):
    i = xpuc.get_global_id(0)
    olds[0, i] = xpuc.atomic.or_(out, 0, bits[i])
    olds[1, i] = xpuc.atomic.and_(out, 1, masks[i])
    olds[2, i] = xpuc.atomic.xor(out, 2, bits[i])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64])
def test_bitwise_atomics(dtype):
    bits = (np.ones(16, dtype) << np.arange(16).astype(dtype)).astype(dtype)
    out = np.array([0, np.iinfo(dtype).max if np.dtype(dtype).kind == "u" else -1, 0], dtype)
    olds = np.zeros((3, 16), dtype)
    with xpuc.device_context(DEVICE):
        bitwise_atomics[16](bits, ~bits, out, olds)
    np.testing.assert_array_equal(out[0], 0xFFFF)
    np.testing.assert_array_equal(out[1] & 0xFFFF, 0)
    np.testing.assert_array_equal(out[2], 0xFFFF)


@xpuc.kernel
def claim_slots(slots, owners, olds):
    """Each work-item tries to claim slot i // 4 with a compare-exchange: one
    of each four wins; the exchange keeps the last writer's id."""
    i = xpuc.get_global_id(0)
    olds[i] = xpuc.atomic.compare_exchange(slots, i // 4, -1, i)
    xpuc.atomic.exchange(owners, i // 4, i)
    xpuc.atomic.store(owners, i // 4 + 8, i)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_compare_exchange_exchange_and_store(dtype):
    slots, owners = np.full(8, -1, dtype), np.full(16, -1, dtype)
    olds = np.zeros(32, dtype)
    with xpuc.device_context(DEVICE):
        claim_slots[32](slots, owners, olds)
    for slot in range(8):
        group = np.arange(slot * 4, slot * 4 + 4)
        winners = group[olds[group] == -1]
        assert len(winners) == 1 and slots[slot] == winners[0]  # the rest saw the winner
        assert set(olds[group]) == {-1, slots[slot]}
        assert owners[slot] in group and owners[slot + 8] in group


@xpuc.kernel
def float_bitwise(a):
    xpuc.atomic.or_(a, 0, 1.0)


def test_bitwise_atomics_on_floats_are_typing_errors():
    with pytest.raises(numba.core.errors.TypingError, match="bitwise atomic on an array of "
                                                            "float64"):
        with xpuc.device_context(DEVICE):
            float_bitwise[1](np.zeros(1))


@xpuc.kernel
def local_counts(data, counts):
    i, local = xpuc.get_global_id(0), xpuc.get_local_id(0)
    bins = xpuc.local.array(4, np.int32)
    if local < 4:
        bins[local] = 0
    xpuc.barrier()
    xpuc.atomic.add(bins, data[i], 1)
    xpuc.atomic.max(bins, 3, data[i] + 100)
    xpuc.barrier()
    if local < 4:
        xpuc.atomic.add(counts, local, bins[local])


def test_integer_atomics_on_local_arrays():
    data = np.array([0, 1, 2, 1] * 8, dtype=np.int32)
    counts = np.zeros(4, np.int32)
    with xpuc.device_context(DEVICE):
        local_counts[xpuc.NdRange(32, 16)](data, counts)
    np.testing.assert_array_equal(counts, [8, 16, 8, 2 * 102])


@xpuc.kernel
def group_results(values, out):
    i, group = xpuc.get_global_id(0), xpuc.get_group_id(0)
    v = values[i]
    total = xpuc.group.reduce_add(v)
    low = xpuc.group.reduce_min(v)
    high = xpuc.group.reduce_max(v)
    product = xpuc.group.reduce_mul(v)
    if xpuc.get_local_id(0) == 3:  # every work-item has the results: one writes them
        out[group, 0] = total
        out[group, 1] = low
        out[group, 2] = high
        out[group, 3] = product


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_work_group_collectives(dtype):
    rng = np.random.default_rng(11)
    values = rng.integers(-3, 4, 64).astype(dtype)
    values[values == 0] = 1
    out = np.zeros((4, 4), dtype)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        group_results[xpuc.NdRange(64, 16)](values, out)
    assert xpuc.stats()["kernel_launches"] == 1
    groups = values.reshape(4, 16)
    expected = np.stack([groups.sum(1), groups.min(1), groups.max(1), groups.prod(1)], axis=1)
    np.testing.assert_array_equal(out, expected.astype(dtype))


@xpuc.kernel
def publish(data, flags, seen):
    """Work-item 0 of each group writes data, fences, then raises a flag that
    the others read after a barrier over global and local memory."""
    i, local = xpuc.get_global_id(0), xpuc.get_local_id(0)
    if local == 0:
        data[xpuc.get_group_id(0)] = 42.0
        xpuc.mem_fence(xpuc.GLOBAL_MEM_FENCE)
        flags[xpuc.get_group_id(0)] = 1
    xpuc.barrier(xpuc.GLOBAL_MEM_FENCE | xpuc.LOCAL_MEM_FENCE)
    xpuc.atomic_fence()
    seen[i] = data[xpuc.get_group_id(0)] * flags[xpuc.get_group_id(0)]


def test_fences_and_barrier_flags():
    data, flags, seen = np.zeros(4), np.zeros(4, np.int64), np.zeros(32)
    with xpuc.device_context(DEVICE):
        publish[xpuc.NdRange(32, 8)](data, flags, seen)
    np.testing.assert_array_equal(seen, 42.0)
    spirv = publish.inspect_mlir("spirv")
    assert "spirv.MemoryBarrier <Workgroup>, <AcquireRelease|CrossWorkgroupMemory>" in spirv
    assert ("spirv.ControlBarrier <Workgroup>, <Workgroup>, "
            "<AcquireRelease|WorkgroupMemory|CrossWorkgroupMemory>") in spirv
    assert "<SequentiallyConsistent|WorkgroupMemory|CrossWorkgroupMemory>" in spirv


def test_barrier_without_flags_orders_local_memory():
    with xpuc.device_context(DEVICE):
        group_sums[xpuc.NdRange(64, 64)](np.ones(64), np.zeros(1))
    assert ("spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>"
            in group_sums.inspect_mlir("spirv"))


def test_fence_flags_must_be_constant_fence_flags():
    @xpuc.kernel
    def bad_fence(a):
        xpuc.mem_fence(4)

    with pytest.raises(xpuc.UnsupportedError, match="fence flags 4"):
        with xpuc.device_context(DEVICE):
            bad_fence[1](np.zeros(1))


@numba.njit
def squared(x):
    return x * x


@xpuc.jit
def distance(points, i, j):
    """A device function taking an array and scalars, calling another."""
    return math.sqrt(squared(points[i, 0] - points[j, 0]) + squared(points[i, 1] - points[j, 1]))


@xpuc.kernel
def distances_to_first(points, out):
    i = xpuc.get_global_id(0)
    out[i] = distance(points, i, 0) + squared(1.5) - squared(1.5)


def test_device_functions_in_a_kernel():
    points = np.random.default_rng(2).random((16, 2))
    out = np.zeros(16)
    with xpuc.device_context(DEVICE):
        distances_to_first[16](points, out)
    np.testing.assert_allclose(out, np.hypot(*(points - points[0]).T), rtol=1e-14)


def test_device_functions_in_a_parfor_body():
    @xpuc.jit
    def all_distances(points, out):
        for i in numba.prange(points.shape[0]):
            for j in range(points.shape[0]):
                out[i, j] = distance(points, i, j)

    points = np.random.default_rng(3).random((12, 2))
    device, cpu = np.zeros((12, 12)), np.zeros((12, 12))
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        all_distances(points, device)
    assert xpuc.stats()["kernel_launches"] == 1
    all_distances(points, cpu)
    np.testing.assert_allclose(device, cpu, rtol=1e-15)


@numba.njit
def factorial(n):
    return 1 if n <= 1 else n * factorial(n - 1)


def test_recursion_in_a_device_function_is_refused():
    @xpuc.kernel
    def factorials(out):
        i = xpuc.get_global_id(0)
        out[i] = factorial(i)

    with pytest.raises(xpuc.UnsupportedError,
                       match=r"recursion \(factorials -> factorial -> factorial\)"):
        with xpuc.device_context(DEVICE):
            factorials[4](np.zeros(4, np.int64))
