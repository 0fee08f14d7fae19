"""Parfor reductions in a GPU's shape on a CUDA Target: each thread reduces a
grid-strided share of the iterations, each warp combines its threads'
results with shuffles, each block its warps' in shared memory, and the host
combines one partial result per block (parfor_reductions.reduction_layout).
Without a GPU: the layout, the PTX (validated by ptxas in tests/conftest.py)
and the launch plan. On one (tests marked ``cuda``): every kind of
reduction against NumPy, around the layout's edges."""

import cmath

import numba
import numpy as np
import pytest
from test_cuda_jit import cuda

import xpuc
from xpuc import aot, cuda_runtime
from xpuc.frontend.parfor_reductions import (
    REDUCTION_WORK_ITEMS,
    ReductionLayout,
    reduction_layout,
)
from xpuc.passes import Target
from xpuc.passes.libdevice import libdevice_path
from xpuc.targets import arch_target, target_for


def _has_libdevice() -> bool:
    try:
        libdevice_path()
    except xpuc.XpucError:
        return False
    return True


needs_libdevice = pytest.mark.skipif(not _has_libdevice(), reason="no libdevice")


def total(a):
    s = 0
    for i in numba.prange(a.shape[0]):
        s += a[i]
    return s


def sum_of_squares(a):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        s += a[i] * a[i]
    return s


def product(a):
    s = 1.0
    for i in numba.prange(a.shape[0]):
        s *= a[i]
    return s


def low_high(a):
    low, high = a[0], a[0]
    for i in numba.prange(a.shape[0]):
        low = min(low, a[i])
        high = max(high, a[i])
    return low, high


def numpy_extremes(a):
    return np.min(a), np.max(a)


def arg_extremes(a):
    return np.argmin(a), np.argmax(a)


def any_positive(a):
    found = False
    for i in numba.prange(a.shape[0]):
        found = max(found, a[i] > 0)
    return found


def complex_total(a):
    s = 0j
    for i in numba.prange(a.shape[0]):
        s += a[i]
    return s


def complex_product(a):
    s = 1 + 0j
    for i in numba.prange(a.shape[0]):
        s *= a[i]
    return s


def last_value(a):
    x = 0.0
    for i in numba.prange(a.shape[0]):
        x = a[i] * 2.0
    return x


def rows_total(a):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        for j in numba.prange(a.shape[1]):
            s += a[i, j] * a[i, j]
    return s


def view_total(a):
    return np.sum(a[1:, ::2])


# (function, the signature compiled without a GPU)
KINDS = [
    (total, "float64(float64[::1])"), (total, "float32(float32[::1])"),
    (total, "int64(int64[::1])"), (total, "int64(int8[::1])"),
    (sum_of_squares, "float64(float64[::1])"), (product, "float64(float64[::1])"),
    (low_high, "UniTuple(float64, 2)(float64[::1])"),
    (low_high, "UniTuple(int32, 2)(int32[::1])"), (low_high, "UniTuple(int8, 2)(int8[::1])"),
    (numpy_extremes, "UniTuple(float32, 2)(float32[::1])"),
    (arg_extremes, "UniTuple(int64, 2)(float64[::1])"),
    (numpy_extremes, "UniTuple(boolean, 2)(boolean[::1])"),
    (arg_extremes, "UniTuple(int64, 2)(boolean[::1])"), (any_positive, "boolean(float64[::1])"),
    (complex_total, "complex128(complex128[::1])"),
    (complex_product, "complex64(complex64[::1])"),
    (last_value, "float64(float64[::1])"), (rows_total, "float64(float64[:, ::1])"),
    (view_total, "float64(float64[:, :])"),
]
SM90 = arch_target("sm_90")


def compiled_parfors(fn, signature: str, arch: str = "sm_90") -> list:
    (compiled,) = aot.compile_function(xpuc.jit(signature)(fn), arch).signatures
    return compiled.parfors


def test_a_cuda_target_reduces_in_blocks_that_fill_the_device():
    """A block of 8 warps per 256 threads an SM holds, on every SM of the
    architecture's largest part (no device to ask: ``--arch``)."""
    assert reduction_layout(SM90) == ReductionLayout(lanes=32, group_size=256, groups=132 * 8)
    assert reduction_layout(SM90).partial_count == 132 * 8
    assert reduction_layout(arch_target("sm_86")).groups == 84 * 6


def test_a_cuda_device_fills_its_own_multiprocessors():
    """An H100 PCIe has 114 SMs, not the SXM's 132 that ``--arch sm_90`` assumes."""
    device = cuda_runtime.CudaDevice(0, 0, "NVIDIA H100 PCIe", (9, 0), multiprocessors=114)
    target = target_for(device)
    assert (target.sm_arch, target.reduction_groups) == ("sm_90", 114 * 8)


def test_a_sycl_target_keeps_the_lanes_of_its_vectors():
    layout = reduction_layout(Target(vector_lanes=16))
    assert layout == ReductionLayout(lanes=16)
    assert layout.partial_count == REDUCTION_WORK_ITEMS


@needs_libdevice
def test_warps_shuffle_and_blocks_meet_in_shared_memory():
    (parfor,) = compiled_parfors(sum_of_squares, "float64(float64[::1])")
    ptx = parfor.lowered.ptx.decode()
    # five halvings of a warp, a float64 moved as two 32-bit halves each
    assert ptx.count("shfl.sync.down.b32") == 10
    assert "bar.sync" in ptx
    assert ".shared .align 8 .b8 sum_of_squares_parfor0_body_group0[64]" in ptx  # 8 warps
    (launch,) = parfor.lowered.plan.launches
    assert launch.own_blocks  # the launch passes its block: the kernel's tree needs all of it
    constants = parfor.lowered.plan.evaluate([0] * parfor.lowered.plan.num_params)
    assert [constants[v] for v in launch.grid] == [132 * 8, 1, 1]
    assert [constants[v] for v in launch.block] == [256, 1, 1]
    assert parfor.kernel.partial_count == 132 * 8


@needs_libdevice
def test_narrow_integers_travel_widened_through_shuffles():
    (parfor,) = compiled_parfors(low_high, "UniTuple(int8, 2)(int8[::1])")
    shuffles = [line for line in parfor.lowered.text("gpu").splitlines()
                if "gpu.shuffle" in line]
    assert len(shuffles) == 10 and all(line.endswith(": i32") for line in shuffles)


@needs_libdevice
@pytest.mark.parametrize("fn, signature", KINDS, ids=lambda x: getattr(x, "__name__", x))
def test_every_kind_of_reduction_becomes_ptx(fn, signature):
    for parfor in compiled_parfors(fn, signature):
        assert "shfl.sync.down" in parfor.lowered.ptx.decode()
        assert all(launch.own_blocks for launch in parfor.lowered.plan.launches)


# --- on a GPU ----------------------------------------------------------------------------

rng = np.random.default_rng(30)
# one element; fewer than a warp; a partial block; one more than a full pass
# of the H100's threads (132 * 8 blocks of 256); a few passes, ragged
SIZES = [1, 17, 300, 270_337, 3_000_001]


def _inputs(fn, n: int) -> np.ndarray:
    if fn is product:  # near 1, so that the product neither overflows nor underflows
        return rng.uniform(0.999, 1.001, n)
    if fn is complex_product:
        return np.exp(1j * rng.uniform(-1e-3, 1e-3, n))
    if fn is complex_total:
        return rng.standard_normal(n) + 1j * rng.standard_normal(n)
    if fn is arg_extremes:  # ties: the first of equal values wins
        return rng.integers(-5, 5, n).astype(np.float64)
    if fn is rows_total:
        return rng.random((n, 3))
    if fn is view_total:
        return rng.random((3, 2 * n + 1))
    return rng.standard_normal(n)


def _expected(fn, a: np.ndarray) -> object:
    expected = {
        total: lambda: a.sum(), sum_of_squares: lambda: np.dot(a, a),
        product: lambda: np.prod(a), low_high: lambda: (a.min(), a.max()),
        numpy_extremes: lambda: (a.min(), a.max()),
        arg_extremes: lambda: (a.argmin(), a.argmax()), complex_total: lambda: a.sum(),
        any_positive: lambda: bool((a > 0).any()),
        complex_product: lambda: cmath.exp(1j * np.angle(a).astype(np.float64).sum()),
        last_value: lambda: a[-1] * 2.0, rows_total: lambda: (a * a).sum(),
        view_total: lambda: a[1:, ::2].sum(),
    }
    return expected[fn]()


GPU_CASES = [(total, np.float64), (total, np.float32), (total, np.int64), (total, np.int32),
             (total, np.int8), (sum_of_squares, np.float64), (product, np.float64),
             (low_high, np.float64), (low_high, np.int32), (low_high, np.int8),
             (numpy_extremes, np.float32),
             (arg_extremes, np.float64), (numpy_extremes, np.bool_), (arg_extremes, np.bool_),
             (any_positive, np.float64), (complex_total, np.complex128),
             (complex_product, np.complex128), (last_value, np.float64),
             (rows_total, np.float64), (view_total, np.float64)]


@cuda
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("fn, dtype", GPU_CASES,
                         ids=lambda x: getattr(x, "__name__", str(x)))
def test_reductions_on_a_cuda_device_match_numpy(fn, dtype, n, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")  # every parfor on the device
    a = _inputs(fn, n)
    if dtype is np.bool_:  # the first False and the first True anywhere
        a = rng.integers(0, 2, a.shape).astype(dtype)
    elif a.dtype.kind in "iu" or np.dtype(dtype).kind in "iu":
        a = rng.integers(-100, 100, a.shape).astype(dtype)
    else:
        a = a.astype(dtype)
    offloaded = xpuc.jit(fn)
    before = xpuc.stats()["kernel_launches"]
    with xpuc.device_context("cuda:0"):
        got = offloaded(a)
    assert xpuc.stats()["kernel_launches"] > before
    want = _expected(fn, a)
    if np.dtype(dtype).kind in "iub" or fn in (low_high, numpy_extremes, arg_extremes,
                                                last_value, any_positive):
        assert np.array_equal(got, want)  # integers, extremes and positions: exactly
    else:
        rtol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(a).sum() * 1e-3)


@cuda
def test_a_nan_is_the_extreme_of_argmin_and_argmax_as_in_numpy(monkeypatch):
    """Across warps and blocks, as in a body: a NaN wins, the first NaN of two."""
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    a = rng.standard_normal(1_000_000)
    a[[654_321, 900_000]] = np.nan
    with xpuc.device_context("cuda:0"):
        assert xpuc.jit(arg_extremes)(a) == (654_321, 654_321)


@cuda
def test_the_device_says_how_many_blocks_fill_it():
    device = cuda_runtime.CudaDevice.open(0)
    groups = target_for(device).reduction_groups
    assert device.multiprocessors > 0 and groups % device.multiprocessors == 0
