"""NumPy functions on USM arrays inside jit functions run on the device
(issue 22): reductions along an axis, np.where, np.clip, np.dot of vectors,
a.T, np.abs, each checked against NumPy and checked to launch kernels."""

import functools
import importlib.util

import dpctl
import numpy as np
import pytest

import xpuc
from xpuc.array_library import tensor as dpt

QUEUE_DEVICE = "opencl:cpu"


@pytest.fixture(scope="module")
def queue():
    return dpctl.SyclQueue(QUEUE_DEVICE)


def offloaded(function, *host_values, queue, usm_type="device"):
    """``function`` jitted, called with USM copies of the arrays among
    ``host_values``: its result on the host, and how many kernels it launched."""
    args = [dpt.asarray(v, sycl_queue=queue, usm_type=usm_type) if isinstance(v, np.ndarray)
            else v for v in host_values]
    xpuc.reset_stats()
    jitted = function if isinstance(function, xpuc.JitFunction) else xpuc.jit(function)
    result = jitted(*args)
    launches = xpuc.stats()["kernel_launches"]
    if isinstance(result, dpt.usm_ndarray):
        assert result.usm_type == usm_type and result.sycl_queue == queue
        result = dpt.asnumpy(result)
    return result, launches


REDUCTIONS = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "mean": np.mean}


def along(reduce, axis):
    """``reduce`` along a constant ``axis``, as users write it."""
    return lambda a: reduce(a, axis=axis)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_reductions_along_an_axis(queue, name, dtype, axis):
    a = (np.arange(2 * 3 * 4) % 7 - 3).reshape(2, 3, 4).astype(dtype)
    result, launches = offloaded(along(REDUCTIONS[name], axis), a, queue=queue)
    expected = REDUCTIONS[name](a, axis=axis)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    np.testing.assert_allclose(result, expected, rtol=1e-6)
    assert launches == 1


# the method forms as users write them, each its own function (a lambda's
# text is what Numba compiles)
METHODS = {
    ("sum", "axis=0"): lambda a: a.sum(axis=0), ("sum", "1"): lambda a: a.sum(1),
    ("sum", ""): lambda a: a.sum(), ("prod", "axis=-1"): lambda a: a.prod(axis=-1),
    ("prod", ""): lambda a: a.prod(), ("min", "axis=0"): lambda a: a.min(axis=0),
    ("min", ""): lambda a: a.min(), ("max", "axis=1"): lambda a: a.max(axis=1),
    ("max", ""): lambda a: a.max(), ("mean", "axis=0"): lambda a: a.mean(axis=0),
    ("mean", ""): lambda a: a.mean(),
}


@pytest.mark.parametrize(("name", "arguments"), METHODS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize("usm_type", ["shared", "device"])
def test_reduction_methods_with_and_without_axis(queue, name, arguments, dtype, usm_type):
    a = (np.arange(8 * 3) % 5 - 2).reshape(8, 3).astype(dtype)
    result, launches = offloaded(METHODS[name, arguments], a, queue=queue, usm_type=usm_type)
    expected = eval(f"a.{name}({arguments})")
    if arguments:  # an array (a scalar comes back as a Python number, as from Numba)
        assert result.dtype == expected.dtype and result.shape == expected.shape
    np.testing.assert_allclose(result, expected, rtol=1e-6)
    assert launches >= 1


@functools.cache
def sum_method(axis):
    """``a.sum(axis=axis)`` jitted once per axis (Numba compiles it once per
    array type, which the shapes of one rank share)."""
    return xpuc.jit(lambda a: a.sum(axis=axis))


# numba-mlir's sum-with-axis cases: every axis of arrays of 1 to 3 dimensions,
# with sizes of 1 among them
SHAPES_AND_AXES = [(shape, axis) for shape in [(1,), (9,), (1, 1), (1, 5), (4, 1), (6, 7),
                                               (1, 1, 1), (2, 1, 3), (3, 4, 5)]
                   for axis in range(-len(shape), len(shape))]


@pytest.mark.parametrize(("shape", "axis"), SHAPES_AND_AXES)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
def test_sum_method_along_every_axis(queue, shape, axis, dtype):
    a = (np.arange(np.prod(shape)) % 11 - 4).reshape(shape).astype(dtype)
    result, launches = offloaded(sum_method(axis), a, queue=queue)
    expected = a.sum(axis=axis)
    if a.ndim > 1:
        assert result.dtype == expected.dtype and result.shape == expected.shape
    np.testing.assert_allclose(result, expected, rtol=1e-6)
    assert launches >= 1


@pytest.mark.parametrize("name", ["min", "max"])
def test_nan_propagates_through_min_and_max(queue, name):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -1.0]])
    result, _ = offloaded(along(REDUCTIONS[name], 0), a, queue=queue)
    np.testing.assert_array_equal(result, REDUCTIONS[name](a, axis=0))


def test_min_of_an_empty_axis_raises_as_numpy(queue):
    with pytest.raises(ValueError, match="zero-size array to reduction operation min"):
        offloaded(lambda a: np.min(a, axis=0), np.zeros((0, 3)), queue=queue)


def test_where_and_clip(queue):
    a = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
    result, launches = offloaded(lambda a: np.where(a > 0.5, a, -1.0), a, queue=queue,
                                 usm_type="shared")
    np.testing.assert_array_equal(result, np.where(a > 0.5, a, -1.0))
    assert launches == 2  # the comparison, then the selection
    result, launches = offloaded(lambda a, b: np.where(a > b, a, b), a, a * 0.5, queue=queue)
    np.testing.assert_array_equal(result, np.maximum(a, a * 0.5))
    result, launches = offloaded(lambda a: np.clip(a, -1.0, 1.5), a, queue=queue)
    np.testing.assert_array_equal(result, np.clip(a, -1.0, 1.5))
    assert launches == 1


@pytest.mark.parametrize(("make", "expected"), [
    (lambda a: np.zeros_like(a), lambda a: np.zeros_like(a)),
    (lambda a: np.ones_like(a, dtype=np.int32), lambda a: np.ones_like(a, dtype=np.int32)),
    (lambda a: np.full_like(a, 2.5), lambda a: np.full_like(a, 2.5)),
    (lambda a: np.zeros_like(a[:, ::2]) + 1.0, lambda a: np.zeros_like(a[:, ::2]) + 1.0),
])
@pytest.mark.parametrize("usm_type", ["device", "shared"])
def test_filled_like_makes_a_usm_array_of_its_kind(queue, make, expected, usm_type):
    """``np.zeros_like`` of a device array was refused as host code reading its
    elements; the fill is a kernel, the array of the argument's USM kind."""
    a = np.arange(12.0).reshape(3, 4)
    result, launches = offloaded(make, a, queue=queue, usm_type=usm_type)
    np.testing.assert_array_equal(result, expected(a))
    assert result.dtype == expected(a).dtype
    assert launches >= 1


def test_clip_keeps_nan_and_integers(queue):
    a = np.array([np.nan, -5.0, 5.0])
    np.testing.assert_array_equal(offloaded(lambda a: np.clip(a, -1.0, 1.0), a,
                                            queue=queue)[0], [np.nan, -1.0, 1.0])
    ints = np.arange(-4, 5, dtype=np.int32)
    result, _ = offloaded(lambda a: np.clip(a, -2, 3), ints, queue=queue)
    np.testing.assert_array_equal(result, np.clip(ints, -2, 3))


def test_where_of_arrays_of_other_shapes_is_refused(queue):
    with pytest.raises(ValueError, match="arrays of one shape"):
        offloaded(lambda c, x: np.where(c, x, 0.0), np.ones(4, bool), np.ones(5), queue=queue)


def test_other_layouts_are_refused_naming_no_temporary(queue):
    """Fortran-ordered arrays stay Numba's, whose host loops device memory refuses."""
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(xpuc.UnsupportedError) as error:
        offloaded(lambda a: np.where(a > 1.0, a, 0.0), a, queue=queue)
    message = str(error.value)
    assert "usm_type='device' array" in message and "$" not in message


def test_dot_transpose_and_abs(queue):
    v = np.arange(1.0, 6.0)
    result, launches = offloaded(lambda x, y: np.dot(x, y), v, v[::-1].copy(), queue=queue)
    assert result == np.dot(v, v[::-1]) and launches == 1
    ints = np.arange(4, dtype=np.int32)
    assert offloaded(lambda x, y: np.dot(x, y), ints, ints, queue=queue)[0] == 14
    with pytest.raises(ValueError, match=r"incompatible array sizes .*\(vector \* vector\)"):
        offloaded(lambda x, y: np.dot(x, y), v, v[:3].copy(), queue=queue)
    m = np.arange(6.0).reshape(2, 3) - 2
    result, _ = offloaded(lambda m: np.abs(m.T) + 1.0, m, queue=queue)
    np.testing.assert_array_equal(result, np.abs(m.T) + 1.0)


def test_numpy_arrays_keep_numbas_functions():
    """The offloaded forms are for USM arrays; NumPy arrays on the CPU are Numba's."""
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(xpuc.jit(lambda a: np.sum(a, axis=1))(a), a.sum(axis=1))
    np.testing.assert_array_equal(xpuc.jit(lambda a: np.clip(a, 2.0, 5.0))(a),
                                  np.clip(a, 2.0, 5.0))


def in_context(function, *args, queue):
    """``function`` jitted, called with NumPy ``args`` inside a device context:
    its result and how many kernels it launched."""
    xpuc.reset_stats()
    with xpuc.device_context(queue):
        result = xpuc.jit(function)(*args)
    return result, xpuc.stats()["kernel_launches"]


def test_dot_of_numpy_arrays_in_a_context_checks_shapes(queue):
    """Numba types np.dot of NumPy arrays with SciPy (the test extra has it),
    and its parfor pass would replace it with a loop that reads past the
    shorter vector; xpuc's replacement checks, as Numba's serial np.dot."""
    assert importlib.util.find_spec("scipy"), "the test extra installs SciPy"
    dot = lambda x, y: np.dot(x, y)  # noqa: E731
    v = np.arange(1.0, 6.0)
    result, launches = in_context(dot, v, v[::-1].copy(), queue=queue)
    assert result == np.dot(v, v[::-1]) and launches == 1
    with pytest.raises(ValueError, match=r"incompatible array sizes .*\(vector \* vector\)"):
        in_context(dot, v, v[:3].copy(), queue=queue)
    # matrix times vector: one row per work-item
    m = np.arange(12.0).reshape(3, 4)
    w = np.array([0.5, 1.0, 1.5, 2.0])
    result, launches = in_context(dot, m, w, queue=queue)
    assert launches == 1
    np.testing.assert_array_equal(result, np.dot(m, w))
    with pytest.raises(ValueError, match=r"incompatible array sizes .*\(matrix \* vector\)"):
        in_context(dot, m, w[:3].copy(), queue=queue)


@pytest.mark.parametrize("reduce", [lambda a: np.min(a), lambda a: np.max(a),
                                    lambda a: np.amin(a), lambda a: np.amax(a),
                                    lambda a: a.min(), lambda a: a.max()])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_min_and_max_of_an_array_holding_a_nan_are_nan(reduce, dtype):
    """NumPy's (and Numba's serial) answer; Numba's parallel loop of Python's
    min never lets the NaN win (it gave 0.0 here)."""
    a = np.arange(1000, dtype=dtype)
    a[500] = np.nan
    grid = np.arange(60, dtype=dtype).reshape(6, 10)
    grid[4, 7] = np.nan
    f = xpuc.jit(reduce)
    with xpuc.device_context(QUEUE_DEVICE):
        assert np.isnan(f(a))
        assert np.isnan(f(grid))
        assert np.isnan(f(grid.T))
        assert f(a[:500]) == reduce(a[:500])  # no NaN: the extreme itself
        assert f(grid[:4].T) == reduce(grid[:4])
        with pytest.raises(ValueError):
            f(a[:0])


def test_min_of_integers_and_of_usm_arrays_with_a_nan():
    dpnp = pytest.importorskip("dpnp")
    ints = np.arange(-5, 100, dtype=np.int64)
    f = xpuc.jit(lambda a: np.min(a))
    with xpuc.device_context(QUEUE_DEVICE):
        assert f(ints) == -5
    a = np.linspace(0, 1, 333)
    a[100] = np.nan
    assert np.isnan(float(f(dpnp.asarray(a, usm_type="device"))))
