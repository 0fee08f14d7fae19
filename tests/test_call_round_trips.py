"""What a planned call of a function with several parfors asks of the device:
one launch per parfor (per launch its plan makes), one wait for each launch and
one for the caller's queue at the call's start, and no copy, allocation or
build, on USM arrays and on NumPy arrays in a context alike. A wait, copy or
lookup that crept in per parfor would show here as a count, not as a time
(``benchmarks/suite.py``'s ``launch_overheads`` times it). Results equal
Numba's ``parallel=True``."""

import sys
from pathlib import Path

import dpctl
import numba
import numpy as np
import pytest

import xpuc
from xpuc.array_library import tensor as dpt

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from workloads import four_steps  # noqa: E402  (the suite's four-parfor call)

QUEUE = dpctl.SyclQueue("opencl:cpu")


def one_step(a):
    for i in numba.prange(a.shape[0]):
        a[i] += 1.0


def heat_steps(u, other, steps):
    for _ in range(steps):
        for i in numba.prange(1, u.shape[0] - 1):
            other[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, other = other, u
    return u


def scaled_then_summed(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = a[i] * 3.0 - 1.0
    n = out.shape[0] // 2  # host statements between the parfors
    total = 0.0
    for i in numba.prange(n):
        total += out[i] * out[i + n]
    return total


FOUR_STEPS, ONE_STEP = xpuc.jit(four_steps), xpuc.jit(one_step)
HEAT_STEPS, SCALED_THEN_SUMMED = xpuc.jit(heat_steps), xpuc.jit(scaled_then_summed)


def _on(kind: str, values: np.ndarray):
    """``values`` as the call takes them: a USM array of ``kind``, or NumPy's."""
    return values.copy() if kind == "numpy" else dpt.asarray(
        values, usm_type=kind, sycl_queue=QUEUE)


def _numpy(value) -> np.ndarray:
    return dpt.asnumpy(value) if isinstance(value, dpt.usm_ndarray) else np.asarray(value)


def _counts(call) -> dict[str, int]:
    """What ``call()`` asked of the device (a device context around it)."""
    with xpuc.device_context(QUEUE):
        xpuc.reset_stats()
        call()
        return xpuc.stats()


KINDS = ["device", "shared", "numpy"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 1000])
def test_a_planned_call_waits_once_per_launch_and_once_for_the_caller(kind, n):
    a = _on(kind, np.zeros(n))
    with xpuc.device_context(QUEUE):
        FOUR_STEPS(a)  # compiles and plans
        ONE_STEP(a)
    per_parfor = _counts(lambda: ONE_STEP(a))["kernel_launches"]
    assert per_parfor >= 1
    counts = _counts(lambda: FOUR_STEPS(a))
    assert counts["kernel_launches"] == 4 * per_parfor, counts
    assert counts["device_waits"] == counts["kernel_launches"] + 1, counts
    assert {name: counts[name] for name in (
        "h2d_bytes", "d2h_bytes", "usm_allocs", "usm_frees", "kernel_builds",
        "kernels_compiled", "host_parfors")} == dict.fromkeys((
            "h2d_bytes", "d2h_bytes", "usm_allocs", "usm_frees", "kernel_builds",
            "kernels_compiled", "host_parfors"), 0), counts


def test_copies_of_numpy_arrays_are_waits_too(copying_host_arrays):
    # a device that cannot read NumPy's memory: the array goes in before the
    # first parfor and out at the call's end, each copy waited for
    a = np.zeros(8)
    with xpuc.device_context(QUEUE):
        FOUR_STEPS(a)
    counts = _counts(lambda: FOUR_STEPS(a))
    assert counts["h2d_bytes"] == counts["d2h_bytes"] == a.nbytes, counts
    assert counts["device_waits"] == counts["kernel_launches"] + 1 + 2, counts


@pytest.mark.parametrize("kind", KINDS)
def test_consecutive_parfors_give_numbas_results(kind):
    values = np.random.default_rng(0).random(1001)
    expected, a = values.copy(), _on(kind, values)
    with xpuc.device_context(QUEUE):
        for _ in range(2):  # the first call, then a planned one
            FOUR_STEPS(a)
            numba.njit(parallel=True)(four_steps)(expected)
    np.testing.assert_allclose(_numpy(a), expected, rtol=1e-15)


@pytest.mark.parametrize("kind", KINDS)
def test_a_parfor_in_a_time_loop_gives_numbas_results(kind):
    values = np.random.default_rng(1).random(2000)
    expected = numba.njit(parallel=True)(heat_steps)(values.copy(), values.copy(), 7)
    u, other = _on(kind, values), _on(kind, values)
    with xpuc.device_context(QUEUE):
        xpuc.reset_stats()
        result = HEAT_STEPS(u, other, 7)
        assert xpuc.stats()["kernel_launches"] >= 7
    np.testing.assert_allclose(_numpy(result), expected, rtol=1e-15)


@pytest.mark.parametrize("kind", KINDS)
def test_a_reduction_after_a_parfor_gives_numbas_result(kind):
    values = np.random.default_rng(2).random(1000)
    out = np.zeros_like(values)
    expected = numba.njit(parallel=True)(scaled_then_summed)(values, out)
    a, into = _on(kind, values), _on(kind, np.zeros_like(values))
    with xpuc.device_context(QUEUE):
        total = SCALED_THEN_SUMMED(a, into)
    np.testing.assert_allclose(_numpy(into), out, rtol=1e-15)
    assert total == pytest.approx(expected, rel=1e-12)
