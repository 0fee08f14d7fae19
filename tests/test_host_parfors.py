"""The cost model (SPEC rule 13): a parfor whose arrays the host can read
(NumPy arrays in a device context, shared or host USM) runs as Numba's own
host loop where its trip count is below the device's threshold, counted in
``host_parfors``; larger ones launch, device USM always launches, and
``XPUC_HOST_PARFOR_MAX`` sets the threshold (0: off, as conftest.py sets it
for the other tests)."""

import math

import numba
import numpy as np
import pytest
from device_support import DEVICE
from numba.core.runtime import _nrt_python, rtsys

import xpuc
import xpuc.runtime
from xpuc.array_library import tensor as dpt

MODEL = "XPUC_HOST_PARFOR_MAX"


@pytest.fixture(autouse=True)
def cost_model(monkeypatch):
    """The device's own threshold (the runtime reads the variable at each parfor)."""
    monkeypatch.delenv(MODEL, raising=False)


def increment(a):
    for i in numba.prange(a.shape[0]):
        a[i] += 1.0


def total(a):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        s += a[i] * 2.0
    return s


def largest_and_product(a):
    m = -np.inf
    p = 1.0
    for i in numba.prange(a.shape[0]):
        m = max(m, a[i])
        p *= a[i]
    return m, p


def scale_rows(a, out):
    for i in numba.prange(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * (j + 1)


def nested(out):
    for i in numba.prange(out.shape[0]):
        for j in numba.prange(out.shape[1]):
            out[i, j] = i * 10 + j


def add_2d(a, b):
    return a + b * 2.0


def heavy(a, b):
    for i in numba.prange(a.shape[0]):
        s = 0.0
        for j in range(b.shape[0]):
            s += math.sin(b[j] * a[i])
        a[i] = s


def both(fn):
    """xpuc's jit of ``fn`` and Numba's parallel one."""
    return xpuc.jit(fn), numba.njit(parallel=True)(fn)


def run(fn, *args, device=DEVICE):
    """``fn(*args)`` under the device context, with the counters after it."""
    xpuc.reset_stats()
    with xpuc.device_context(device):
        result = fn(*args)
    return result, xpuc.stats()


def on_host(stats, parfors=1):
    return stats["host_parfors"] == parfors and stats["kernel_launches"] == 0


def launched(stats, parfors=1):
    return stats["kernel_launches"] == parfors and stats["host_parfors"] == 0


def test_a_tiny_elementwise_parfor_runs_numbas_loop_on_the_host():
    ours, numbas = both(increment)
    a, expected = np.arange(5.0), np.arange(5.0)
    _, stats = run(ours, a)
    numbas(expected)
    assert on_host(stats), stats
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("fn", [total, largest_and_product])
def test_tiny_reductions_give_numbas_results(fn):
    ours, numbas = both(fn)
    a = np.array([3.0, -1.5, 7.25, 2.0])
    result, stats = run(ours, a)
    assert on_host(stats), stats
    assert result == numbas(a)


def test_tiny_2d_and_nested_parfors_give_numbas_results():
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    for fn, args in ((scale_rows, (a, np.zeros((2, 3)))), (nested, (np.zeros((3, 2)),)),
                     (add_2d, (a, b))):
        ours, numbas = both(fn)
        expected_args = [x.copy() for x in args]
        result, stats = run(ours, *args)
        assert on_host(stats), (fn.__name__, stats)
        expected = numbas(*expected_args)
        np.testing.assert_array_equal(result if expected is not None else args[-1],
                                      expected if expected is not None else expected_args[-1])


@pytest.mark.parametrize("usm_type", ["shared", "host"])
def test_tiny_parfors_on_host_readable_usm_run_on_the_host(usm_type):
    ours = xpuc.jit(increment)
    a = xpuc.asarray(np.arange(4.0), queue=DEVICE, usm_type=usm_type)
    _, stats = run(ours, a)
    assert on_host(stats), stats
    np.testing.assert_array_equal(dpt.asnumpy(a), np.arange(4.0) + 1.0)


def shift_right(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[1:] = row[:-1]


def shift_left_doubled(x):
    for i in numba.prange(x.shape[0]):
        x[i, :-1] = x[i, 1:] * 2.0


def shift_right_of(x, y):
    for i in numba.prange(x.shape[0]):
        x[i, 1:] = y[i, :-1]


@pytest.mark.parametrize("usm_type", [None, "shared"])
@pytest.mark.parametrize("fn", [shift_right, shift_left_doubled, shift_right_of])
def test_a_host_parfors_store_between_views_of_one_array_reads_as_if_copied(fn, usm_type):
    """NumPy reads ``row[:-1]`` whole before it stores ``row[1:]``: Numba's
    sequential loop reads a copy where the two meet (the kernel orders its
    loop instead); views of two arrays that do not meet are read in place."""
    values = [np.arange(12.0).reshape(3, 4)]
    if fn is shift_right_of:
        values.append(-values[0])
    expected = [v.copy() for v in values]
    fn(*expected)
    arrays = values if usm_type is None else \
        [xpuc.asarray(v, queue=DEVICE, usm_type=usm_type) for v in values]
    _, stats = run(xpuc.jit(fn), *arrays)
    assert on_host(stats), stats
    result = arrays[0] if usm_type is None else dpt.asnumpy(arrays[0])
    np.testing.assert_array_equal(result, expected[0])


def add_to_rows(x, b):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row += 1.0 - b[i]  # an array the body makes, at each iteration


@pytest.mark.parametrize("usm_type", ["shared", "host"])
def test_arrays_a_host_parfors_body_makes_on_usm_are_freed(usm_type):
    # each iteration's array was freed by the next one's store, the last one never
    x0, b0 = np.arange(15.0).reshape(5, 3), np.linspace(0.0, 1.0, 15).reshape(5, 3)
    x, b = (xpuc.asarray(v, queue=DEVICE, usm_type=usm_type) for v in (x0, b0))
    _, stats = run(xpuc.jit(add_to_rows), x, b)
    assert on_host(stats), stats
    assert stats["usm_allocs"] == stats["usm_frees"] == 5, stats
    np.testing.assert_array_equal(dpt.asnumpy(x), x0 + (1.0 - b0))


def test_arrays_a_host_parfors_body_makes_from_numpy_arrays_are_freed():
    x, b = np.arange(15.0).reshape(5, 3), np.linspace(0.0, 1.0, 15).reshape(5, 3)
    expected = x + (1.0 - b)
    ours = xpuc.jit(add_to_rows)
    run(ours, x.copy(), b)  # compiled first: compiling allocates too
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        _, stats = run(ours, x, b)
        after = rtsys.get_allocation_stats()
    finally:
        _nrt_python.memsys_disable_stats()
    assert on_host(stats), stats
    assert after.alloc - before.alloc == after.free - before.free > 0, (before, after)
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free, (before, after)
    np.testing.assert_array_equal(x, expected)


def test_device_usm_never_runs_on_the_host():
    ours = xpuc.jit(increment)
    a = xpuc.asarray(np.arange(4.0), queue=DEVICE, usm_type="device")
    _, stats = run(ours, a)
    assert launched(stats), stats
    np.testing.assert_array_equal(dpt.asnumpy(a), np.arange(4.0) + 1.0)


def fill_rows(x, v):
    for i in numba.pndindex(x.shape[0]):  # i is a 1-tuple: x[i] is a row
        x[i] = v


def test_a_one_dimensional_pndindex_launches():
    x = np.zeros((3, 2))
    _, stats = run(xpuc.jit(fill_rows), x, 2.5)
    assert launched(stats), stats
    np.testing.assert_array_equal(x, np.full((3, 2), 2.5))


def test_large_parfors_launch():
    ours, numbas = both(total)
    a = np.arange(200_000.0)
    result, stats = run(ours, a)
    assert launched(stats), stats
    assert result == pytest.approx(numbas(a), rel=1e-12)


def test_the_threshold_weighs_the_body():
    """At one trip count, a light body stays on the host and one with an
    inner loop of math calls launches."""
    light, weighty = xpuc.jit(increment), xpuc.jit(heavy)
    assert on_host(run(light, np.zeros(64))[1])
    a, b = np.linspace(0, 1, 64), np.linspace(0, 1, 64)
    expected = a.copy()
    numba.njit(parallel=True)(heavy)(expected, b)
    assert launched(run(weighty, a, b)[1])
    np.testing.assert_allclose(a, expected, rtol=1e-12)


def test_the_variable_sets_the_threshold_and_zero_turns_the_model_off(monkeypatch):
    ours = xpuc.jit(increment)
    monkeypatch.setenv(MODEL, "0")
    assert launched(run(ours, np.zeros(1))[1])
    monkeypatch.setenv(MODEL, "1000")
    assert on_host(run(ours, np.zeros(1000))[1])
    assert launched(run(ours, np.zeros(1001))[1])


def test_a_bad_threshold_is_a_device_error(monkeypatch):
    monkeypatch.setenv(MODEL, "lots")
    with pytest.raises(xpuc.DeviceError, match="XPUC_HOST_PARFOR_MAX=lots is not a trip count"):
        run(xpuc.jit(increment), np.zeros(4))


def test_what_cannot_be_offloaded_is_refused_whatever_the_size():
    @xpuc.jit
    def gaps(a, out):
        for i in numba.prange(a.shape[0]):
            out[i] = np.spacing(a[i])

    with pytest.raises(xpuc.UnsupportedError, match="spacing"):
        run(gaps, np.ones(1), np.ones(1))


def fewer_into_a_slice(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[2:5] = row[0:2]
    return x


def dots_of_rows(a, b):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        s += np.dot(a[i], b[i])
    return s


@pytest.mark.parametrize("fn, args, exception, offset, message", [
    (fewer_into_a_slice, (np.ones((4, 8)),), AssertionError, 3,
     "sizes of 'row[2:5]' and 'row[:2]' do not match"),
    (dots_of_rows, (np.ones((4, 3)), np.ones((4, 5))), ValueError, 3,
     "incompatible array sizes for np.dot(a, b) (vector * vector)")],
    ids=["slices", "np.dot"])
@pytest.mark.parametrize("threshold", ["0", "1000000"], ids=["kernel", "host"])
def test_a_size_mismatch_reads_the_same_whichever_side_runs_the_loop(
        monkeypatch, fn, args, exception, offset, message, threshold):
    """The host compares the sizes before it chooses a side: its own copy of
    the loop would raise Numba's check, without the user's line."""
    monkeypatch.setenv(MODEL, threshold)
    xpuc.reset_stats()
    with pytest.raises(exception) as error, xpuc.device_context(DEVICE):
        xpuc.jit(fn)(*args)
    assert str(error.value) == f"{__file__}:{fn.__code__.co_firstlineno + offset}: {message}"
    assert xpuc.stats()["kernel_launches"] == xpuc.stats()["host_parfors"] == 0


@xpuc.jit
def kernel_then_host(big, small):
    for i in numba.prange(big.shape[0]):
        big[i] = i * 2.0
    for i in numba.prange(small.shape[0]):  # on the host: reads the kernel's writes
        small[i] = big[i] + 1.0


@xpuc.jit
def host_between_kernels(big, small, out):
    for i in numba.prange(big.shape[0]):
        big[i] = i * 1.0
    for i in numba.prange(small.shape[0]):  # on the host: writes what the next kernel reads
        big[i] = small[i]
    for i in numba.prange(big.shape[0]):
        out[i] = big[i] + 1.0


@pytest.mark.usefixtures("copying_host_arrays")
def test_on_the_copying_path_the_host_reads_what_kernels_wrote():
    big, small = np.zeros(100_000), np.zeros(4)
    _, stats = run(kernel_then_host, big, small)
    assert stats["host_parfors"] == 1 and stats["kernel_launches"] == 1, stats
    np.testing.assert_array_equal(small, np.arange(4) * 2.0 + 1.0)
    np.testing.assert_array_equal(big, np.arange(100_000) * 2.0)


@pytest.mark.usefixtures("copying_host_arrays")
def test_on_the_copying_path_kernels_read_what_the_host_wrote():
    big, small, out = np.zeros(100_000), np.full(4, -5.0), np.zeros(100_000)
    _, stats = run(host_between_kernels, big, small, out)
    assert stats["host_parfors"] == 1 and stats["kernel_launches"] == 2, stats
    expected = np.arange(100_000.0)
    expected[:4] = -5.0
    np.testing.assert_array_equal(big, expected)
    np.testing.assert_array_equal(out, expected + 1.0)


@pytest.mark.usefixtures("copying_host_arrays")
def test_on_the_copying_path_a_host_parfor_copies_nothing():
    a = np.arange(8.0)
    _, stats = run(xpuc.jit(increment), a)
    assert on_host(stats), stats
    assert stats["h2d_bytes"] == stats["d2h_bytes"] == stats["usm_allocs"] == 0, stats
    np.testing.assert_array_equal(a, np.arange(8.0) + 1.0)


def test_the_launch_trace_shows_host_parfors(capfd):
    ours = xpuc.jit(increment)
    capfd.readouterr()
    xpuc.runtime.trace_launches(True)
    try:
        run(ours, np.zeros(3))
    finally:
        xpuc.runtime.trace_launches(False)
    lines = capfd.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("xpuc: ran parfor 'increment"), lines
    assert "on the host" in lines[0] and "(trip count 3)" in lines[0]
