"""Empty slices (``x[1:-1]`` of one element, ``x[5:2]``, ``x[n:]`` with
``n == len(x)``) are arrays of no elements, as in NumPy: array expressions
over them, stores into them and reductions over them give NumPy's answers
(Numba's array analysis made their length negative: ``ValueError: negative
dimensions not allowed``). Each case runs on NumPy arrays in a device context
and on device USM, every parfor a kernel (conftest.py); the same functions
on slices that are not empty check that nothing else changed."""

import numpy as np
import pytest
from device_support import DEVICE

import xpuc
from xpuc.array_library import tensor as dpt


def inside_doubled(x):
    return x[1:-1] * 2.0


def backwards_plus_one(x):
    return x[5:2] + 1.0


def past_the_end_tripled(x):
    return x[x.shape[0]:] * 3.0


def centred_differences(x):
    return x[1:-1] * 2.0 + x[2:] - x[:-2]


def interior_plus_row_below(m):
    return m[1:-1, 1:-1] + m[2:, 1:-1]


def sum_backwards(x):
    return np.sum(x[5:2])


def sum_of_inside_doubled(x):
    return np.sum(x[1:-1] * 2.0) + x[1:-1].sum()


def store_into_backwards(x):
    x[5:2] = x[6:3] + 1.0
    x[1:-1] = 7.0
    return x


def fixed_size_backwards(x):
    a = np.ones(10)
    return a[5:2] + x[0]


EMPTY = [(inside_doubled, (1,)), (backwards_plus_one, (10,)), (past_the_end_tripled, (4,)),
         (centred_differences, (1,)), (centred_differences, (2,)),
         (interior_plus_row_below, (1, 2)), (interior_plus_row_below, (2, 1)),
         (sum_backwards, (10,)), (sum_of_inside_doubled, (1,)), (store_into_backwards, (1,)),
         (fixed_size_backwards, (3,))]
NOT_EMPTY = [(inside_doubled, (9,)), (backwards_plus_one, (3,)), (centred_differences, (9,)),
             (interior_plus_row_below, (4, 5)), (sum_of_inside_doubled, (9,)),
             (store_into_backwards, (9,))]
JITTED = {fn: xpuc.jit(fn) for fn, _ in EMPTY + NOT_EMPTY}


def start(shape) -> np.ndarray:
    return np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)


def same(got, expected) -> bool:
    got = np.asarray(dpt.asnumpy(got) if isinstance(got, dpt.usm_ndarray) else got)
    return got.shape == np.shape(expected) and np.array_equal(got, expected)


CASES = pytest.mark.parametrize(("fn", "shape"), EMPTY + NOT_EMPTY,
                                ids=lambda c: getattr(c, "__name__", str(c)))


@CASES
def test_numpy_arrays_in_a_context(fn, shape):
    with xpuc.device_context(DEVICE):
        got = JITTED[fn](start(shape))
    assert same(got, fn(start(shape)))


@CASES
def test_device_usm(fn, shape):
    x = xpuc.asarray(start(shape), queue=DEVICE, usm_type="device")
    got = JITTED[fn](x)
    assert same(got, fn(start(shape)))
    if fn is store_into_backwards:
        assert same(x, fn(start(shape)))


def test_an_empty_slice_beside_work_on_the_device():
    """The empty expression is no reason to leave the device: the kernel of
    the other one ran."""

    @xpuc.jit
    def inside_and_all(x):
        return x[1:-1] * 2.0, x * 3.0

    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        inside, scaled = inside_and_all(start((1,)))
    assert xpuc.stats()["kernel_launches"] > 0
    assert same(inside, np.empty(0)) and same(scaled, [3.0])


# ---- a view through a slice with a step beside one through the same slices -------------
#
# Numba's array analysis sizes an index's slices one by one and gave up at one
# with a step (``::-1``) after the slices before it had their lengths defined
# by statements it then dropped: ``x[1:, :] + 0`` after ``x[1:, ::-1]`` was
# made with a length nothing computed, (0, 6) for a (10, 6) ``x``, silently
# (under ``numba.njit(parallel=True)`` too); with the view used, a size check
# compared a length never computed and raised.


def reversed_view_then_rows(x):
    v = x[1:, ::-1]
    return x[1:, :] + 0, v[0, 0]


def reversed_view_plus_rows(x):
    v = x[1:, ::-1]
    return x[1:, :] + v


def stepped_view_store_then_rows(x):
    x[1:, ::-2][:] = 1
    return x[1:, :].T > 2


@pytest.mark.parametrize("fn", [reversed_view_then_rows, reversed_view_plus_rows,
                                stepped_view_store_then_rows], ids=lambda c: c.__name__)
@pytest.mark.parametrize("where", ["0", "100000000"], ids=["kernels", "host loop"])
def test_views_through_a_stepped_slice_keep_the_other_views_shapes(fn, where, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", where)
    want_x = np.arange(60).reshape(10, 6).astype(np.int32)
    want = fn(want_x)
    x = np.arange(60).reshape(10, 6).astype(np.int32)
    with xpuc.device_context(DEVICE):
        got = xpuc.jit(fn)(x)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert same(g, w)
    np.testing.assert_array_equal(x, want_x)
