"""Every math function a parfor body or kernel offers, in NumPy's and in
``math``'s spelling, against NumPy on the CPU: within ULPS units in the last
place over tiny, huge, negative, subnormal and non-finite inputs, for
float32 and float64; NaN where NumPy gives NaN, the same infinity where it
gives one."""

import math

import numba
import numpy as np
import pytest
from device_support import offload

import xpuc

ULPS = 4

# (NumPy ufunc, the math module's function of the same meaning or None)
FUNCTIONS = [
    (np.sin, math.sin), (np.cos, math.cos), (np.tan, math.tan),
    (np.arcsin, math.asin), (np.arccos, math.acos), (np.arctan, math.atan),
    (np.sinh, math.sinh), (np.cosh, math.cosh), (np.tanh, math.tanh),
    (np.arcsinh, math.asinh), (np.arccosh, math.acosh), (np.arctanh, math.atanh),
    (np.exp, math.exp), (np.exp2, None), (np.expm1, math.expm1),
    (np.log, math.log), (np.log2, math.log2), (np.log10, math.log10), (np.log1p, math.log1p),
    (np.sqrt, math.sqrt), (np.cbrt, None),
    (np.floor, None), (np.ceil, None), (np.trunc, None),
    (np.abs, math.fabs), (np.sign, None), (np.reciprocal, None), (np.square, None),
    (np.deg2rad, math.radians), (np.rad2deg, math.degrees),
]
BINARY_FUNCTIONS = [(np.arctan2, math.atan2), (np.hypot, math.hypot),
                    (np.copysign, math.copysign), (np.power, math.pow)]


def inputs(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    tiny = [info.smallest_subnormal, info.smallest_subnormal * 1000, info.tiny, 1e-30, 1e-7,
            1e-4]
    ordinary = [0.1, 0.5, 0.9999, 1.0, 1.0001, 1.5, 2.0, 3.0, 10.0, 88.0, 100.0, 700.0]
    huge = [1e10, 1e30, float(info.max)]
    magnitudes = tiny + ordinary + huge
    values = [0.0, -0.0, *magnitudes, *(-m for m in magnitudes), np.inf, -np.inf, np.nan]
    with np.errstate(over="ignore"):
        return np.array(values, dtype=np.float64).astype(dtype)


def ulp_distance(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """How many floats of their type lie between x and y."""
    bits = np.int32 if x.dtype == np.float32 else np.int64
    def ordered(v):
        raw = v.view(bits).astype(np.int64)
        return np.where(raw < 0, np.iinfo(bits).min - raw, raw)
    return np.abs(ordered(x) - ordered(y))


def assert_close_to_numpy(got: np.ndarray, want: np.ndarray, args: tuple) -> None:
    assert got.dtype == want.dtype
    nan = np.isnan(want)
    infinite = np.isinf(want)
    finite = ~nan & ~infinite
    bad = (nan != np.isnan(got)) | (infinite & (got != want))
    bad |= finite & (ulp_distance(np.where(finite, got, 0), np.where(finite, want, 0)) > ULPS)
    if bad.any():
        rows = [f"{tuple(a[k] for a in args)}: {got[k]!r}, NumPy {want[k]!r}"
                for k in np.flatnonzero(bad)]
        pytest.fail("differs from NumPy at\n" + "\n".join(rows))


def ufunc_program(ufunc):
    if ufunc.nin == 1:
        return xpuc.jit(lambda a: ufunc(a))
    return xpuc.jit(lambda a, b: ufunc(a, b))


def math_program(function, nargs: int):
    """A prange body applying the math module's ``function`` to each element."""
    if nargs == 1:
        def program(a, out):
            for i in numba.prange(a.shape[0]):
                out[i] = function(a[i])
    else:
        def program(a, b, out):
            for i in numba.prange(a.shape[0]):
                out[i] = function(a[i], b[i])
    return xpuc.jit(program)


def binary_inputs(dtype):
    values = inputs(dtype)
    return np.repeat(values, values.size), np.tile(values, values.size)


def cases(functions):
    return [pytest.param(ufunc, function, dtype, id=f"{ufunc.__name__}-{dtype.__name__}")
            for ufunc, function in functions for dtype in (np.float32, np.float64)]


@pytest.mark.parametrize(("ufunc", "function", "dtype"), cases(FUNCTIONS))
def test_unary_function_matches_numpy(ufunc, function, dtype):
    a = inputs(dtype)
    with np.errstate(all="ignore"):
        want = ufunc(a)
        assert_close_to_numpy(offload(ufunc_program(ufunc), a), want, (a,))
        if function is not None:
            out = np.zeros_like(a)
            offload(math_program(function, 1), a, out)
            assert_close_to_numpy(out, want, (a,))


@pytest.mark.parametrize(("ufunc", "function", "dtype"), cases(BINARY_FUNCTIONS))
def test_binary_function_matches_numpy(ufunc, function, dtype):
    a, b = binary_inputs(dtype)
    with np.errstate(all="ignore"):
        want = ufunc(a, b)
        assert_close_to_numpy(offload(ufunc_program(ufunc), a, b), want, (a, b))
        out = np.zeros_like(a)
        offload(math_program(function, 2), a, b, out)
        assert_close_to_numpy(out, want, (a, b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_expm1_and_log1p_keep_the_digits_of_small_arguments(dtype):
    # exp(x) - 1 and log(1 + x), what they were computed as, are off by 1e-4
    # relative (float32) for x near 1e-4 and give 0 for subnormal x
    a = np.array([1e-4, -1e-4, 1e-7, 3e-9, np.finfo(dtype).smallest_subnormal], dtype)
    np.testing.assert_array_equal(offload(ufunc_program(np.expm1), a) != 0, True)
    for ufunc in (np.expm1, np.log1p):
        got = offload(ufunc_program(ufunc), a)
        assert np.all(ulp_distance(got, ufunc(a)) <= ULPS), (ufunc, got, ufunc(a))


def test_math_functions_in_a_kernel_match_numpy():
    @xpuc.kernel
    def functions(a, out):
        i = xpuc.get_global_id(0)
        out[0, i] = math.expm1(a[i])
        out[1, i] = math.log1p(a[i])
        out[2, i] = math.asinh(a[i])
        out[3, i] = math.atanh(a[i])

    a = inputs(np.float64)
    out = np.zeros((4, a.size))
    with xpuc.device_context("opencl:cpu"):
        functions[a.size](a, out)
    with np.errstate(all="ignore"):
        for row, ufunc in enumerate((np.expm1, np.log1p, np.arcsinh, np.arctanh)):
            assert_close_to_numpy(out[row], ufunc(a), (a,))
