"""dpnp's constructors inside xpuc.jit functions (SPEC "Array libraries"):
USM arrays on the call's queue, whose device (``device=``, ``sycl_queue=``)
places the call as a USM argument's queue does (rules 3-6)."""

import dpctl
import dpnp
import numba
import numpy as np
import pytest

import xpuc

ROOT = "opencl:cpu"
SUB_DEVICE = "opencl:cpu:0/partition=1/0"


def launched(function, *args):
    xpuc.reset_stats()
    result = function(*args)
    return result, xpuc.stats()["kernel_launches"]


@xpuc.jit
def filled(n):
    e = dpnp.empty(n, device="opencl:cpu")
    z = dpnp.zeros((2, n), dtype=np.int32, device="opencl:cpu")
    o = dpnp.ones(n, dtype=np.float32, usm_type="shared", device="opencl:cpu")
    f = dpnp.full(n, 2.5, device="opencl:cpu", usm_type="host")
    r = dpnp.arange(1, n + 1, 2, device="opencl:cpu")
    return e, z, o, f, r


def test_constructors_make_dpnp_arrays_on_their_device():
    (e, z, o, f, r), launches = launched(filled, 6)
    for array in (e, z, o, f, r):
        assert isinstance(array, dpnp.ndarray)
        assert array.sycl_device == dpctl.SyclDevice(ROOT)
    assert (z.shape, z.dtype, z.usm_type) == ((2, 6), np.int32, "device")
    assert (o.dtype, o.usm_type, f.usm_type, e.shape) == (np.float32, "shared", "host", (6,))
    np.testing.assert_array_equal(dpnp.asnumpy(z), 0)
    np.testing.assert_array_equal(dpnp.asnumpy(o), 1)
    np.testing.assert_array_equal(dpnp.asnumpy(f), 2.5)
    np.testing.assert_array_equal(dpnp.asnumpy(r), np.arange(1, 7, 2))
    assert r.dtype == np.int64
    assert launches == 4  # the fills; empty fills nothing


@xpuc.jit
def likes(x):
    return (dpnp.empty_like(x), dpnp.zeros_like(x, dtype=np.float32),
            dpnp.ones_like(x, usm_type="shared"), dpnp.full_like(x, 3))


def test_like_constructors_follow_their_array():
    x = dpnp.asarray(np.arange(6.0).reshape(2, 3), usm_type="host")
    (e, z, o, f), launches = launched(likes, x)
    assert launches >= 3, "the fills ran on the host"
    assert all(a.shape == (2, 3) and a.sycl_queue == x.sycl_queue for a in (e, z, o, f))
    assert (e.usm_type, z.dtype, o.usm_type, f.dtype) == ("host", np.float32, "shared",
                                                          np.float64)
    for array, value in ((z, 0.0), (o, 1.0), (f, 3.0)):
        np.testing.assert_array_equal(dpnp.asnumpy(array), value)


@xpuc.jit
def on_queue(n, q):
    return dpnp.arange(n, sycl_queue=q) * 2.0


def test_sycl_queue_argument_places_the_call():
    q = xpuc.offload_to(SUB_DEVICE).queue
    result, launches = launched(on_queue, 4, q)
    assert result.sycl_queue == q and launches >= 1
    np.testing.assert_array_equal(dpnp.asnumpy(result), [0.0, 2.0, 4.0, 6.0])


@xpuc.jit
def default_device(n):
    return dpnp.ones(n) + 1.0


def test_without_a_device_they_use_dpnps_default_device():
    result = default_device(3)
    assert result.sycl_device == dpctl.select_default_device()
    np.testing.assert_array_equal(dpnp.asnumpy(result), 2.0)


@xpuc.jit
def plus_made(x):
    return x + dpnp.ones(x.shape[0], device="opencl:cpu:0/partition=1/0")


def test_a_device_other_than_the_datas_is_refused_naming_it():
    x = dpnp.asarray(np.ones(3), device=ROOT)
    with pytest.raises(xpuc.ExecutionPlacementError, match=r"device='opencl:cpu:0/partition="):
        plus_made(x)
    with xpuc.device_context(ROOT), pytest.raises(xpuc.ExecutionPlacementError,
                                                  match="the device context"):
        plus_made(np.ones(3))


@xpuc.jit
def in_context(x):
    out = dpnp.empty_like(x)
    out[:] = x * 3.0
    return out


def test_in_a_device_context_numpy_data_and_made_arrays_meet():
    with xpuc.device_context(ROOT):
        result = in_context(np.arange(3.0))
    assert isinstance(result, dpnp.ndarray)
    np.testing.assert_array_equal(dpnp.asnumpy(result), [0.0, 3.0, 6.0])


def test_a_device_computed_at_run_time_is_refused():
    @xpuc.jit
    def computed(n, name):
        return dpnp.ones(n, device=name)

    with pytest.raises(xpuc.UnsupportedError, match="constant device name"):
        computed(3, ROOT)


# A size-1 axis of a constructor's array broadcasts (softmax's and mlp's
# dpnp.empty((..., 1))): array analysis knows the shapes dpnp's constructors
# take, as it knows np.empty's.
@xpuc.jit
def minus_row_max(x):
    row_max = dpnp.empty((x.shape[0], 1), dtype=x.dtype)
    for i in numba.prange(x.shape[0]):
        row_max[i, 0] = x[i].max()
    return dpnp.exp(x - row_max)


@xpuc.jit
def minus_filled_columns(x):
    column = dpnp.full((x.shape[0], 1), 2.0)
    return (x - dpnp.zeros((x.shape[0], 1)) - dpnp.ones((1, x.shape[1]), dtype=x.dtype)
            - column - dpnp.ones_like(column))


def on_device_and_in_context(function, x):
    """``function``'s result and launches on a dpnp copy of ``x``, then on ``x``
    itself in a device context, as NumPy arrays."""
    results = []
    for inputs in ("dpnp", "numpy"):
        xpuc.reset_stats()
        if inputs == "dpnp":
            result = function(dpnp.asarray(x))
        else:
            with xpuc.device_context(ROOT):
                result = function(x)
        results.append((dpnp.asnumpy(result), xpuc.stats()["kernel_launches"]))
    return results


@pytest.mark.parametrize("function, expected", [
    (minus_row_max, lambda x: np.exp(x - x.max(axis=1, keepdims=True))),
    (minus_filled_columns, lambda x: x - 4.0),
])
def test_a_size_one_axis_of_a_made_array_broadcasts(function, expected):
    x = np.random.default_rng(0).random((5, 4))
    for result, launches in on_device_and_in_context(function, x):
        np.testing.assert_allclose(result, expected(x))
        assert launches > 0


@xpuc.jit
def plus_eye(x, k):
    return x + dpnp.eye(x.shape[0], x.shape[1], k, dtype=x.dtype)


@xpuc.jit
def eye_made(n):
    return dpnp.eye(n, dtype=np.int32, usm_type="shared", device=ROOT)


def test_eye_makes_numpys_identity():
    x = np.random.default_rng(1).random((4, 6))
    for k in (0, 2, -1):
        for result, launches in on_device_and_in_context(lambda a, k=k: plus_eye(a, k), x):
            np.testing.assert_allclose(result, x + np.eye(4, 6, k))
            assert launches > 0
    square = eye_made(3)
    assert (square.dtype, square.usm_type, square.sycl_device) == \
        (np.int32, "shared", dpctl.SyclDevice(ROOT))
    np.testing.assert_array_equal(dpnp.asnumpy(square), np.eye(3, dtype=np.int32))
