"""Host code that Numba leaves serial, offloaded on device arrays (issue 33,
dpbench's stockham_fft, azimint_hist and resnet): ``.copy()`` / ``np.copy`` of
any layout, ``np.histogram`` with an integer ``bins``, and slice assignments
that broadcast. Each is checked against NumPy with ``usm_type="device"``
arrays (which host code cannot read: refused before) and with NumPy arrays in
a device context on arrays the function makes with dpnp, as dpbench's
programs do."""

import inspect

import numba
import numpy as np
import pytest

import xpuc
import xpuc.runtime

dpnp = pytest.importorskip("dpnp")

DEVICE = "opencl:cpu"


def on_device(function, *host_values, **keywords):
    """``function`` jitted, called with device USM copies of the arrays among
    ``host_values``: its results as NumPy arrays, and how many kernels it
    launched."""
    args = [dpnp.asarray(v, usm_type="device") if isinstance(v, np.ndarray) else v
            for v in host_values]
    xpuc.reset_stats()
    result = function(*args, **keywords)
    launches = xpuc.stats()["kernel_launches"]
    results = result if isinstance(result, tuple) else (result,)
    for r in results:
        assert r.usm_type == "device"
    results = tuple(dpnp.asnumpy(r) for r in results)
    return (results if isinstance(result, tuple) else results[0]), launches


def in_context(function, *args):
    """``function`` jitted, called with NumPy ``args`` inside a device
    context: its results as NumPy arrays, and how many kernels it launched."""
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        result = function(*args)
    launches = xpuc.stats()["kernel_launches"]
    results = result if isinstance(result, tuple) else (result,)
    results = tuple(dpnp.asnumpy(r) for r in results)
    return (results if isinstance(result, tuple) else results[0]), launches


def line_of(function, text: str) -> int:
    lines, first = inspect.getsourcelines(function.py_func)
    return first + next(k for k, line in enumerate(lines) if text in line)


# ---- copies ------------------------------------------------------------------------------

VIEWS = {
    "contiguous": "a",
    "transposed with axes=": "np.transpose(a, axes=(1, 0, 2))",
    "transposed": "np.transpose(a)",
    "strided": "a[:, ::2, 1:]",
    "reversed row": "a[1, ::-1, 0]",
}
COPIES = {"method": "({view}).copy()", "np.copy": "np.copy({view})"}


def copying(view: str, copy: str) -> xpuc.JitFunction:
    """A jit function that returns the copy of a view of its argument, as
    written in ``VIEWS`` and ``COPIES``."""
    namespace = {"np": np}
    exec(f"def copy(a):\n    return {COPIES[copy].format(view=VIEWS[view])}\n", namespace)
    return xpuc.jit(namespace["copy"])


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("copy", COPIES)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex128])
def test_copy_of_any_layout_is_a_c_contiguous_device_array(view, copy, dtype):
    a = (np.arange(4 * 5 * 3) - 7).reshape(4, 5, 3).astype(dtype)
    result, launches = on_device(copying(view, copy), a)
    expected = eval(VIEWS[view]).copy()
    assert result.dtype == expected.dtype and result.flags.c_contiguous
    np.testing.assert_array_equal(result, expected)
    assert launches == 1


@xpuc.jit
def stockham_step(x, n):
    """stockham_fft's stride permutation, on an array it makes with dpnp."""
    y = dpnp.empty(x.shape, dtype=x.dtype)
    for i in numba.prange(x.shape[0]):
        y[i] = x[i]
    yv = np.reshape(y, (n, 2, x.shape[0] // (2 * n)))
    return np.transpose(yv, axes=(1, 0, 2)).copy()


def test_copy_of_a_transposed_view_of_a_dpnp_array_in_a_context():
    x = np.arange(16.0) + 1j * np.arange(16.0)[::-1]
    expected = np.transpose(np.reshape(x, (2, 2, 4)), axes=(1, 0, 2)).copy()
    result, launches = in_context(stockham_step, x, 2)
    np.testing.assert_array_equal(result, expected)
    assert launches == 2  # the prange into the dpnp array, the copy
    result, _ = on_device(stockham_step, x, 2)
    np.testing.assert_array_equal(result, expected)


# ---- histograms --------------------------------------------------------------------------

@xpuc.jit
def histogram(a, bins):
    return np.histogram(a, bins)


@xpuc.jit
def histogram_in(a, bins, low, high):
    return np.histogram(a, bins, range=(low, high))


def assert_numpys(result, expected):
    for got, want in zip(result, expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
@pytest.mark.parametrize("bins", [1, 7, 10, 64])
def test_histogram_counts_and_edges_are_numpys(dtype, bins):
    values = np.random.default_rng(bins).normal(10.0, 7.0, (40, 25)).astype(dtype)
    values[0, :5] = values.max()  # on the last edge, in the last bin
    values[1, :5] = values.min()
    (counts, edges), launches = on_device(histogram, values, bins)
    assert_numpys((counts, edges), np.histogram(values, bins))
    assert launches >= 3  # min, max, edges, counts
    result, _ = on_device(histogram_in, values, bins, 2.0, 17.5)
    assert_numpys(result, np.histogram(values, bins, range=(2.0, 17.5)))


@xpuc.jit
def histogram_of_ten_bins(a):
    return np.histogram(a)


def test_histogram_of_the_default_bins():
    values = np.random.default_rng(5).random(300)
    assert_numpys(on_device(histogram_of_ten_bins, values)[0], np.histogram(values))


def test_histogram_of_values_on_the_edges():
    """Integers whose edges fall on them: each in the bin it opens, the last
    closed, as NumPy's corrections put them."""
    values = np.repeat(np.arange(11), 3)
    for bins in (2, 5, 10, 3):
        assert_numpys(on_device(histogram, values, bins)[0], np.histogram(values, bins))
    views = on_device(histogram, values.astype(np.float64).reshape(3, 11)[:, ::2], 4)[0]
    assert_numpys(views, np.histogram(values.reshape(3, 11)[:, ::2].astype(np.float64), 4))


def test_histogram_of_equal_values_empty_arrays_and_nans():
    assert_numpys(on_device(histogram, np.full(6, 3.0), 4)[0], np.histogram(np.full(6, 3.0), 4))
    assert_numpys(on_device(histogram, np.zeros(0), 3)[0], np.histogram(np.zeros(0), 3))
    with_nan = np.array([1.0, np.nan, 2.0, 3.0, np.inf])
    with pytest.raises(ValueError, match="autodetected range of np.histogram is not finite"):
        on_device(histogram, with_nan, 3)
    # with a range, NaN and what lies outside are left out
    assert_numpys(on_device(histogram_in, with_nan, 3, 0.0, 2.5)[0],
                  np.histogram(with_nan, 3, range=(0.0, 2.5)))


def test_histogram_arguments_numpy_refuses_raise():
    with pytest.raises(ValueError, match="`bins` must be positive"):
        on_device(histogram, np.ones(4), 0)
    with pytest.raises(ValueError, match="max must be larger than min"):
        on_device(histogram_in, np.ones(4), 3, 2.0, 1.0)
    with pytest.raises(ValueError, match="supplied range of np.histogram is not finite"):
        on_device(histogram_in, np.ones(4), 3, 0.0, np.inf)


@xpuc.jit
def azimint(radius, npt):
    """azimint_hist's ``np.histogram(radius, npt)`` of an array made with dpnp."""
    r = dpnp.empty(radius.shape, dtype=radius.dtype)
    r[:] = radius * 2.0
    return np.histogram(r, npt)[0]


def test_histogram_of_a_dpnp_array_in_a_context():
    radius = np.random.default_rng(3).random(1000)
    counts, launches = in_context(azimint, radius, 9)
    np.testing.assert_array_equal(counts, np.histogram(radius * 2.0, 9)[0])
    assert launches >= 4  # the assignment, min, max, edges, counts (some may fuse)


@xpuc.jit
def histogram_of_edges(a, edges):
    return np.histogram(a, edges)[0]


def test_histogram_with_an_array_of_edges_stays_refused_naming_the_line():
    with pytest.raises(xpuc.UnsupportedError) as refusal:
        on_device(histogram_of_edges, np.ones(8), np.arange(4.0))
    message = str(refusal.value)
    assert message.startswith(f"{__file__}:{line_of(histogram_of_edges, 'histogram(')}: ")
    assert "host code uses elements of the usm_type='device' array 'a'" in message


# ---- slice assignments that broadcast ----------------------------------------------------

@xpuc.jit
def batchnorm_mean(x):
    """resnet's batchnorm2d: a 3-D value over a 4-D array."""
    mean = np.empty(x.shape, dtype=x.dtype)
    mean[:] = np.sum(x, axis=0) / x.shape[0]
    return mean


@xpuc.jit
def resnet_mean(x):
    """The same with dpnp's constructor, as resnet writes it."""
    mean = dpnp.empty(x.shape, dtype=x.dtype)
    mean[:] = np.sum(x, axis=0) / x.shape[0]
    return mean


def test_a_3d_value_broadcast_over_a_4d_array():
    x = np.random.default_rng(0).random((3, 4, 5, 2)).astype(np.float32)
    expected = np.empty_like(x)
    expected[:] = np.sum(x, axis=0) / x.shape[0]
    result, launches = on_device(batchnorm_mean, x)
    np.testing.assert_allclose(result, expected, rtol=1e-6)
    assert launches == 3  # the sum, the division, the assignment
    result, launches = in_context(resnet_mean, x)
    np.testing.assert_allclose(result, expected, rtol=1e-6)
    assert launches >= 1  # the assignment (the host may take what reads NumPy arrays alone)


@xpuc.jit
def assign_row_into_rows(m, v):
    m[1:, :] = v * 1.0
    return m


@xpuc.jit
def assign_under_one_slice(m, v):
    m[:3] = v * 1.0
    return m


@xpuc.jit
def assign_whole(m, v):
    m[:] = v * 1.0
    return m


@xpuc.jit
def assign_under_an_integer(m, v):
    m[2, 1:4] = v * 1.0
    return m


# The values above are computed by the function (``v * 1.0``), so they share no
# memory with ``m``; an argument or a view could, and stays host code (below).
# launches: the product, then the loop that broadcasts it; or one, where the
# value has the matrix's rank and Numba's slice assignment fuses the two
@pytest.mark.parametrize(("assign", "value_shape", "kernels"), [
    (assign_row_into_rows, (5,), 2), (assign_under_one_slice, (5,), 2), (assign_whole, (5,), 2),
    (assign_under_an_integer, (1,), 2), (assign_under_one_slice, (3, 5), 1),
    (assign_whole, (4, 5), 1),
])
def test_arrays_broadcast_into_slices(assign, value_shape, kernels):
    m = np.zeros((4, 5))
    v = np.arange(1.0, 1.0 + np.prod(value_shape)).reshape(value_shape)
    result, launches = on_device(assign, m, v)
    np.testing.assert_array_equal(result, assign.py_func(m.copy(), v))
    assert launches == kernels


@xpuc.jit
def assign_scaled(m, v):
    m[:] = v * 2.0
    return m


def test_a_value_of_the_views_rank_is_computed_into_the_view():
    """``m[:] = v * 2.0`` of matrices: Numba's slice assignment, one kernel
    (the product fused with the store), as ``m[:, :] = v * 2.0``."""
    v = np.arange(12.0).reshape(3, 4)
    result, launches = on_device(assign_scaled, np.zeros((3, 4)), v)
    np.testing.assert_array_equal(result, v * 2.0)
    assert launches == 1


@pytest.mark.parametrize("assign", [assign_under_one_slice, assign_whole])
def test_scalars_into_slices(assign):
    """A scalar into a view that does not name every dimension (``m[1:]``,
    ``m[:]`` of a matrix), which Numba left to host code."""
    result, launches = on_device(assign, np.zeros((4, 5), np.int32), 7)
    np.testing.assert_array_equal(result, assign.py_func(np.zeros((4, 5), np.int32), 7))
    assert launches == 1


def test_a_value_that_does_not_broadcast_raises_as_numpy():
    with pytest.raises(ValueError, match="could not broadcast"):
        on_device(assign_row_into_rows, np.zeros((4, 5)), np.ones(4))
    with pytest.raises(ValueError, match="could not broadcast"):
        on_device(assign_under_an_integer, np.zeros((4, 5)), np.ones(2))


@xpuc.jit
def shift_rows(m):
    m[1:] = m[:-1]
    return m


@xpuc.jit
def shift_along_a_row(m):
    m[0, 1:] = m[0, :-1]
    return m


@xpuc.jit
def shift_down_a_column(m):
    m[1:, 0] = m[:-1, 0]
    return m


@xpuc.jit
def shift_a_vector(a):
    a[1:] = a[:-1]
    return a


@xpuc.jit
def reverse_a_vector(a):
    a[:] = a[::-1]
    return a


@pytest.mark.parametrize(("assign", "shape", "value"), [
    (shift_rows, (40, 3), lambda m: m[:-1]),
    (shift_along_a_row, (2, 100), lambda m: m[0, :-1]),
    (shift_down_a_column, (100, 2), lambda m: m[:-1, 0]),
    (shift_a_vector, (100,), lambda a: a[:-1]),
    (reverse_a_vector, (101,), lambda a: a[::-1]),
])
def test_a_view_of_the_array_assigned_is_copied_first_as_numpy_does(assign, shape, value):
    """NumPy copies a value that shares the assigned view's memory before it
    stores it; a loop reading it as it writes (Numba's parfor of ``a[1:] =
    a[:-1]``, wrong under ``parallel=True``) would carry the first element all
    the way. The value is staged where the spans meet: on device USM by the
    runtime's copy of its bytes, then the store's one kernel."""
    a = np.arange(float(np.prod(shape))).reshape(shape)
    expected = assign.py_func(a.copy())
    result, launches = on_device(assign, a.copy())
    np.testing.assert_array_equal(result, expected)
    assert launches == 1 and xpuc.stats()["d2d_bytes"] == xpuc.runtime.byte_extent(value(a))[1]
    result, _ = in_context(assign, a.copy())
    np.testing.assert_array_equal(result, expected)


@xpuc.jit
def assign_argument(m, v):
    m[:3] = v
    return m


def test_an_argument_that_shares_no_memory_is_stored_without_a_copy():
    m, v = np.zeros((4, 5)), np.arange(5.0)
    result, launches = on_device(assign_argument, m, v)
    np.testing.assert_array_equal(result, assign_argument.py_func(m.copy(), v))
    assert launches == 1


@xpuc.jit
def assign_rows_by_index(m, rows):
    m[rows] = 1.0
    return m


def test_assignment_through_an_index_array_stays_refused_naming_the_line():
    with pytest.raises(xpuc.UnsupportedError) as refusal:
        on_device(assign_rows_by_index, np.zeros((4, 5)), np.array([0, 2]))
    message = str(refusal.value)
    assert message.startswith(f"{__file__}:{line_of(assign_rows_by_index, 'm[rows]')}: ")
    assert "usm_type='device' array 'm'" in message
