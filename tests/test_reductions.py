"""Reductions in parfors: the iterations are cut into chunks of rows of lanes,
each work-item reduces its lane of its chunk's rows, the host combines the
partial results with the variable's value from before the loop. Results are
compared with NumPy / Numba's CPU."""

import math
import os
import subprocess
import sys

import dpctl
import numba
import numpy as np
import pytest
from device_support import DEVICE, offload
from mlir import ir

import xpuc
from xpuc.frontend.parfor_reductions import REDUCTION_WORK_ITEMS, reduction_lanes
from xpuc.passes.ir_queries import ops_named
from xpuc.passes.lane_strides import Stride, access_strides
from xpuc.targets import target_for

rng = np.random.default_rng(3)


@xpuc.jit
def array_methods(a):
    return a.sum(), a.prod(), a.min(), a.max(), a.mean()


@xpuc.jit
def numpy_functions(a):
    return np.sum(a), np.prod(a), np.min(a), np.max(a), np.mean(a)


@pytest.mark.parametrize("fn", [array_methods, numpy_functions], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("shape", [(10_001,), (37, 53), (5, 7, 11)])
def test_whole_array_reductions(fn, dtype, shape):
    # near 1, so that products neither overflow nor underflow
    a = (rng.uniform(0.99, 1.01, shape) if np.dtype(dtype).kind == "f"
         else rng.integers(-1, 2, shape)).astype(dtype)
    small = a if a.size < 100 else a[..., :3] if a.ndim > 1 else a[:40]
    small = np.ascontiguousarray(small)
    for x in (a, small):
        expected = fn.py_func(x)
        result = offload(fn, x)
        rtol = 1e-4 if dtype == np.float32 else 1e-10
        for got, want in zip(result, expected):
            if np.dtype(dtype).kind == "f":
                np.testing.assert_allclose(got, want, rtol=rtol)
            else:
                assert got == want


# around the layout's edges: fewer iterations than lanes, a partial last row,
# fewer rows than chunks, rows that do not divide among the chunks
_LANES = reduction_lanes(target_for(dpctl.SyclDevice(DEVICE)).vector_lanes)
_CHUNKS = REDUCTION_WORK_ITEMS // _LANES


@pytest.mark.parametrize("n", [1, 7, 8, 9, _LANES * _CHUNKS - 1, _LANES * _CHUNKS,
                               _LANES * _CHUNKS + 1, _LANES * (_CHUNKS + 1) + 3, 100_003])
def test_every_iteration_counted_once(n):
    @xpuc.jit
    def weighted(a):
        total, count, last = 0, 0, -1
        for i in numba.prange(a.shape[0]):
            total += a[i] * (i + 1)
            count += 1
            last = max(last, i)
        return total, count, last

    a = rng.integers(-5, 6, n)
    assert offload(weighted, a) == weighted.py_func(a)


def test_prange_reductions_of_several_variables():
    @xpuc.jit
    def stats(a):
        total, squares, low, high, count = 0.0, 0.0, np.inf, -np.inf, 0
        for i in numba.prange(a.shape[0]):
            total += a[i]
            squares += a[i] * a[i]
            low = min(low, a[i])
            high = max(high, a[i])
            count += 1
        return total, squares, low, high, count

    a = rng.normal(size=100_003)
    got = offload(stats, a)
    want = stats.py_func(a)
    np.testing.assert_allclose(got[:2], want[:2], rtol=1e-11)
    assert got[2:] == want[2:]


def test_subtraction_division_and_initial_values():
    @xpuc.jit
    def odd_ops(a):
        down, ratio = 100.0, 3.0
        for i in numba.prange(a.shape[0]):
            down -= a[i]
            ratio /= a[i]
        return down, ratio

    a = rng.uniform(0.9, 1.1, 1000)
    np.testing.assert_allclose(offload(odd_ops, a), odd_ops.py_func(a), rtol=1e-11)


def test_reduction_in_a_two_dimensional_nest_with_bounds():
    @xpuc.jit
    def inner_sum(m):
        total = 0
        for i in numba.prange(1, m.shape[0] - 1):
            total += m[i, 0] + m[i, m.shape[1] - 1]
        return total

    m = rng.integers(-100, 100, (50, 9))
    assert offload(inner_sum, m) == inner_sum.py_func(m)


def test_integer_sum_is_exact():
    a = np.full(1_000_000, 2**40 + 1, dtype=np.int64)
    assert offload(numpy_functions, a)[0] == a.sum()


def test_empty_arrays_give_the_identity_or_numpys_error():
    empty = np.zeros(0)
    assert offload(xpuc.jit(lambda a: a.sum()), empty) == 0.0
    assert offload(xpuc.jit(lambda a: a.prod()), empty) == 1.0
    with pytest.raises(ValueError):
        with xpuc.device_context(DEVICE):
            xpuc.jit(lambda a: a.max())(empty)


def test_reduction_with_control_flow_in_the_body():
    @xpuc.jit
    def positive_sum(a):
        total = 0.0
        for i in numba.prange(a.shape[0]):
            if a[i] > 0:
                total += a[i]
        return total

    a = rng.normal(size=5000)
    np.testing.assert_allclose(offload(positive_sum, a), a[a > 0].sum(), rtol=1e-12)


def test_float32_sum_accuracy():
    a = rng.uniform(0, 1, 2_000_000).astype(np.float32)
    exact = a.astype(np.float64).sum()
    assert abs(offload(numpy_functions, a)[0] - exact) / exact < 1e-5


@pytest.mark.parametrize("device_lanes, lanes", [(1, 1), (8, 8), (12, 8), (16, 16),
                                                 (10_000, REDUCTION_WORK_ITEMS)])
def test_reduction_lanes_are_a_power_of_two_within_the_work_items(device_lanes, lanes):
    assert reduction_lanes(device_lanes) == lanes


@xpuc.jit
def prange_sum(a):
    s = a.dtype.type(0)
    for i in numba.prange(a.shape[0]):
        s += a[i]
    return s


def test_reduction_lanes_follow_the_devices_vector_width():
    offload(prange_sum, np.ones(100))
    width = dpctl.SyclDevice(DEVICE).native_vector_width_float
    assert target_for(dpctl.SyclDevice(DEVICE)).vector_lanes == width
    assert f"arith.constant {reduction_lanes(width)} : index" in prange_sum.inspect_mlir("linalg")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_sums_are_as_accurate_as_numpys_pairwise_sum(dtype):
    # work-items add their shares with compensated steps and the host adds
    # their partial sums pairwise: a float32 sum of 4M terms is exact to a few
    # ulps, where adding them one by one is off by thousands
    a = rng.random(4_000_003).astype(dtype)
    exact = math.fsum(a.astype(np.float64))
    got = offload(prange_sum, a)
    ulp = np.spacing(dtype(exact))
    assert abs(float(got) - exact) <= max(abs(float(np.sum(a)) - exact), 2 * ulp)


def test_float_sums_keep_infinities_and_nans():
    for special, expected in [(np.inf, np.inf), (-np.inf, -np.inf), (np.nan, np.nan)]:
        a = rng.random(10_000)
        a[1234] = special
        np.testing.assert_equal(offload(prange_sum, a), expected)
    overflowing = np.full(1000, np.finfo(np.float64).max)
    assert offload(prange_sum, overflowing) == np.inf
    assert offload(prange_sum, -overflowing) == -np.inf


@xpuc.jit
def weighted_by_position(a):
    """Terms that tell every (i, j) apart, with bounds that do not start at 0."""
    total, low, count = 0.0, np.inf, 0
    for i in numba.prange(1, a.shape[0]):
        for j in numba.prange(2, a.shape[1]):
            total += a[i, j] * (i + 1000 * j)
            low = min(low, a[i, j] - i)
            count += 1
    return total, low, count


# rows narrower than the lanes, as wide, wider and not a multiple; fewer
# rows than chunks and more
@pytest.mark.parametrize("shape", [(2, 3), (5, _LANES + 2), (_CHUNKS + 3, 1 + 2),
                                   (3, _LANES - 1 + 2), (7, 3 * _LANES + 5), (1, 2), (4, 0),
                                   (0, 9)])
def test_nested_reductions_around_the_layouts_edges(shape):
    # a nest's lanes take neighbouring innermost indices of each row
    a = rng.uniform(-1, 1, shape)
    got = offload(weighted_by_position, a)
    total, low, count = weighted_by_position.py_func(a)
    np.testing.assert_allclose(got[0], total, rtol=1e-12, atol=1e-12)
    assert got[1:] == (low, count)


def test_three_dimensional_reductions_and_loop_invariant_sums():
    @xpuc.jit
    def nest(a):
        total, ones = 0.0, 0.0
        for i in numba.prange(a.shape[0]):
            for j in numba.prange(a.shape[1]):
                for k in numba.prange(a.shape[2]):
                    total += a[i, j, k] * (i + 10 * j + 100 * k)
                    ones += 1.0
        return total, ones

    a = rng.uniform(size=(3, 5, _LANES + 3))
    i, j, k = np.indices(a.shape)
    total, ones = offload(nest, a)
    np.testing.assert_allclose(total, np.sum(a * (i + 10 * j + 100 * k)), rtol=1e-12)
    assert ones == a.size


def test_nested_reductions_read_neighbouring_elements_in_neighbouring_lanes():
    # what lets the device load a vector where it gathered element by element
    @xpuc.jit
    def total(a):
        return a.sum()

    offload(total, rng.uniform(size=(20, 30)))
    with ir.Context():
        module = ir.Module.parse(total.inspect_mlir("gpu"))
        (kernel,) = ops_named(module.operation, "gpu.func")
        loads = [stride for op, stride in access_strides(kernel) if op.name == "memref.load"]
    assert loads == [Stride.UNIT]


def test_reductions_over_views_with_and_without_unit_inner_strides():
    # as map kernels, a reduction kernel runs the body with the constant 1
    # for the views' innermost strides when all of them are 1
    @xpuc.jit
    def weighted_sum_and_max(a, b):
        total, high = 0.0, -np.inf
        for i in numba.prange(a.shape[0]):
            for j in numba.prange(a.shape[1]):
                total += a[i, j] * b[i, j]
                high = max(high, a[i, j] - b[i, j])
        return total, high

    base = rng.normal(size=(50, 70))
    compiled = []
    for first, second in ((np.s_[1:-1, 1:-1], np.s_[2:, :-2]),  # inner strides 1
                          (np.s_[:, ::2], np.s_[:, 1::2]),  # none 1
                          (np.s_[:, 1:36], np.s_[:, ::-2])):  # one not 1
        a, b = base[first], base[second]
        total, high = offload(weighted_sum_and_max, a, b)
        compiled.append(xpuc.stats()["kernels_compiled"])
        np.testing.assert_allclose(total, np.sum(a * b), rtol=1e-12)
        assert high == np.max(a - b)
    assert compiled == [1, 0, 0]


@xpuc.jit
def arg_extremes(a):
    return np.argmin(a), np.argmax(a), a.argmin(), a.argmax()


@pytest.mark.parametrize("values", [
    rng.normal(size=100_003),
    np.array([3.0, 1.0, 1.0, 5.0, 5.0, 1.0]),             # ties go to the first index
    np.array([1.0, np.nan, 0.0, np.nan, -np.inf]),        # the first NaN wins
    rng.integers(-3, 4, (37, 53)),
    rng.integers(0, 200, 5000).astype(np.uint8),
    np.float32([2, 2, 2]),
], ids=["normal", "ties", "nan", "int-2d", "uint8", "float32"])
def test_argmin_and_argmax(values):
    assert offload(arg_extremes, values) == arg_extremes.py_func(values)


@pytest.mark.parametrize("n", [1, 9, 211, 100_003])
def test_loop_invariant_float_sums(n):
    # regression: these came out as garbage when the last row's scf.if
    # yielded the partial results (a device-compiler vectorizer bug)
    @xpuc.jit
    def counts(n, weight):
        ones, weighted = 0.0, 0.0
        for _i in numba.prange(n):
            ones += 1.0
            weighted += weight
        return ones, weighted

    assert offload(counts, n, 0.5) == (float(n), 0.5 * n)
    assert offload(xpuc.jit(lambda n: np.ones(n).sum()), n) == float(n)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_sums_products_and_statistics(dtype):
    @xpuc.jit
    def moments(a):
        total, rotation = 0j, 1 + 0j
        for i in numba.prange(a.shape[0]):
            total += a[i]
            rotation *= a[i] / abs(a[i])
        return total, rotation, a.mean(), a.var(), np.sum(a)

    a = (rng.normal(size=1001) + 1j * rng.normal(size=1001)).astype(dtype)
    rtol = 1e-9 if dtype == np.complex128 else 1e-3
    for got, want in zip(offload(moments, a), numba.njit(moments.py_func)(a)):
        np.testing.assert_allclose(got, want, rtol=rtol)


def test_variables_assigned_in_the_loop_keep_the_last_assignment():
    @xpuc.jit
    def last(a, limit):
        seen = -1
        for i in numba.prange(a.shape[0]):
            seen = i
            if a[i] > limit:  # assigned in some iterations only
                found = a[i]
                above = True
        return found, seen, above

    a = rng.uniform(0, 1, 10_001)
    for limit in (0.5, 0.99):
        assert offload(last, a, limit) == last.py_func(a, limit)


_REDUCTION_AND_LAST_VALUE = """
import numba, xpuc

@xpuc.jit
def both(n):
    total, last = 0, 0.0
    for i in numba.prange(n):
        total += i
        last = i * 0.5
    return total, last

with xpuc.device_context("opencl:cpu"):
    print(both(999))
"""


@pytest.mark.parametrize("hash_seed", ["1", "2", "3"])
def test_last_assignment_next_to_a_reduction(hash_seed):
    # in a process of its own: Numba lists a reduction variable among the
    # loop's races for some hash seeds, and it was carried as a last value too
    done = subprocess.run([sys.executable, "-c", _REDUCTION_AND_LAST_VALUE],
                          env={**os.environ, "PYTHONHASHSEED": hash_seed},
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "(498501, 499.0)"


@pytest.mark.parametrize("reduce, error", [
    (lambda a: np.amax(a), "reduction operation maximum"),
    (lambda a: a.min(), "reduction operation minimum"),
    (lambda a: np.argmin(a), "argmin of an empty sequence"),
    (lambda a: a.argmax(), "argmax of an empty sequence"),
], ids=["amax", "min", "argmin", "argmax"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float64, np.bool_])
def test_extremes_of_an_array_of_no_element_raise_as_numpy(reduce, error, dtype):
    """Numba's parallel loops checked the length of the first axis only:
    np.amax of an int32 array of shape (3, 0) gave -2147483648, np.argmin 0."""
    f = xpuc.jit(reduce)
    for shape in [(3, 0), (2, 3, 0), (0, 4)]:
        with pytest.raises(ValueError, match=error), xpuc.device_context(DEVICE):
            f(np.zeros(shape, dtype))


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.float32, np.complex128])
def test_mean_of_an_array_of_no_element_is_nan(dtype):
    """Numba's parallel np.mean divided by the size as Python does and raised
    ZeroDivisionError, where NumPy and Numba's serial np.mean give NaN (in
    both parts of a complex number)."""
    f = xpuc.jit(lambda a: a.mean())
    for shape in [(0,), (3, 0)]:
        with xpuc.device_context(DEVICE):
            mean = f(np.zeros(shape, dtype))
        assert np.isnan(mean.real) and np.isnan(mean.imag) == np.iscomplexobj(mean)
    assert offload(f, np.arange(6, dtype=dtype).reshape(2, 3)) == 2.5


def _any_positive(a, found):
    for i in numba.prange(a.shape[0]):
        found = max(found, a[i] > 0)
    return found


def _all_positive(a, every):
    for i in numba.prange(a.shape[0]):
        every = min(every, a[i] > 0)
    return every


def _last_is_positive(a, positive):
    for i in numba.prange(a.shape[0]):
        positive = a[i] > 0
    return positive


def _last_doubled(a, doubled):
    for i in numba.prange(a.shape[0]):
        doubled = a[i] * 2.0
    return doubled


def _signs(n: int) -> list[np.ndarray]:
    return [-np.ones(n), np.ones(n), np.r_[-np.ones(n - 1), 1.0], np.r_[np.ones(n - 1), -1.0]]


@pytest.mark.parametrize("fn", [_any_positive, _all_positive, _last_is_positive, _last_doubled])
@pytest.mark.parametrize("n", [1, 7, 1000, 100_003])
@pytest.mark.parametrize("cost_model", [False, True], ids=["device", "cost-model"])
def test_bool_reductions_and_last_values_are_pythons(fn, n, cost_model, monkeypatch):
    """A bool reduction variable (max: any, min: all) is carried as a byte
    (it was refused); a variable assigned in the loop and read after it
    has its last value, on the host too: with the cost model on (the
    device's threshold) the small loops run there, where the value before
    the loop came back."""
    if cost_model:
        monkeypatch.delenv("XPUC_HOST_PARFOR_MAX")
    serial = numba.njit(fn)
    for a in _signs(n):
        for start in (False, True):
            xpuc.reset_stats()
            with xpuc.device_context(DEVICE):
                got = xpuc.jit(fn)(a, start)
            expected = serial(a, start)
            assert got == expected and type(got) is type(expected), (a, start)
            launches = xpuc.stats()["kernel_launches"]
            if not cost_model:
                assert launches > 0, "nothing ran on the device"
            elif n <= 7:
                assert launches == 0, "the cost model's host path did not run"


@pytest.mark.parametrize("reduce", [lambda b: np.min(b), lambda b: np.max(b),
                                    lambda b: np.argmin(b), lambda b: np.argmax(b),
                                    lambda b: b.max(), lambda b: b.argmin()],
                         ids=["min", "max", "argmin", "argmax", "method-max", "method-argmin"])
@pytest.mark.parametrize("shape", [(1,), (1000,), (100_003,), (300, 7)])
def test_extremes_of_bools_are_numpys(reduce, shape):
    """np.min and np.max of bools (all, any) and np.argmin, np.argmax (the
    first False, the first True): Numba's parallel np.min of bools failed to
    compile, and their reductions were refused."""
    f = xpuc.jit(reduce)
    count = int(np.prod(shape))
    for values in _signs(count):
        b = values.reshape(shape) > 0
        with xpuc.device_context(DEVICE):
            assert f(b) == reduce(b)
    if count > 1000:  # past the cost model's host path
        assert offload(f, b) == reduce(b)
