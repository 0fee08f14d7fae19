"""dpnp in jit code as people wrote it for numba-dpex (issue 33, item 1):
dpnp's functions are NumPy's of the same name, offloaded as those are, and
dpnp's constructors work in a function however it is reached."""

import inspect
import math

import dpnp
import numba
import numpy as np
import pytest

import xpuc

DEVICE = "opencl:cpu"


def launched(function, *args):
    xpuc.reset_stats()
    result = function(*args)
    return result, xpuc.stats()["kernel_launches"]


@xpuc.jit
def doubled(x):
    out = dpnp.empty(x.shape, dtype=x.dtype)
    for i in numba.prange(x.shape[0]):
        out[i] = 2 * x[i]
    return out


@xpuc.jit
def calls_doubled(x):
    return doubled(x)


@xpuc.jit
def calls_calls_doubled(x):
    return calls_doubled(x) + 1.0


def test_constructor_in_a_called_function_first_called_from_another():
    x = dpnp.arange(10.0)
    result, launches = launched(calls_doubled, x)
    assert isinstance(result, dpnp.ndarray)
    np.testing.assert_array_equal(dpnp.asnumpy(result), 2 * np.arange(10.0))
    assert launches >= 1
    twice = calls_calls_doubled(x)
    np.testing.assert_array_equal(dpnp.asnumpy(twice), 2 * np.arange(10.0) + 1)


def test_a_called_functions_constructors_place_the_call():
    """NumPy arguments outside a device context: the callee's constructor
    places the call on dpnp's default device, as calling it alone does."""
    result, launches = launched(calls_doubled, np.arange(4.0))
    assert isinstance(result, dpnp.ndarray) and launches >= 1
    np.testing.assert_array_equal(dpnp.asnumpy(result), 2 * np.arange(4.0))


@xpuc.jit
def made_on(n):
    return dpnp.ones(n, device="level_zero:gpu:7")


@xpuc.jit
def calls_made_on(n):
    return made_on(n)


def test_a_called_functions_device_is_the_callers():
    with pytest.raises(xpuc.DeviceError, match="level_zero:gpu:7"):
        calls_made_on(3)


@xpuc.jit
def on_queue(n, q):
    return dpnp.zeros(n, sycl_queue=q)


@xpuc.jit
def passes_queue(n, queue):
    return on_queue(n, queue)


@xpuc.jit
def passes_no_queue(n):
    return on_queue(n, None)


def test_a_called_functions_queue_is_the_callers_argument():
    import dpctl

    queue = dpctl.SyclQueue(DEVICE)
    result = passes_queue(3, queue)
    assert result.sycl_queue == queue
    np.testing.assert_array_equal(dpnp.asnumpy(result), 0.0)
    with pytest.raises(xpuc.UnsupportedError) as error:
        passes_no_queue(3)
    message = str(error.value)
    assert f"{__file__}:" in message and "sycl_queue=q" in message


@xpuc.jit
def hypotenuse(a, b):
    return dpnp.sqrt(a * a + b * b)


def test_dpbench_style_array_expression_returns_dpnp_arrays():
    a, b = np.linspace(0.0, 3.0, 1000), np.linspace(1.0, 2.0, 1000)
    result, launches = launched(hypotenuse, dpnp.asarray(a), dpnp.asarray(b))
    assert isinstance(result, dpnp.ndarray) and launches >= 1
    np.testing.assert_allclose(dpnp.asnumpy(result), np.sqrt(a * a + b * b))


def test_dpnp_functions_of_numpy_arrays_in_a_device_context_and_on_the_cpu():
    a, b = np.arange(5.0), np.ones(5)
    with xpuc.device_context(DEVICE):
        xpuc.reset_stats()
        result = hypotenuse(a, b)
        assert xpuc.stats()["kernel_launches"] >= 1
    assert isinstance(result, np.ndarray)
    np.testing.assert_allclose(result, np.sqrt(a * a + b * b))
    np.testing.assert_allclose(hypotenuse(a, b), np.sqrt(a * a + b * b))  # plain Numba


@xpuc.jit
def black_scholes_like(price, strike, t, rate, vol, call):
    # numba-dpex style: dpnp's functions on scalars in a prange body
    for i in numba.prange(price.shape[0]):
        d1 = (dpnp.log(price[i] / strike[i]) + (rate + 0.5 * vol * vol) * t[i]) / (
            vol * dpnp.sqrt(t[i]))
        call[i] = price[i] * dpnp.exp(-d1 * d1 / 2) + dpnp.abs(dpnp.minimum(d1, 0.0))


def test_dpnp_functions_on_scalars_in_a_prange_body():
    rng = np.random.default_rng(0)
    price, strike, t = (rng.uniform(1.0, 2.0, 64) for _ in range(3))
    call = dpnp.zeros(64)
    _, launches = launched(black_scholes_like, dpnp.asarray(price), dpnp.asarray(strike),
                           dpnp.asarray(t), 0.1, 0.2, call)
    d1 = (np.log(price / strike) + (0.1 + 0.5 * 0.2 * 0.2) * t) / (0.2 * np.sqrt(t))
    expected = price * np.exp(-d1 * d1 / 2) + np.abs(np.minimum(d1, 0.0))
    assert launches >= 1
    np.testing.assert_allclose(dpnp.asnumpy(call), expected)


@xpuc.jit
def reductions(x):
    return dpnp.sum(x), dpnp.max(x), dpnp.mean(x, axis=0), dpnp.dot(x[0], x[1])


@xpuc.jit
def selections(x):
    return dpnp.where(x > 2.0, x, 0.0), dpnp.clip(x, 1.0, 3.0), dpnp.exp(x), dpnp.log1p(x)


def test_dpnp_reductions_and_selections_offload_as_numpys():
    host = np.arange(12.0).reshape(3, 4) / 4
    x = dpnp.asarray(host)
    (total, largest, mean, dot), launches = launched(reductions, x)
    assert launches >= 3  # the whole-array reductions share one kernel
    assert math.isclose(total, host.sum()) and largest == host.max()
    assert isinstance(mean, dpnp.ndarray)
    np.testing.assert_allclose(dpnp.asnumpy(mean), host.mean(axis=0))
    assert math.isclose(dot, host[0] @ host[1])
    where, clipped, exp, log1p = selections(x)
    np.testing.assert_allclose(dpnp.asnumpy(where), np.where(host > 2.0, host, 0.0))
    np.testing.assert_allclose(dpnp.asnumpy(clipped), np.clip(host, 1.0, 3.0))
    np.testing.assert_allclose(dpnp.asnumpy(exp), np.exp(host))
    np.testing.assert_allclose(dpnp.asnumpy(log1p), np.log1p(host))


def test_dpnp_functions_imported_by_name():
    from dpnp import exp as dpnp_exp

    @xpuc.jit
    def exponent(x):
        return dpnp_exp(x)

    result = exponent(dpnp.asarray(np.arange(3.0)))
    np.testing.assert_allclose(dpnp.asnumpy(result), np.exp(np.arange(3.0)))



@xpuc.jit
def flattened_and_transposed(x):
    one = x.dtype.type(1.0)  # attributes of what is not dpnp stay as they are
    return dpnp.reshape(x, (x.size,)) + one, dpnp.transpose(x) * 2.0


def test_dpnp_reshape_and_transpose_are_numpys():
    host = np.arange(6.0).reshape(2, 3)
    (flat, transposed), launches = launched(flattened_and_transposed, dpnp.asarray(host))
    assert isinstance(flat, dpnp.ndarray) and launches >= 2
    np.testing.assert_array_equal(dpnp.asnumpy(flat), host.reshape(6) + 1.0)
    np.testing.assert_array_equal(dpnp.asnumpy(transposed), host.T * 2.0)


@xpuc.kernel
def distances(x, y, out):
    i = xpuc.get_global_id(0)
    out[i] = dpnp.sqrt(x[i] * x[i] + y[i] * y[i])


def test_dpnp_functions_in_an_explicit_kernel():
    x, y = np.arange(8.0), np.ones(8)
    out = xpuc.asarray(np.zeros(8))
    distances[8](xpuc.asarray(x), xpuc.asarray(y), out)
    np.testing.assert_allclose(dpnp.asnumpy(dpnp.asarray(out)), np.sqrt(x * x + y * y))


# ---- dpnp's other functions: NumPy's where Numba compiles that, else refused -----------

@xpuc.jit
def histogram_counts(r, bins):
    counts = dpnp.histogram(r, bins)[0]
    return counts * 2


@xpuc.jit
def inverse(a):
    return dpnp.linalg.inv(a) + 0.0


@xpuc.jit
def to_numpy(a):
    return dpnp.asnumpy(a)


def _line(function, text: str) -> int:
    lines, first = inspect.getsourcelines(function.py_func)
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_dpnp_functions_numba_compiles_only_as_numpys_run_on_the_host():
    """``dpnp.histogram`` and ``dpnp.linalg.inv`` are NumPy's, which Numba runs
    on the host: right on NumPy arrays in a device context."""
    r = np.random.default_rng(1).random(200)
    with xpuc.device_context(DEVICE):
        xpuc.reset_stats()
        np.testing.assert_array_equal(histogram_counts(r, 7), np.histogram(r, 7)[0] * 2)
        assert xpuc.stats()["kernel_launches"] >= 1  # the product
        a = np.array([[4.0, 1.0], [2.0, 3.0]])
        np.testing.assert_allclose(inverse(a), np.linalg.inv(a))


def test_dpnp_function_on_a_device_array_is_refused_as_host_code():
    """A histogram of given edges is NumPy's host loop (of an integer count of
    bins, it runs on the device: test_host_operations_offloaded.py)."""
    with pytest.raises(xpuc.UnsupportedError) as refusal:
        histogram_counts(dpnp.asarray(np.ones(8)), dpnp.asarray(np.arange(4.0)))
    message = str(refusal.value)
    assert message.startswith(f"{__file__}:{_line(histogram_counts, 'histogram(')}: ")
    assert "host code uses elements of the usm_type='device' array 'r'" in message


def test_dpnp_function_numba_has_no_numpy_namesake_of_is_refused_naming_it():
    for args in ((dpnp.asarray(np.ones(3)),), (np.ones(3),)):
        with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as refusal:
            to_numpy(*args)
        assert str(refusal.value) == (
            f"{__file__}:{_line(to_numpy, 'asnumpy')}: dpnp.asnumpy in jit code: xpuc compiles "
            "dpnp's functions as NumPy's of the same name, and Numba compiles no NumPy "
            "function of that name")
