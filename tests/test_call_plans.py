"""Calls after the first with arguments of the same kinds skip placement: the
dispatcher keeps what the first worked out (queue, compiled entry point, the
arrays' other queues) by the arguments' kinds and the device context. These
tests change one thing at a time between calls and check that each change is
still honoured, and that the second call really is planned."""

import sys

import dpctl
import numba
import numpy as np
import pytest

import xpuc
import xpuc.dispatcher
from xpuc.array_library import tensor as dpt

QUEUE = dpctl.SyclQueue("opencl:cpu")


def usm(values, usm_type="device", queue=QUEUE):
    return dpt.asarray(np.asarray(values), usm_type=usm_type, sycl_queue=queue)


@xpuc.jit
def increment(a):
    for i in numba.prange(a.shape[0]):
        a[i] += 1


@xpuc.jit
def doubled(a):
    return a * 2


def launches(fn, *args):
    """``fn(*args)``'s result and the kernels it launched."""
    xpuc.reset_stats()
    result = fn(*args)
    return result, xpuc.stats()["kernel_launches"]


def test_second_call_is_planned(monkeypatch):
    a = usm(np.zeros(4))
    increment(a)
    monkeypatch.setattr(xpuc.dispatcher, "place", None)  # a placed call fails
    for _ in range(3):
        assert launches(increment, a)[1] == 1
    np.testing.assert_array_equal(dpt.asnumpy(a), np.full(4, 4.0))


def test_numpy_in_a_context_is_planned_per_context(monkeypatch):
    values = np.zeros(4)
    with xpuc.device_context(QUEUE):
        increment(values)
    placed = []
    real_place = xpuc.dispatcher.place
    monkeypatch.setattr(xpuc.dispatcher, "place",
                        lambda *a, **k: placed.append(1) or real_place(*a, **k))
    with xpuc.device_context(QUEUE):
        assert launches(increment, values)[1] == 1
    assert not placed
    # outside the context the same kinds of arguments run on the CPU
    assert launches(increment, values)[1] == 0
    # an equivalent queue is another context: placed once, on that queue
    with xpuc.device_context(dpctl.SyclQueue("opencl:cpu")):
        assert launches(increment, values)[1] == 1
    np.testing.assert_array_equal(values, np.full(4, 4.0))
    assert len(placed) == 2


def test_dpnp_arrays_are_planned_and_get_dpnp_results(monkeypatch):
    import dpnp
    a = dpnp.asarray(usm(np.arange(4.0), "shared"))
    doubled(a)
    monkeypatch.setattr(xpuc.dispatcher, "place", None)  # a placed call fails
    for _ in range(2):
        result, launched = launches(doubled, a)
        assert launched > 0 and isinstance(result, dpnp.ndarray)
        assert result.usm_type == "shared" and result.sycl_queue == QUEUE
        np.testing.assert_array_equal(dpnp.asnumpy(result), np.arange(4.0) * 2)


def test_a_read_only_array_after_writable_ones_is_refused():
    a = usm(np.zeros(4))
    increment(a)
    increment(a)
    a.flags.writable = False
    with pytest.raises(numba.core.errors.TypingError, match="readonly"):
        increment(a)
    np.testing.assert_array_equal(dpt.asnumpy(a), np.full(4, 2.0))


@pytest.mark.parametrize("other", [
    lambda a: dpt.astype(a, np.int64),
    lambda a: dpt.astype(a, np.float32),
    lambda a: dpt.asarray(dpt.reshape(a, (3, 4)), order="F"),
    lambda a: dpt.reshape(a, (3, 4)),
    lambda a: a[::2],
], ids=["int64", "float32", "F order", "2-D", "strided"])
def test_each_kind_of_array_gets_its_own_build(other):
    base = usm(np.arange(12.0))
    doubled(base)
    doubled(base)
    changed = other(base)
    result, launched = launches(doubled, changed)
    assert launched > 0
    assert result.dtype == changed.dtype and result.shape == changed.shape
    np.testing.assert_array_equal(dpt.asnumpy(result), dpt.asnumpy(changed) * 2)


@pytest.mark.parametrize("usm_type", ["device", "shared", "host"])
def test_planned_results_are_on_the_argument_queue(usm_type):
    a = usm(np.arange(4.0), usm_type)
    for _ in range(3):
        result, launched = launches(doubled, a)
        assert launched > 0
        assert result.sycl_queue == QUEUE and result.usm_type == usm_type
        np.testing.assert_array_equal(dpt.asnumpy(result), np.arange(4.0) * 2)


def test_scalars_of_other_kinds_are_placed_again():
    @xpuc.jit
    def scale(a, s):
        return a * s

    a = usm(np.arange(4))
    for s in (3, 3, 2.5, True, -(2**62)):
        result, launched = launches(scale, a, s)
        assert launched > 0
        np.testing.assert_array_equal(dpt.asnumpy(result), np.arange(4) * s)
    # an int beyond int64 is no key: Numba's dispatcher takes it, as Numba's own does
    plain = numba.njit(scale.py_func)
    plain(np.arange(4), 3)
    with pytest.raises(OverflowError):
        plain(np.arange(4), 2**63)
    with pytest.raises(OverflowError):
        scale(a, 2**63)


def test_planned_call_waits_for_the_arrays_other_queues():
    """The second array's queue is another (equivalent) one, where dpctl's
    work on it is still running when the call comes."""
    from device_support import still_computing

    other = dpctl.SyclQueue("opencl:cpu")
    values = np.random.default_rng(2).random(2_000_000)
    first = usm(np.ones_like(values))

    @xpuc.jit
    def add(a, b):
        return a + b

    expected = np.sin(np.cos(np.sin(values))) + 1.0
    for _ in range(3):
        pending = still_computing(values, other)
        result, launched = launches(add, first, pending)
        assert launched > 0
        np.testing.assert_allclose(dpt.asnumpy(result), expected)


def test_planned_numpy_call_switches_to_copies(copying_host_arrays_later):
    values = np.zeros(4)
    with xpuc.device_context(QUEUE):
        increment(values)
        increment(values)
        copying_host_arrays_later()
        xpuc.reset_stats()
        increment(values)
    stats = xpuc.stats()
    assert stats["kernel_launches"] == 1 and stats["h2d_bytes"] == stats["d2h_bytes"] == 32
    np.testing.assert_array_equal(values, np.full(4, 3.0))


@pytest.fixture
def copying_host_arrays_later():
    """Turns SPEC rule 5's copies on when called (off again at the end)."""
    yield lambda: xpuc.runtime.use_system_memory(False)
    xpuc.runtime.use_system_memory(True)


def test_runtime_failure_in_a_planned_call_is_a_device_error(copying_host_arrays_later):
    @xpuc.jit
    def double(a):
        return a * 2.0

    base = np.ones(4)
    huge = np.lib.stride_tricks.as_strided(base, shape=(2,), strides=(2**45,))
    copying_host_arrays_later()
    with xpuc.device_context(QUEUE):
        double(base)
        double(base)
        with pytest.raises(xpuc.DeviceError, match="double: .*USM allocation"):
            double(huge)
        np.testing.assert_array_equal(double(base), base * 2)


def test_plans_are_bounded():
    a = np.zeros(2)
    for _ in range(xpuc.dispatcher._PLANS_PER_FUNCTION + 8):
        with xpuc.device_context(dpctl.SyclQueue("opencl:cpu")):
            increment(a)
    assert len(increment._plans) <= xpuc.dispatcher._PLANS_PER_FUNCTION


# ---- explicit kernels (issue 31, item 1) -------------------------------------------

@xpuc.kernel
def scaled_copy(src, dst, factor):
    i = xpuc.get_global_id(0)
    j = xpuc.get_global_id(1)
    dst[i, j] = src[i, j] * factor


def test_second_kernel_launch_is_planned(monkeypatch):
    src, dst = usm(np.arange(6.0).reshape(2, 3)), usm(np.zeros((2, 3)))
    scaled_copy[2, 3](src, dst, 2.0)
    # a placed launch fails
    monkeypatch.setattr(sys.modules["xpuc.explicit_kernels"], "place", None)
    for factor in (3.0, 4.0):
        xpuc.reset_stats()
        scaled_copy[2, 3](src, dst, factor)
        assert xpuc.stats()["kernel_launches"] == 1
        np.testing.assert_array_equal(dpt.asnumpy(dst), np.arange(6.0).reshape(2, 3) * factor)


def test_planned_kernel_launches_take_dpnp_arrays():
    dpnp = pytest.importorskip("dpnp")
    src = dpnp.asarray(np.arange(6.0).reshape(2, 3), sycl_queue=QUEUE)
    for factor in (2.0, 3.0):  # placed, then planned
        dst = dpnp.zeros((2, 3), sycl_queue=QUEUE)
        scaled_copy[2, 3](src, dst, factor)
        np.testing.assert_array_equal(dpnp.asnumpy(dst), np.arange(6.0).reshape(2, 3) * factor)


def test_planned_kernel_launches_read_each_launchs_arrays_and_range():
    """A plan keeps how to read the arguments, not the arguments: other arrays
    of the same kinds, strided views (strides in elements), other sizes."""
    big = usm(np.arange(40.0).reshape(5, 8))
    for rows, columns in ((2, 3), (5, 8), (3, 2)):
        src = big[:rows, ::2][:, :columns] if columns <= 4 else big[:rows, :columns]
        dst = usm(np.zeros((rows, columns)))
        scaled_copy[rows, columns](src, dst, 0.5)
        np.testing.assert_array_equal(dpt.asnumpy(dst), dpt.asnumpy(src) * 0.5)


@pytest.mark.parametrize("copies", [False, True])
def test_planned_kernel_launches_with_numpy_in_a_context(copies, copying_host_arrays_later):
    if copies:
        copying_host_arrays_later()
    src = np.arange(6.0).reshape(2, 3)
    with xpuc.device_context(QUEUE):
        for factor in (1.0, -2.0, 3.0):
            dst = np.zeros((2, 3))
            xpuc.reset_stats()
            scaled_copy[2, 3](src, dst, factor)
            stats = xpuc.stats()
            np.testing.assert_array_equal(dst, src * factor)
            assert stats["kernel_launches"] == 1
            assert stats["h2d_bytes"] == (96 if copies else 0)
            assert stats["d2h_bytes"] == (48 if copies else 0)  # dst only: src is read


def test_kernel_plans_follow_the_device_context_and_dtypes():
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    dst = np.zeros((2, 3), np.float32)
    with xpuc.device_context(QUEUE):
        scaled_copy[2, 3](src, dst, 2.0)
    with pytest.raises(xpuc.ExecutionPlacementError):
        scaled_copy[2, 3](src, dst, 2.0)  # no context: not the plan made in one
    wide = np.zeros((2, 3), np.int64)
    with xpuc.device_context(QUEUE):
        scaled_copy[2, 3](src, wide, 2.0)  # another dtype: another kernel
    np.testing.assert_array_equal(wide, (src * 2).astype(np.int64))
    assert len(scaled_copy._compiled) >= 2


def test_planned_kernel_launch_checks_its_work_group():
    src, dst = usm(np.zeros((2, 4))), usm(np.zeros((2, 4)))
    scaled_copy[xpuc.NdRange((2, 4), (1, 4))](src, dst, 1.0)
    too_big = QUEUE.sycl_device.max_work_group_size * 2
    with pytest.raises(ValueError, match="is larger than"):
        scaled_copy[xpuc.NdRange((2, too_big), (1, too_big))](src, dst, 1.0)


@xpuc.jit
def scaled(a, s):
    return a * s


@pytest.mark.parametrize("scalar", [np.float32(2.0), np.float64(2.0), np.int64(2), np.int32(2)])
def test_numpy_scalars_are_planned(monkeypatch, scalar):
    a = usm(np.arange(4.0))
    scaled(a, scalar)
    monkeypatch.setattr(xpuc.dispatcher, "place", None)  # a placed call fails
    result, launched = launches(scaled, a, scalar)
    assert launched == 1
    np.testing.assert_array_equal(dpt.asnumpy(result), np.arange(4.0) * scalar)


@xpuc.jit
def increment_then_fail(a, fail):
    for i in numba.prange(a.shape[0]):
        a[i] += 1
    if fail:
        raise ValueError("asked to fail")


def test_a_planned_call_makes_no_runtime_call_from_python(monkeypatch):
    a = usm(np.zeros(4))
    increment(a)

    def refused(*args):
        raise AssertionError("a planned call begins and ends its call in compiled code")

    monkeypatch.setattr(xpuc.runtime, "call_begin", refused)
    monkeypatch.setattr(xpuc.runtime, "call_end", refused)
    for _ in range(2):
        assert launches(increment, a)[1] == 1
    with xpuc.device_context(QUEUE):
        values = np.zeros(4)
        increment(values)  # placed (the first in the context): no begin either
        assert launches(increment, values)[1] == 1
    np.testing.assert_array_equal(dpt.asnumpy(a), np.full(4, 3.0))
    np.testing.assert_array_equal(values, np.full(4, 2.0))


@pytest.mark.usefixtures("copying_host_arrays")
def test_a_call_that_raises_ends_its_call():
    values = np.zeros(4)
    with xpuc.device_context(QUEUE):
        for _ in range(2):
            increment_then_fail(values, False)
        xpuc.reset_stats()
        with pytest.raises(ValueError, match="asked to fail"):
            increment_then_fail(values, True)  # planned
        # its device copy was copied back and freed: no call is left open
        stats = xpuc.stats()
        assert stats["usm_allocs"] == stats["usm_frees"] and stats["kernel_launches"] == 1
        with pytest.raises(xpuc.DeviceError, match="outside a call"):
            xpuc.runtime.call_end()
        increment_then_fail(values, False)
    np.testing.assert_array_equal(values, np.full(4, 4.0))
