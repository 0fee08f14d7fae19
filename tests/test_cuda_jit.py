"""``xpuc.jit`` functions on a CUDA device: NumPy arrays under
``device_context("cuda:0")`` copied to the device at each offloaded call, the
parfors launched as PTX through the runtime's CUDA queue (tests marked
``cuda`` skip where there is no GPU; scripts/cuda-device-tests.sh runs them
there), and the errors where there is none."""

import numba
import numpy as np
import pytest

import xpuc
from xpuc import cuda_runtime
from xpuc.errors import DeviceError


def _cuda_device_count() -> int:
    try:
        return cuda_runtime.device_count()
    except DeviceError:
        return 0


HAS_CUDA = _cuda_device_count() > 0


def cuda(test):
    """Mark ``test`` as needing a CUDA device, and skip it where there is none."""
    return pytest.mark.cuda(pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")(test))


@xpuc.jit
def _scaled_sum(a, b, out):
    """A prange loop, an array expression and a reduction."""
    for i in numba.prange(a.shape[0]):
        out[i] = a[i] * 2.0 + np.sqrt(b[i])
    c = a * b - 1.0
    total = 0.0
    for i in numba.prange(c.shape[0]):
        total += c[i]
    return total


@cuda
@pytest.mark.parametrize("n", [1, 1000, 1_000_003])
def test_numpy_arrays_in_a_cuda_device_context_are_computed_there(n, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")  # every parfor on the device, tiny or not
    rng = np.random.default_rng(0)
    a, b = rng.random(n), rng.random(n)
    out = np.zeros(n)
    before = xpuc.stats()["kernel_launches"]
    with xpuc.device_context("cuda:0"):
        total = _scaled_sum(a, b, out)
    assert xpuc.stats()["kernel_launches"] - before >= 2
    np.testing.assert_allclose(out, a * 2.0 + np.sqrt(b), rtol=1e-15)
    np.testing.assert_allclose(total, (a * b - 1.0).sum(), rtol=1e-12)


@cuda
def test_cuda_names_its_first_device():
    with xpuc.device_context("cuda") as queue:
        assert queue is xpuc.get_current_queue()
    with xpuc.device_context("cuda:0") as first:
        assert first is queue


def test_a_cuda_device_that_is_not_there_is_a_device_error():
    count = _cuda_device_count()
    with pytest.raises(DeviceError, match=rf"no device cuda:{count} |no CUDA driver"):
        with xpuc.device_context(f"cuda:{count}"):
            pass


def test_a_malformed_cuda_name_is_a_device_error():
    with pytest.raises(DeviceError, match=r"'cuda:x' is not a CUDA device name: 'cuda' or "
                                          r"'cuda:N'"):
        xpuc.device_context("cuda:x").__enter__()
