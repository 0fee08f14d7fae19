"""End to end: parfors of @xpuc.jit functions run as SPIR-V kernels on the
default device, with results equal to NumPy's. Each test also checks that
kernels were launched, so that a CPU path cannot pass it."""

import collections
import math
import re

import numba
import numpy as np
import pytest
from device_support import DEVICE, offload

import xpuc

rng = np.random.default_rng(0)


def data(shape, dtype, low=-3, high=3):
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(low, high, shape).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


@xpuc.jit
def fma(a, b, c):
    return a * b + c


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("shape", [(1000,), (37, 53), (5, 7, 11), (1,)])
def test_array_expression_dtypes_and_ranks(dtype, shape):
    a, b, c = (data(shape, dtype) for _ in range(3))
    result = offload(fma, a, b, c)
    assert result.dtype == (a * b + c).dtype
    np.testing.assert_allclose(result, a * b + c, rtol=1e-6)


@pytest.mark.parametrize("shape", [(0,), (0, 5), (5, 0)])
def test_array_expression_over_empty_arrays_launches_nothing(shape):
    @xpuc.jit
    def fresh_fma(a, b, c):  # compiled here: the stats show the offloaded path
        return a * b + c

    a = np.ones(shape)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        result = fresh_fma(a, a, a)
    stats = xpuc.stats()
    assert stats["kernels_compiled"] > 0 and stats["kernel_launches"] == 0
    assert result.shape == shape and result.dtype == np.float64


def test_in_place_arithmetic_on_bool_arrays_follows_numpy():
    @xpuc.jit
    def accumulate(a, b):
        a += b  # logical or
        c = a * b  # logical and
        c *= a
        return c + b

    rng = np.random.default_rng(7)
    a, b = rng.random(257) < 0.5, rng.random(257) < 0.5
    expected_a = a.copy()
    expected_a += b
    expected = expected_a * b
    expected *= expected_a
    result = offload(accumulate, a, b)
    assert result.dtype == np.bool_
    np.testing.assert_array_equal(result, expected + b)
    np.testing.assert_array_equal(a, expected_a)


def test_bool_arrays():
    @xpuc.jit
    def logic(p, q):
        return (p & ~q) | (p ^ q)

    p, q = data(100, np.bool_), data(100, np.bool_)
    result = offload(logic, p, q)
    np.testing.assert_array_equal(result, (p & ~q) | (p ^ q))


def test_scalars_mixed_in():
    @xpuc.jit
    def scaled(a, s, k):
        return s * a + k - 0.5

    a = data(1000, np.float64)
    result = offload(scaled, a, 2.5, 3)
    np.testing.assert_allclose(result, 2.5 * a + 3 - 0.5)


def test_float32_stays_float32_with_python_scalar():
    @xpuc.jit
    def scaled(a):
        return a * np.float32(2.0) + np.float32(1.0)

    a = data(100, np.float32)
    result = offload(scaled, a)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, a * 2 + 1, rtol=1e-6)


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_comparisons(op):
    fn = xpuc.jit(eval(f"lambda a, b: a {op} b"))
    a = data(500, np.float64).round()
    b = data(500, np.float64).round()
    result = offload(fn, a, b)
    assert result.dtype == np.bool_
    np.testing.assert_array_equal(result, eval(f"a {op} b"))


def test_where_in_prange():
    @xpuc.jit
    def clip_low(a, b, out):
        for i in numba.prange(a.shape[0]):
            out[i] = np.where(a[i] > b[i], a[i], b[i])

    a, b = data(300, np.float64), data(300, np.float64)
    out = np.zeros_like(a)
    offload(clip_low, a, b, out)
    np.testing.assert_array_equal(out, np.where(a > b, a, b))


UFUNCS = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "sqrt": np.sqrt,
    "log": np.log, "abs": np.abs, "fabs": np.fabs, "floor": np.floor, "ceil": np.ceil,
    "tanh": np.tanh, "arctan": np.arctan, "negative": np.negative,
}


@pytest.mark.parametrize("name", sorted(UFUNCS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_ufuncs(name, dtype):
    ufunc = UFUNCS[name]
    fn = xpuc.jit(lambda a: ufunc(a))
    a = data(1000, dtype, 0.1, 3) if name in ("sqrt", "log") else data(1000, dtype)
    result = offload(fn, a)
    assert result.dtype == ufunc(a).dtype
    np.testing.assert_allclose(result, ufunc(a), rtol=2e-6 if dtype == np.float32 else 1e-12,
                               atol=1e-6)


@pytest.mark.parametrize("name", ["minimum", "maximum", "power", "arctan2", "hypot",
                                  "copysign", "fmod"])
def test_binary_ufuncs(name):
    ufunc = getattr(np, name)
    fn = xpuc.jit(lambda a, b: ufunc(a, b))
    a, b = data(1000, np.float64, 0.5, 3), data(1000, np.float64, 0.5, 3)
    result = offload(fn, a, b)
    np.testing.assert_allclose(result, ufunc(a, b), rtol=1e-12)


MATH = {
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "exp": math.exp, "log": math.log,
    "sqrt": math.sqrt, "fabs": math.fabs, "floor": math.floor, "ceil": math.ceil,
    "atan": math.atan, "tanh": math.tanh, "erf": math.erf, "log1p": math.log1p,
    "expm1": math.expm1,
}


@pytest.mark.parametrize("name", sorted(MATH))
def test_math_functions_in_prange(name):
    fn_math = MATH[name]

    @xpuc.jit
    def apply(a, out):
        for i in numba.prange(a.shape[0]):
            out[i] = fn_math(a[i])

    a = data(1000, np.float64, 0.1, 2)
    out = np.zeros_like(a)
    offload(apply, a, out)
    np.testing.assert_allclose(out, [fn_math(x) for x in a], rtol=1e-12, atol=1e-15)


def test_python_builtins_in_prange():
    @xpuc.jit
    def mixed(a, b, out):
        for i in numba.prange(a.shape[0]):
            out[i] = min(a[i], b[i]) + max(a[i], 0.5) + abs(b[i]) + a[i] ** 2 + b[i] ** 0.5

    a, b = data(1000, np.float64), data(1000, np.float64, 0.1, 3)
    out = np.empty_like(a)
    offload(mixed, a, b, out)
    expected = np.minimum(a, b) + np.maximum(a, 0.5) + np.abs(b) + a**2 + b**0.5
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_integer_python_semantics():
    @xpuc.jit
    def arith(a, b, out_div, out_mod, out_true):
        for i in numba.prange(a.shape[0]):
            out_div[i] = a[i] // b[i]
            out_mod[i] = a[i] % b[i]
            out_true[i] = a[i] / b[i]

    a = data(1000, np.int64, -50, 50)
    b = data(1000, np.int64, 1, 9) * np.where(data(1000, np.bool_), 1, -1)
    outs = np.zeros_like(a), np.zeros_like(a), np.zeros(1000)
    offload(arith, a, b, *outs)
    np.testing.assert_array_equal(outs[0], a // b)
    np.testing.assert_array_equal(outs[1], a % b)
    np.testing.assert_allclose(outs[2], a / b)


def test_float_floor_division_and_modulo():
    a, b = data(1000, np.float64, -9, 9), data(1000, np.float64, -4, 4)
    result = offload(xpuc.jit(lambda a, b: a // b + a % b), a, b)
    np.testing.assert_allclose(result, a // b + a % b, rtol=1e-12)


def test_prange_affine_indexing_with_bounds():
    @xpuc.jit
    def stencil(a, out):
        for i in numba.prange(1, a.shape[0] - 1):
            out[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1]

    a = data(1001, np.float64)
    out = np.full_like(a, 7.0)
    offload(stencil, a, out)
    expected = np.full_like(a, 7.0)
    expected[1:-1] = 0.25 * a[:-2] + 0.5 * a[1:-1] + 0.25 * a[2:]
    np.testing.assert_allclose(out, expected)


def test_prange_uses_loop_index_and_writes_two_arrays():
    @xpuc.jit
    def ramp(out_f, out_i, n):
        for i in numba.prange(n):
            out_f[i] = i * 0.5
            out_i[i] = 2 * i + 1

    out_f, out_i = np.zeros(100), np.zeros(100, np.int32)
    offload(ramp, out_f, out_i, 60)
    np.testing.assert_array_equal(out_f[:60], np.arange(60) * 0.5)
    np.testing.assert_array_equal(out_f[60:], 0)
    np.testing.assert_array_equal(out_i[:60], 2 * np.arange(60) + 1)


def test_two_dimensional_indexing_in_prange():
    @xpuc.jit
    def transpose_add(a, out):
        for i in numba.prange(a.shape[0]):
            out[i, 0] = a[i, 0] + a[i, a.shape[1] - 1]

    a = data((17, 9), np.float64)
    out = np.zeros((17, 1))
    offload(transpose_add, a, out)
    np.testing.assert_allclose(out[:, 0], a[:, 0] + a[:, -1])


def test_negative_index_wraps_around():
    @xpuc.jit
    def last_plus(a, out):
        for i in numba.prange(a.shape[0]):
            out[i] = a[i] + a[-1]

    a = data(50, np.float64)
    out = np.zeros_like(a)
    offload(last_plus, a, out)
    np.testing.assert_allclose(out, a + a[-1])


@pytest.mark.parametrize("start, wraparounds", [(1, 0), (0, 1), (-3, 3)])
def test_prange_from_a_constant_start(start, wraparounds):
    """A constant start is part of the kernel, which keeps the wraparound
    (a select) only of the subscripts that may be negative: from 1 none of
    them, from 0 ``a[i - 1]``, from -3 all three."""
    @xpuc.jit
    def neighbours(a, out):
        for i in numba.prange(start, a.shape[0] - 1):  # a constant to Numba
            out[i] = a[i - 1] - 2.0 * a[i + 1]

    a = data(40, np.float64)
    out = np.zeros_like(a)
    offload(neighbours, a, out)
    assert neighbours.inspect_mlir("gpu").count("arith.select") == wraparounds
    expected = np.zeros_like(a)
    for i in range(start, a.shape[0] - 1):
        expected[i] = a[i - 1] - 2.0 * a[i + 1]
    np.testing.assert_array_equal(out, expected)


def test_several_parfors_and_host_code_between():
    @xpuc.jit
    def chain(a, b):
        c = a * 2.0 + b
        c[0] = 100.0  # host code writes between the two parfors
        return np.sqrt(np.abs(c)) + a

    a, b = data(1000, np.float64), data(1000, np.float64)
    result = offload(chain, a, b)
    c = a * 2.0 + b
    c[0] = 100.0
    np.testing.assert_allclose(result, np.sqrt(np.abs(c)) + a)
    assert xpuc.stats()["kernel_launches"] == 2


def test_outside_a_context_runs_numba_on_the_cpu():
    a = data(100, np.float64)
    xpuc.reset_stats()
    np.testing.assert_allclose(fma(a, a, a), a * a + a)
    assert xpuc.stats()["kernel_launches"] == 0


def test_compiled_once_per_signature_and_device():
    @xpuc.jit
    def twice(a):
        return a + 1.0

    a = data(10, np.float64)
    offload(twice, a)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        twice(a)
        twice(a * 2)
    assert xpuc.stats()["kernels_compiled"] == 0
    assert xpuc.stats()["kernel_launches"] == 2
    offload(twice, a.astype(np.float32))  # a new signature compiles again
    assert len(twice._devices) == 1


def test_inspect_mlir_and_spirv():
    @xpuc.jit
    def add(a, b):
        return a + b

    a = data(10, np.float32)
    offload(add, a, a)
    assert "scf.parallel" in add.inspect_mlir("linalg")
    assert "gpu.launch_func" in add.inspect_mlir("gpu")
    assert "spirv.module" in add.inspect_mlir("spirv")
    binaries = add.inspect_spirv()
    assert len(binaries) == 1
    (blob,) = binaries.values()
    assert blob[:4] == b"\x03\x02\x23\x07"  # SPIR-V magic number, little-endian


def test_inspecting_a_function_without_parfors_shows_none():
    """Compiled in this process with nothing to offload: no MLIR and no
    SPIR-V (not the message of a build loaded from the on-disk cache)."""
    doubled_length = xpuc.jit(lambda a: a.shape[0] * 2)
    with xpuc.device_context(DEVICE):
        assert doubled_length(data(3, np.float64)) == 6
    assert doubled_length.inspect_mlir("gpu") == "" and doubled_length.inspect_spirv() == {}


def test_wraps_an_existing_numba_dispatcher():
    plain = numba.njit(lambda a: a * 3.0)
    wrapped = xpuc.jit(plain)
    a = data(10, np.float64)
    result = offload(wrapped, a)
    np.testing.assert_allclose(result, a * 3.0)


def test_explicit_signature():
    @xpuc.jit("float64[:](float64[:])")
    def neg(a):
        return -a

    a = data(10, np.float64)
    result = offload(neg, a)
    np.testing.assert_allclose(result, -a)


@pytest.mark.parametrize("view", [
    lambda x: x[::2], lambda x: x[::-1], lambda x: x[3:-5], lambda x: x[::-3][2:],
])
def test_strided_views_in_and_out(view):
    @xpuc.jit
    def axpy(x, y, out):
        for i in numba.prange(x.shape[0]):
            out[i] = 2.0 * x[i] + y[i]

    x, y = data(101, np.float64), data(101, np.float64)
    out = np.zeros(101)
    offload(axpy, view(x), view(y), view(out))
    expected = np.zeros(101)
    view(expected)[:] = 2.0 * view(x) + view(y)
    np.testing.assert_array_equal(out, expected)


def test_two_dimensional_views():
    @xpuc.jit
    def add(a, b):
        return a + b

    a = data((20, 30), np.float64)
    for view in (a.T, a[1:-1, ::-2], np.asfortranarray(a)):
        result = offload(add, view, view)
        np.testing.assert_array_equal(result, view + view)


def test_views_with_and_without_unit_inner_strides_share_one_kernel():
    # the kernel runs its body with the constant 1 for the innermost strides
    # when all of them are 1 (slices of rows), and with the strides otherwise
    @xpuc.jit
    def combine(a, b, out):
        for i in numba.prange(a.shape[0]):
            for j in numba.prange(a.shape[1]):
                out[i, j] = a[i, j] + 2.0 * b[i, j] - i * j

    base, out = data((40, 60), np.float64), np.zeros((40, 60))
    compiled = []
    for views in (
        (np.s_[1:-1, 1:-1], np.s_[:-2, 2:], np.s_[2:, :-2]),  # inner strides 1
        (np.s_[:, ::2], np.s_[:, 1::2], np.s_[:, ::-2]),  # none 1
        (np.s_[1:-1, 1:31], np.s_[2:, ::2], np.s_[:-2, 30:]),  # one not 1
    ):
        a, b, window = base[views[0]], base[views[1]], out[views[2]]
        expected = out.copy()
        expected[views[2]] = a + 2.0 * b - np.multiply.outer(*map(np.arange, a.shape))
        offload(combine, a, b, window)
        compiled.append(xpuc.stats()["kernels_compiled"])
        np.testing.assert_array_equal(out, expected)
    assert compiled == [1, 0, 0]


@pytest.mark.usefixtures("copying_host_arrays")
def test_data_movement_of_numpy_arguments():
    """Inputs go in once, the result comes back, the freshly allocated result is
    not copied in, and every device buffer is freed when the call returns."""
    n = 1000
    a, b, c = (data(n, np.float64) for _ in range(3))
    result = offload(fma, a, b, c)
    assert isinstance(result, np.ndarray)
    counters = xpuc.stats()
    assert counters["h2d_bytes"] == 3 * 8 * n
    assert counters["d2h_bytes"] == 8 * n
    assert counters["usm_allocs"] == counters["usm_frees"] == 4


def test_array_written_in_place_is_copied_back():
    @xpuc.jit
    def scale_in_place(a, s):
        for i in numba.prange(a.shape[0]):
            a[i] = a[i] * s

    a = data(100, np.float32)
    expected = a * np.float32(3.0)
    offload(scale_in_place, a, np.float32(3.0))
    np.testing.assert_array_equal(a, expected)


def test_wrapped_dispatcher_keeps_its_explicit_signatures():
    wrapped = xpuc.jit(numba.njit("float64[:](float64[:])")(lambda a: a + 1.0))
    assert wrapped._signatures == [(numba.float64[:],)]
    result = offload(wrapped, np.zeros(4))
    np.testing.assert_array_equal(result, np.ones(4))


def test_integer_division_by_zero_gives_zero_like_numpy():
    a = np.array([7, -7, 5, 6], dtype=np.int64)
    b = np.array([2, 2, 0, 0], dtype=np.int64)
    result = offload(xpuc.jit(lambda a, b: a // b + a % b), a, b)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(result, a // b + a % b)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("divisor", [3, -3, 7, -2, -1, 1, 0])
def test_integer_remainders_of_the_extremes(dtype, divisor):
    """``%`` as Python takes it (Numba's answer) and ``np.fmod`` as C does
    (NumPy's: Numba's own fmod of integers is wrong), for the smallest and
    largest integers too: the smallest has no magnitude of its type, which
    the kernels' remainder once took (``-2**63 % 3`` came out as 2, not 1)."""
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min + 1, -7, 7, 0, info.max], dtype=dtype)
    d = np.full_like(a, divisor)
    remainder, fmod = offload(xpuc.jit(lambda a, d: (a % d, np.fmod(a, d))), a, d)
    np.testing.assert_array_equal(remainder, numba.njit(lambda a, d: a % d)(a, d))
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(fmod, np.fmod(a, d))


@pytest.mark.usefixtures("copying_host_arrays")
def test_one_array_passed_several_times_is_copied_in_once():
    a = data(1000, np.float64)
    offload(fma, a, a, a)
    assert xpuc.stats()["h2d_bytes"] == 8 * 1000


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_power(dtype):
    @xpuc.jit
    def power(a, b):
        return a ** b

    a = np.array([2, -3, 0, 1, -1, 7, 3, 2, -1, 5], dtype=dtype)
    b = np.array([10, 3, 0, 5, 7, 0, 40, -1, -3, -2], dtype=dtype)
    result = offload(power, a, b)
    np.testing.assert_array_equal(result, power(a, b))  # Numba on the CPU


@pytest.mark.parametrize("shape", [(3, 4, 5, 6), (2, 1, 3, 70), (2, 3, 2, 2, 5)])
def test_nests_deeper_than_a_kernel_fold_their_outer_loops(shape):
    a, b = data(shape, np.float64), data(shape, np.float64)
    result = offload(fma, a, b, a)
    np.testing.assert_allclose(result, a * b + a)


def test_writing_a_two_dimensional_slice_keeps_the_rest():
    @xpuc.jit
    def corner(a, b):
        b[1:, 1:] = a[1:, 1:]

    a, b = data((5, 6), np.float64), np.full((5, 6), 7.0)
    offload(corner, a, b)
    expected = np.full((5, 6), 7.0)
    expected[1:, 1:] = a[1:, 1:]
    np.testing.assert_array_equal(b, expected)


def test_zero_dimensional_operand_broadcasts():
    @xpuc.jit
    def add(x, y):
        return x + y

    for y in (np.ones(3), np.ones((2, 4))):
        result = offload(add, np.array(5.0), y)
        np.testing.assert_array_equal(result, 5.0 + y)


@xpuc.jit
def float32_accumulation(a, out):
    for i in numba.prange(a.shape[0]):
        total = np.float32(0)
        for j in range(a.shape[1]):
            total += a[i, j] * np.float32(2)
        out[i] = total + np.int64(1) + np.uint8(200)


def test_numpy_scalar_constructors():
    a = np.random.default_rng(5).random((40, 8), dtype=np.float32)
    out, expected = np.zeros(40, np.float32), np.zeros(40, np.float32)
    offload(float32_accumulation, a, out)
    float32_accumulation(a, expected)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    # the accumulation stays in float32, as Numba types it
    assert re.search(r"arith\.mulf [^\n]* : f32", float32_accumulation.inspect_mlir("linalg"))


SCALE = np.float32(0.5)
OFFSET = np.int64(3)


@xpuc.jit
def numpy_scalar_constants(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = a[i] * SCALE + OFFSET + np.uint8(1)


def test_numpy_scalar_constants_made_outside():
    a = np.arange(10, dtype=np.float32)
    out = np.zeros(10)
    offload(numpy_scalar_constants, a, out)
    np.testing.assert_allclose(out, a * 0.5 + 4)


@xpuc.jit
def add_one(x):
    return x + 1


def test_a_jit_function_passed_into_numba_code_runs_its_cpu_build():
    @numba.njit
    def apply(fn, x):
        return fn(x)

    @numba.njit
    def calls(x):
        return add_one(x) * 2

    assert apply(add_one, 2) == 3
    assert calls(2) == 6


@xpuc.jit
def weighted(a, out, weights):
    low, high = weights
    for i in numba.prange(a.shape[0]):
        out[i] = a[i] * weights[0] + high - low * (weights[1] > 2)


def test_tuple_of_scalars_from_outside_the_loop():
    a = np.arange(8.0)
    out, expected = np.zeros(8), np.zeros(8)
    offload(weighted, a, out, (1.5, 3))
    weighted(a, expected, (1.5, 3))
    np.testing.assert_array_equal(out, expected)


@xpuc.jit
def row_and_column_views(m, out):
    for i in numba.prange(m.shape[0]):
        row = m[i]                       # partial indexing: a row
        odd = m[i, 1::2]                 # a strided slice
        column = m[::-1, i % m.shape[1]]  # a reversed column
        tail = m[i][-3:]                 # a view of a view, from the end
        out[i] = (row[0] + odd[-1] * 10 + column[0] * 100 + tail.sum()
                  + len(odd) + column.shape[0] + np.sum(m[i, 5:-1:-2]))


@pytest.mark.parametrize("layout", ["C", "transposed"])
def test_slices_and_partial_indexing_in_prange(layout):
    m = data((6, 7), np.float64)
    if layout == "transposed":
        m = np.ascontiguousarray(data((7, 6), np.float64)).T
    out, expected = np.zeros(6), np.zeros(6)
    offload(row_and_column_views, m, out)
    row_and_column_views.py_func(m, expected)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.parametrize("bounds", [(1, 3), (-4, None), (None, -2), (-100, 100), (5, 2),
                                    (None, None)])
def test_slice_bounds_follow_python(bounds):
    start, stop = bounds

    @xpuc.jit
    def sums(a, out):
        for i in numba.prange(out.shape[0]):
            # (not len(): Numba's array analysis makes an empty slice's
            # length negative, on the CPU as here)
            out[i] = a[i, start:stop].sum() * 2 + a[i, start:stop][::-1].sum()

    a = data((4, 6), np.int64)
    out, expected = np.zeros(4, np.int64), np.zeros(4, np.int64)
    offload(sums, a, out)
    sums.py_func(a, expected)
    np.testing.assert_array_equal(out, expected)


def test_writes_through_a_row_view():
    @xpuc.jit
    def fill(n):
        b = np.zeros((n, n + 1))
        for i in numba.prange(n):
            row = b[i]
            for j in range(n + 1):
                row[j] = i * 10 + j
        return b

    np.testing.assert_array_equal(offload(fill, 5), fill.py_func(5))


def test_tuple_indexed_by_the_loop_index():
    @xpuc.jit
    def pick(a, weights):
        total = 0.0
        for i in numba.prange(a.shape[0]):
            total += a[i] * weights[i % 4] + weights[-1 - i % 2]
        return total

    a = data(103, np.float64)
    weights = (0.5, 2.0, -1.0, 3.0)
    np.testing.assert_allclose(offload(pick, a, weights), pick.py_func(a, weights), rtol=1e-12)


def test_scalar_types_as_conversions_in_prange():
    @xpuc.jit
    def convert(a):
        for i in numba.prange(a.shape[0]):
            a[i] = a.dtype.type(i) / 4 + numba.int64(a[i]) + numba.float32(0.1)

    a = data(50, np.float64)
    expected = a.copy()
    convert.py_func(expected)
    offload(convert, a)
    np.testing.assert_array_equal(a, expected)


Pair = collections.namedtuple("Pair", ("low", "high"))


def test_namedtuple_fields_in_prange():
    @xpuc.jit
    def clip(a, bounds):
        for i in numba.prange(a.shape[0]):
            a[i] = min(max(a[i], bounds.low), bounds.high)

    a = data(100, np.float64)
    expected = np.clip(a, -1.0, 2.0)
    offload(clip, a, Pair(-1.0, 2.0))
    np.testing.assert_array_equal(a, expected)


def test_thread_count_in_prange():
    @xpuc.jit
    def counts(out, launching):
        numba.set_num_threads(launching)
        for i in numba.prange(out.shape[0]):
            out[i, 0] = numba.get_num_threads()  # the launching thread's count
            numba.set_num_threads(1 + i % launching)
            out[i, 1] = numba.get_num_threads()  # the body's own setting

    launching = numba.config.NUMBA_NUM_THREADS
    out = np.zeros((20, 2), np.int64)
    offload(counts, out, launching)
    np.testing.assert_array_equal(out[:, 0], launching)
    np.testing.assert_array_equal(out[:, 1], 1 + np.arange(20) % launching)
    assert numba.get_num_threads() == launching


def test_thread_count_in_a_reduction():
    @xpuc.jit
    def total(n, most):
        acc = 0
        for i in numba.prange(n):
            numba.set_num_threads(1 + i % most)
            acc += numba.get_num_threads()
        return acc

    most = numba.config.NUMBA_NUM_THREADS
    assert offload(total, 101, most) == total.py_func(101, most)


def complex_data(n, dtype):
    return (data(n, np.float64) + 1j * data(n, np.float64)).astype(dtype)


@xpuc.jit
def complex_arithmetic(a, b, out):
    for i in numba.prange(a.shape[0]):
        x = a[i] * b[i] - np.conj(a[i]) / (b[i] + 1j) + 2.5
        out[i] = x + abs(x) + x.real - x.imag * 2 + np.real(a[i]) + np.imag(b[i]) \
            + complex(1.5, -2) - (-x)


@pytest.mark.parametrize("dtypes", [(np.complex128, np.complex128), (np.complex64, np.complex64),
                                    (np.complex128, np.complex64)], ids=str)
def test_complex_arithmetic_in_prange(dtypes):
    a, b = (complex_data(200, dtype) for dtype in dtypes)
    out = np.zeros(200, np.result_type(*dtypes))
    expected = out.copy()
    offload(complex_arithmetic, a, b, out)
    numba.njit(complex_arithmetic.py_func)(a, b, expected)
    rtol = 1e-12 if out.dtype == np.complex128 else 1e-5
    np.testing.assert_allclose(out, expected, rtol=rtol)


def test_complex_division_by_a_small_or_zero_part():
    @xpuc.jit
    def divide(a, b):
        return a / b

    a = complex_data(6, np.complex128)
    b = np.array([1e-300 + 1j, 1 + 1e-300j, 3 - 4j, -2j, 5.0, 1e300 + 1e300j])
    np.testing.assert_allclose(offload(divide, a, b), a / b, rtol=1e-15)


def test_complex_array_expressions_and_constructors():
    @xpuc.jit
    def build(n, start, step):
        return np.ones(n, dtype=np.complex64) + np.complex128(1.0), np.arange(start, n, step)

    ones, steps = offload(build, 7, 2, 0.5 + 1j)
    expected_ones, expected_steps = build.py_func(7, 2, 0.5 + 1j)
    np.testing.assert_array_equal(ones, expected_ones)
    np.testing.assert_allclose(steps, expected_steps, rtol=1e-15)


def test_chunk_size_inside_prange_is_the_default():
    @xpuc.jit
    def chunk_sizes(out):
        with numba.parallel_chunksize(4):
            for i in numba.prange(out.shape[0]):
                out[i] = numba.get_parallel_chunksize()
        return numba.get_parallel_chunksize()

    out = np.full(10, -1)
    assert offload(chunk_sizes, out) == 0
    np.testing.assert_array_equal(out, 0)


def test_number_assigned_to_a_row_or_slice_in_prange():
    @xpuc.jit
    def fill(x, sz, v):
        for i in numba.pndindex(sz):  # i is a 1-tuple: x[i] is a row
            x[i] = v
        for i in numba.prange(x.shape[0]):
            x[i, 1::3] = -i
        return x

    x, expected = np.zeros((10, 7)), np.zeros((10, 7))
    offload(fill, x, 4, 2.5)
    fill.py_func(expected, (4,), 2.5)
    np.testing.assert_array_equal(x, expected)


def exp_through(module):
    """A function that calls ``module.exp``, the module held by its closure."""
    @xpuc.jit
    def through(a):
        out = np.empty_like(a)
        for i in numba.prange(a.shape[0]):
            out[i] = module.exp(a[i])
        return out

    return through


@pytest.mark.parametrize("module", [math, np])
def test_a_module_held_by_a_closure_is_called_in_a_body(module):
    a = data((100,), np.float64)
    np.testing.assert_allclose(offload(exp_through(module), a), np.exp(a), rtol=1e-14)
