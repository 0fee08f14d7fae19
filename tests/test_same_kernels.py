"""The same explicit kernels (and parfors updating shared elements) on a SYCL
device and on a CUDA one, giving the same answers: ids and sizes over ranges
and NdRanges, local memory and barriers, fences, atomics on global and local
arrays (integers and floats, compare-exchange), work-group collectives,
private arrays and device functions, and a histogram parfor.

Each case runs its kernel under ``device_context(device)`` with NumPy arrays
and compares with NumPy's answer, exactly (float atomics add integers, which
any order sums exactly). Without a GPU every case is compiled for ``sm_90``,
its PTX checked by ptxas (tests/conftest.py); the CUDA runs are marked
``cuda`` and skip where there is no GPU (scripts/cuda-device-tests.sh runs
them there), the SYCL runs skip where there is no dpctl."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
import pytest

import xpuc
from xpuc import cuda_runtime
from xpuc.errors import DeviceError
from xpuc.explicit_kernels import _dividing_work_group


def _has_cuda() -> bool:
    try:
        return cuda_runtime.device_count() > 0
    except DeviceError:
        return False


DEVICES = [
    pytest.param("opencl:cpu", marks=pytest.mark.skipif(
        importlib.util.find_spec("dpctl") is None, reason="no dpctl (no SYCL device)")),
    pytest.param("cuda:0", marks=[pytest.mark.cuda, pytest.mark.skipif(
        not _has_cuda(), reason="no CUDA device")]),
]
GROUP = 64
RANGE_WITH_BARRIERS = 3000  # no block the occupancy calculator picks (32 k items) divides it


@numba.njit
def _squared_distance(x, y):
    return (x - y) * (x - y)


@xpuc.kernel
def ids_and_sizes(out):
    i, j = xpuc.get_global_id(0), xpuc.get_global_id(1)
    out[i, j, 0] = xpuc.get_local_id(0) * 100 + xpuc.get_local_id(1)
    out[i, j, 1] = xpuc.get_group_id(0) * 100 + xpuc.get_group_id(1)
    out[i, j, 2] = xpuc.get_global_size(0) * 100 + xpuc.get_global_size(1)
    out[i, j, 3] = xpuc.get_local_size(0) * 100 + xpuc.get_local_size(1)


@xpuc.kernel
def scaled(a, out):
    """Over a range the runtime's blocks do not divide: the work-items past
    it must write nothing, and the global size is the range's."""
    i = xpuc.get_global_id(0)
    out[i] = a[i] * 2 + xpuc.get_global_size(0)


@xpuc.kernel
def grid(out):
    i, j, k = xpuc.get_global_id(0), xpuc.get_global_id(1), xpuc.get_global_id(2)
    out[i, j, k] = i * 10000 + j * 100 + k + xpuc.get_global_size(2) * 1000000


@xpuc.kernel
def tree_sums(a, sums):
    """Each work-group sums its elements in local memory, a barrier a level."""
    i, local = xpuc.get_global_id(0), xpuc.get_local_id(0)
    partial = xpuc.local.array(GROUP, np.float64)
    partial[local] = a[i]
    xpuc.barrier(xpuc.LOCAL_MEM_FENCE)
    stride = GROUP // 2
    while stride > 0:
        if local < stride:
            partial[local] += partial[local + stride]
        xpuc.barrier()
        stride //= 2
    if local == 0:
        sums[xpuc.get_group_id(0)] = partial[0]


@xpuc.kernel
def through_local_memory(a, out):
    """Over a range with no local size: the work-groups the runtime picks
    must divide it (on CUDA, blocks past the range would skip the barrier)."""
    i, local = xpuc.get_global_id(0), xpuc.get_local_id(0)
    tile = xpuc.local.array(RANGE_WITH_BARRIERS, np.float64)
    tile[local] = a[i]
    xpuc.barrier()
    whole = xpuc.group.reduce_max(local) + 1 == xpuc.get_local_size(0)
    out[i] = tile[local] + whole


@xpuc.kernel
def publish(data, flags, seen):
    i, local, group = xpuc.get_global_id(0), xpuc.get_local_id(0), xpuc.get_group_id(0)
    if local == 0:
        data[group] = 42.0
        xpuc.mem_fence(xpuc.GLOBAL_MEM_FENCE)
        flags[group] = 1
    xpuc.barrier(xpuc.GLOBAL_MEM_FENCE | xpuc.LOCAL_MEM_FENCE)
    xpuc.atomic_fence()
    seen[i] = data[group] * flags[group]


@xpuc.kernel
def histogram(data, counts, totals, weights):
    i = xpuc.get_global_id(0)
    xpuc.atomic.add(counts, data[i], 1)
    xpuc.atomic.add(totals, data[i], weights[i])


@xpuc.kernel
def extremes(values, ints, floats, olds):
    """Atomics on int64 and float32 elements, and the values they return."""
    i = xpuc.get_global_id(0)
    v = values[i]
    xpuc.atomic.max(ints, 0, np.int64(v))
    xpuc.atomic.min(ints, 1, np.int64(v))
    xpuc.atomic.sub(ints, 2, np.int64(1))
    xpuc.atomic.or_(ints, 3, np.int64(1) << (i % 60))
    xpuc.atomic.max(floats, 0, np.float32(v))
    xpuc.atomic.min(floats, 1, np.float32(v))
    olds[i] = xpuc.atomic.add(floats, 2, np.float32(1))


@xpuc.kernel
def first_claim(claims, winners):
    """One work-item wins the compare-exchange; the others see its value."""
    i = xpuc.get_global_id(0)
    old = xpuc.atomic.compare_exchange(claims, 0, 0, i + 1)
    if old == 0:
        xpuc.atomic.add(winners, 0, 1)
    winners[1 + i] = xpuc.atomic.load(claims, 0)


@xpuc.kernel
def local_histogram(data, counts):
    """Per-group counts in local memory (local atomics), then one global
    atomic per bin and group."""
    i, local = xpuc.get_global_id(0), xpuc.get_local_id(0)
    bins = xpuc.local.array(16, np.int32)
    if local < 16:
        bins[local] = 0
    xpuc.barrier()
    xpuc.atomic.add(bins, data[i], 1)
    xpuc.barrier()
    if local < 16:
        xpuc.atomic.add(counts, local, bins[local])


@xpuc.kernel
def collectives(values, out):
    i, group = xpuc.get_global_id(0), xpuc.get_group_id(0)
    v = values[i]
    total = xpuc.group.reduce_add(v)
    low = xpuc.group.reduce_min(v)
    high = xpuc.group.reduce_max(v)
    product = xpuc.group.reduce_mul(v)
    if xpuc.get_local_id(0) == 3:
        out[group, 0] = total
        out[group, 1] = low
        out[group, 2] = high
        out[group, 3] = product


@xpuc.kernel
def private_and_device_function(points, out):
    """A private array of the work-item's own, and a device function."""
    i = xpuc.get_global_id(0)
    reversed_point = xpuc.private.array(3, np.float64)
    for k in range(3):
        reversed_point[k] = points[i, 2 - k]
    total = 0.0
    for k in range(3):
        total += _squared_distance(points[i, k], reversed_point[k])
    out[i] = total


@xpuc.jit
def histogram_parfor(index, weights, counts, totals):
    """SPEC rule 12: elements several iterations update, atomically."""
    for i in numba.prange(index.shape[0]):
        counts[index[i]] += 1
        totals[index[i]] += weights[i]


@xpuc.jit
def column_sums(a):
    """A reduction into an array in a prange (atomic updates of its elements)."""
    acc = np.zeros(a.shape[1])
    for i in numba.prange(a.shape[0]):
        acc += a[i]
    return acc


@dataclass(frozen=True)
class Case:
    """A kernel (or jit function) run on a device: ``run`` takes the device's
    context entered and returns what it computed, ``expected`` NumPy's."""

    run: Callable[[], list[np.ndarray]]
    expected: Callable[[], list[np.ndarray]]
    compiles: tuple  # (kernel, Numba argument types, range rank) compiled for sm_90


_RNG_SEED = 7


def _rng() -> np.random.Generator:
    return np.random.default_rng(_RNG_SEED)


def _ids_and_sizes():
    out = np.zeros((8, 12, 4), np.int64)
    ids_and_sizes[xpuc.NdRange((8, 12), (4, 3))](out)
    return [out]


def _ids_and_sizes_expected():
    i, j = np.meshgrid(np.arange(8), np.arange(12), indexing="ij")
    return [np.stack([(i % 4) * 100 + j % 3, (i // 4) * 100 + j // 3,
                      np.full_like(i, 812), np.full_like(i, 403)], axis=-1)]


N_TAIL = 1_000_003


def _scaled():
    a = np.arange(N_TAIL + 5, dtype=np.float32)
    out = np.full(N_TAIL + 5, -1, np.float32)
    scaled[N_TAIL](a, out)  # the last 5 elements are past the range
    return [out]


def _scaled_expected():
    out = np.arange(N_TAIL + 5, dtype=np.float32) * 2 + np.float32(N_TAIL)
    out[N_TAIL:] = -1
    return [out]


def _grid():
    out = np.zeros((5, 7, 9), np.int64)
    grid[(5, 7, 9)](out)
    return [out]


def _grid_expected():
    i, j, k = np.meshgrid(np.arange(5), np.arange(7), np.arange(9), indexing="ij")
    return [i * 10000 + j * 100 + k + 9000000]


def _tree_sums():
    a = np.arange(GROUP * 16, dtype=np.float64)
    sums = np.zeros(16)
    tree_sums[xpuc.NdRange(a.size, GROUP)](a, sums)
    return [sums]


def _tree_sums_expected():
    return [np.arange(GROUP * 16, dtype=np.float64).reshape(16, GROUP).sum(1)]


def _through_local_memory():
    a = np.arange(RANGE_WITH_BARRIERS, dtype=np.float64)
    out = np.zeros(RANGE_WITH_BARRIERS)
    through_local_memory[RANGE_WITH_BARRIERS](a, out)
    return [out]


def _through_local_memory_expected():
    return [np.arange(RANGE_WITH_BARRIERS, dtype=np.float64) + 1]


def _publish():
    data, flags, seen = np.zeros(4), np.zeros(4, np.int64), np.zeros(32)
    publish[xpuc.NdRange(32, 8)](data, flags, seen)
    return [seen, flags]


def _publish_expected():
    return [np.full(32, 42.0), np.ones(4, np.int64)]


def _histogram_inputs():
    rng = _rng()
    return rng.integers(0, 16, 10_000), rng.integers(-8, 9, 10_000).astype(np.float64)


def _histogram():
    data, weights = _histogram_inputs()
    counts, totals = np.zeros(16, np.int32), np.zeros(16)
    histogram[data.size](data, counts, totals, weights)
    return [counts, totals]


def _histogram_expected():
    data, weights = _histogram_inputs()
    return [np.bincount(data, minlength=16).astype(np.int32),
            np.bincount(data, weights, minlength=16)]


def _extremes_values():
    return _rng().integers(-1000, 1000, 4096)


def _extremes():
    values = _extremes_values()
    ints = np.array([-(2 ** 62), 2 ** 62, 0, 0], np.int64)
    floats = np.array([-1e30, 1e30, 0], np.float32)
    olds = np.zeros(values.size, np.float32)
    extremes[values.size](values, ints, floats, olds)
    return [ints, floats, np.sort(olds)]


def _extremes_expected():
    values = _extremes_values()
    bits = np.bitwise_or.reduce(np.int64(1) << (np.arange(values.size) % 60))
    return [np.array([values.max(), values.min(), -values.size, bits], np.int64),
            np.array([values.max(), values.min(), values.size], np.float32),
            np.arange(values.size, dtype=np.float32)]


def _first_claim():
    claims, winners = np.zeros(1, np.int64), np.zeros(1 + 1000, np.int64)
    first_claim[1000](claims, winners)
    # the winner is whichever work-item came first: the same claim everywhere
    return [winners[0:1], np.array([np.all(winners[1:] == claims[0]), 1 <= claims[0] <= 1000])]


def _first_claim_expected():
    return [np.array([1]), np.array([True, True])]


def _local_histogram_data():
    return _rng().integers(0, 16, GROUP * 32)


def _local_histogram():
    data = _local_histogram_data()
    counts = np.zeros(16, np.int32)
    local_histogram[xpuc.NdRange(data.size, GROUP)](data, counts)
    return [counts]


def _local_histogram_expected():
    return [np.bincount(_local_histogram_data(), minlength=16).astype(np.int32)]


def _collective_values(dtype):
    values = _rng().integers(-3, 4, 8 * GROUP).astype(dtype)
    values[values == 0] = 1
    values[np.abs(values) == 3] = 1  # products stay small
    return values


def _collectives(dtype):
    def run():
        out = np.zeros((8, 4), dtype)
        collectives[xpuc.NdRange(8 * GROUP, GROUP)](_collective_values(dtype), out)
        return [out]

    def expected():
        groups = _collective_values(dtype).reshape(8, GROUP)
        return [np.stack([groups.sum(1), groups.min(1), groups.max(1), groups.prod(1)],
                         axis=1).astype(dtype)]

    return run, expected


def _points():
    return _rng().integers(-50, 50, (999, 3)).astype(np.float64)


def _private():
    points = _points()
    out = np.zeros(len(points))
    private_and_device_function[len(points)](points, out)
    return [out]


def _private_expected():
    points = _points()
    return [((points - points[:, ::-1]) ** 2).sum(1)]


def _histogram_parfor():
    data, weights = _histogram_inputs()
    counts, totals = np.zeros(16, np.int64), np.zeros(16)
    histogram_parfor(data, weights, counts, totals)
    return [counts, totals]


def _histogram_parfor_expected():
    data, weights = _histogram_inputs()
    return [np.bincount(data, minlength=16), np.bincount(data, weights, minlength=16)]


def _matrix():
    return _rng().integers(-9, 10, (3000, 7)).astype(np.float64)


def _column_sums():
    return [column_sums(_matrix())]


def _column_sums_expected():
    return [_matrix().sum(0)]


def _array(dtype, ndim: int = 1) -> numba.types.Array:
    return numba.types.Array(numba.from_dtype(np.dtype(dtype)), ndim, "C")


_I64, _F64, _F32, _I32 = (numba.int64, numba.float64, numba.float32, numba.int32)
CASES = {
    "ids_and_sizes": Case(_ids_and_sizes, _ids_and_sizes_expected,
                          (ids_and_sizes, (_array(np.int64, 3),), 2)),
    "range_tail": Case(_scaled, _scaled_expected,
                       (scaled, (_array(np.float32), _array(np.float32)), 1)),
    "grid_3d": Case(_grid, _grid_expected, (grid, (_array(np.int64, 3),), 3)),
    "local_memory_barrier": Case(_tree_sums, _tree_sums_expected,
                                 (tree_sums, (_array(np.float64), _array(np.float64)), 1)),
    "barrier_over_a_range": Case(
        _through_local_memory, _through_local_memory_expected,
        (through_local_memory, (_array(np.float64), _array(np.float64)), 1)),
    "fences": Case(_publish, _publish_expected,
                   (publish, (_array(np.float64), _array(np.int64), _array(np.float64)), 1)),
    "atomics_int_float": Case(_histogram, _histogram_expected,
                              (histogram, (_array(np.int64), _array(np.int32),
                                           _array(np.float64), _array(np.float64)), 1)),
    "atomics_min_max_old": Case(_extremes, _extremes_expected,
                                (extremes, (_array(np.int64), _array(np.int64),
                                            _array(np.float32), _array(np.float32)), 1)),
    "compare_exchange": Case(_first_claim, _first_claim_expected,
                             (first_claim, (_array(np.int64), _array(np.int64)), 1)),
    "local_atomics": Case(_local_histogram, _local_histogram_expected,
                          (local_histogram, (_array(np.int64), _array(np.int32)), 1)),
    **{f"collectives_{np.dtype(dtype).name}": Case(
        *_collectives(dtype), (collectives, (_array(dtype), _array(dtype, 2)), 1))
       for dtype in (np.int32, np.int64, np.float32, np.float64)},
    "private_array_device_function": Case(
        _private, _private_expected,
        (private_and_device_function, (_array(np.float64, 2), _array(np.float64)), 1)),
    "histogram_parfor": Case(_histogram_parfor, _histogram_parfor_expected, ()),
    "array_reduction_parfor": Case(_column_sums, _column_sums_expected, ()),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES)
def test_same_answers(case, device, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")  # every parfor on the device
    with xpuc.device_context(device):
        got = CASES[case].run()
    for found, expected in zip(got, CASES[case].expected(), strict=True):
        np.testing.assert_array_equal(found, expected)


@pytest.mark.parametrize("case", [name for name, case in CASES.items() if case.compiles])
def test_kernels_become_ptx(case):
    """Every kernel compiles for an H100 without one (ptxas checks the PTX)."""
    kernel, argtypes, ndim = CASES[case].compiles
    compiled = kernel.compile(argtypes, ndim, "sm_90")
    ptx = compiled.lowered.ptx.decode()
    assert f".entry {compiled.module.name}(" in ptx
    assert compiled.lowered.passes_range
    # barriers, and the collectives' (their blocks must divide a range)
    waits = case in ("barrier_over_a_range", "local_memory_barrier", "fences",
                     "local_atomics") or case.startswith("collectives")
    assert compiled.lowered.waits_for_work_group == waits
    assert ("bar.sync" in ptx) == waits


def _as_float32(nbtype: numba.types.Type) -> numba.types.Type:
    if isinstance(nbtype, numba.types.Array) and nbtype.dtype == _F64:
        return nbtype.copy(dtype=_F32)
    return _F32 if nbtype == _F64 else nbtype


# the kernels that compute in float64 whatever their arguments: each refusal's line
# (its float64 local or private array's first use)
_FLOAT64_SCRATCH = {"local_memory_barrier": "partial[local] = a[i]",
                    "barrier_over_a_range": "tile[local] = a[i]",
                    "private_array_device_function": "total = 0.0"}


@pytest.mark.parametrize("case", [name for name, case in CASES.items() if case.compiles])
def test_float32_kernels_compile_for_gpus_without_fp64(case, monkeypatch):
    """With float32 for float64 arguments, as on an Arc GPU (dg2, no fp64):
    every kernel compiles for it (conftest builds each with ocloc), but those
    whose own arrays are float64, which are refused naming the line."""
    monkeypatch.setenv("XPUC_FP64", "0")
    kernel, argtypes, ndim = CASES[case].compiles
    argtypes = tuple(map(_as_float32, argtypes))
    if case not in _FLOAT64_SCRATCH:
        assert kernel.compile(argtypes, ndim, "dg2").lowered.spirv
        return
    with pytest.raises(xpuc.UnsupportedError) as refused:
        kernel.compile(argtypes, ndim, "dg2")
    source = open(__file__).read().splitlines()
    line = next(n for n, text in enumerate(source, 1) if _FLOAT64_SCRATCH[case] in text)
    assert f"{__file__}:{line}), but dg2 has no fp64" in str(refused.value)


@pytest.mark.parametrize("global_size, shape", [
    ((1000,), (250,)), ((1_000_003,), (1,)), ((8, 12), (8, 12)), ((4096, 4096), (1, 256)),
    ((3, 5, 7), (3, 5, 7)),
])
def test_a_range_of_a_kernel_waiting_for_its_work_group_is_divided(global_size, shape):
    """What a CUDA launch of such a kernel over a range gets as its blocks."""
    assert _dividing_work_group(global_size) == shape


@pytest.mark.parametrize("device", DEVICES[1:])
def test_a_work_group_larger_than_a_cuda_block_is_refused(device):
    out = np.zeros(2048, np.float32)
    with xpuc.device_context(device), pytest.raises(
            ValueError, match=r"kernel scaled: work-group of 2048 items \(2048,\) is larger "
                              r"than .* allows \(1024\)"):
        scaled[xpuc.NdRange(2048, 2048)](out, out)


@pytest.mark.parametrize("device", DEVICES[1:])
def test_kernels_take_cuda_arrays_in_place(device):
    """CuPy arrays (no device context): the kernels write them on their GPU."""
    cupy = pytest.importorskip("cupy")
    data, weights = _histogram_inputs()
    counts, totals = cupy.zeros(16, cupy.int32), cupy.zeros(16)
    histogram[data.size](cupy.asarray(data), counts, totals, cupy.asarray(weights))
    sums = cupy.zeros(16)
    tree_sums[xpuc.NdRange(GROUP * 16, GROUP)](cupy.arange(GROUP * 16, dtype=cupy.float64), sums)
    for found, expected in zip([counts, totals, sums],
                               [*_histogram_expected(), *_tree_sums_expected()], strict=True):
        np.testing.assert_array_equal(cupy.asnumpy(found), expected)
