"""``prange`` loops with a step other than 1 (Numba's parfor pass takes step
1 only, under ``parallel=True`` too: ``UnsupportedRewriteError``) run the
iterations of Python's ``range``, once each, as kernels; each result is the
Python function's (where ``prange`` is ``range``)."""

import numpy as np
import pytest
from device_support import DEVICE, offload
from numba import prange

import xpuc
from xpuc.array_library import tensor as dpt


def every_other(x):
    out = np.zeros_like(x)
    for i in prange(0, x.shape[0], 2):
        out[i] = x[i] * 2.0
    return out


def backwards(x):
    out = np.zeros_like(x)
    for i in prange(x.shape[0] - 1, -1, -1):
        out[i] = x[i] + i
    return out


def stepped(x, start, stop, step):
    out = np.zeros(x.shape)
    for i in prange(start, stop, step):
        out[i] = x[i] + 1.0
    return out


def stepped_sum(x, start, stop, step):
    total = 0.0
    for i in prange(start, stop, step):
        total += x[i] * i
    return total


def every_third_row_doubled(m):
    for i in prange(1, m.shape[0], 3):
        for j in range(m.shape[1]):
            m[i, j] *= 2.0
    return m


def nested_steps(m, first, stop, step):
    for i in prange(m.shape[0] - 1, -1, -2):
        for j in prange(first, stop, step):
            m[i, j] = i * 10 + j
    return m


def own_elements_updated(x, y):
    for i in prange(1, x.shape[0], 3):
        x[i] += y[i]
    return x


def start(n: int) -> np.ndarray:
    return np.arange(1.0, n + 1.0)


JITTED = {fn: xpuc.jit(fn) for fn in (every_other, backwards, stepped, stepped_sum,
                                      every_third_row_doubled, nested_steps,
                                      own_elements_updated)}


@pytest.mark.parametrize("fn", [every_other, backwards], ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [1, 8, 9])
def test_constant_steps(fn, n):
    assert np.array_equal(offload(JITTED[fn], start(n)), fn(start(n)))


# positive and negative steps, from either end, past the array's end,
# and ranges of no iteration
BOUNDS = [(3, 17, 4), (17, 2, -5), (0, 20, 7), (19, -1, -3), (2, 3, 5), (5, 4, -9), (1, 20, 1)]
EMPTY = [(5, 5, 2), (5, 2, 1), (2, 5, -1), (0, 0, -3), (9, 3, 4)]


@pytest.mark.parametrize("fn", [stepped, stepped_sum], ids=lambda f: f.__name__)
@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
def test_steps_from_arguments(fn, bounds):
    assert np.array_equal(offload(JITTED[fn], start(20), *bounds), fn(start(20), *bounds))


@pytest.mark.parametrize("fn", [stepped, stepped_sum], ids=lambda f: f.__name__)
@pytest.mark.parametrize("bounds", EMPTY, ids=str)
def test_ranges_of_no_iteration(fn, bounds):
    with xpuc.device_context(DEVICE):
        got = JITTED[fn](start(20), *bounds)
    assert np.array_equal(got, fn(start(20), *bounds))


def test_device_usm():
    x = xpuc.asarray(start(20), queue=DEVICE, usm_type="device")
    got = JITTED[stepped](x, 18, 0, -4)
    assert np.array_equal(dpt.asnumpy(got), stepped(start(20), 18, 0, -4))
    assert JITTED[stepped_sum](x, 18, 0, -4) == stepped_sum(start(20), 18, 0, -4)


def test_an_inner_loop_in_a_stepped_body():
    m = np.arange(35.0).reshape(7, 5)
    assert np.array_equal(offload(JITTED[every_third_row_doubled], m.copy()),
                          every_third_row_doubled(m.copy()))


@pytest.mark.parametrize("bounds", [(0, 7, 2), (1, 7, 3), (6, -1, -2), (5, 0, -4), (3, 3, 1),
                                    (2, 6, 0)], ids=str)
def test_a_stepped_prange_in_a_stepped_body(bounds):
    """The inner prange runs in the outer one's work-item, its trip count
    computed there (a kernel cannot raise: a step of 0 runs no iteration)."""
    m = np.zeros((5, 7))
    expected = m.copy()
    if bounds[2] != 0:
        nested_steps(expected, *bounds)
    assert np.array_equal(offload(JITTED[nested_steps], m.copy(), *bounds), expected)


def test_updates_of_the_iterations_own_elements():
    x, y = start(20), np.linspace(0.0, 1.0, 20)
    assert np.array_equal(offload(JITTED[own_elements_updated], x.copy(), y),
                          own_elements_updated(x.copy(), y))


def test_a_step_of_zero_raises_as_range_does():
    with pytest.raises(ValueError, match="arg 3 must not be zero") as expected:
        stepped(start(4), 0, 4, 0)
    with xpuc.device_context(DEVICE), pytest.raises(ValueError) as error:
        JITTED[stepped](start(4), 0, 4, 0)
    assert str(error.value) == str(expected.value)
