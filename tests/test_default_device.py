"""The process-wide default device (issue 23): ``xpuc.set_default_device(d)``
or ``XPUC_DEVICE`` is the outermost device context of every thread; without
either, SPEC rule 1 holds (the rest of the suite runs that way)."""

import os
import subprocess
import sys
import threading

import dpctl
import numba
import numpy as np
import pytest
from device_support import DEVICE

import xpuc
import xpuc.device


@xpuc.jit
def scale(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = 3.0 * a[i] + 1.0


@pytest.fixture
def restore_default():
    """The default device as it was before the test (unset: as XPUC_DEVICE says)."""
    before = xpuc.device._default
    yield
    xpuc.device._default = before


def launches(fn, *args) -> int:
    xpuc.reset_stats()
    fn(*args)
    return xpuc.stats()["kernel_launches"]


@pytest.mark.usefixtures("restore_default")
def test_the_default_device_is_every_threads_outermost_context():
    a, out = np.arange(10.0), np.zeros(10)
    xpuc.set_default_device(DEVICE)
    assert xpuc.get_current_queue().sycl_device == dpctl.SyclDevice(DEVICE)
    assert launches(scale, a, out) == 1
    np.testing.assert_array_equal(out, 3.0 * a + 1.0)
    in_thread = []
    thread = threading.Thread(target=lambda: in_thread.append(launches(scale, a, out)))
    thread.start()
    thread.join()
    assert in_thread == [1]
    root = dpctl.SyclDevice(DEVICE)
    if root.partition_max_sub_devices > 1:  # an inner context wins
        name = f"{root.filter_string}/partition=1/0"
        with xpuc.device_context(name) as queue:
            assert xpuc.get_current_queue() is queue
            assert launches(scale, a, out) == 1
    xpuc.set_default_device(None)
    assert xpuc.get_current_queue() is None
    assert launches(scale, a, out) == 0  # SPEC rule 1 again


@pytest.mark.usefixtures("restore_default")
def test_usm_arrays_elsewhere_conflict_with_the_default_device():
    """As with any device context (SPEC rule 6)."""
    root = dpctl.SyclDevice(DEVICE)
    if root.partition_max_sub_devices < 2:
        pytest.skip(f"{DEVICE} cannot be split")
    x = xpuc.asarray(np.arange(4.0), queue=DEVICE)
    y = xpuc.asarray(np.zeros(4), queue=DEVICE)
    xpuc.set_default_device(f"{root.filter_string}/partition=1/0")
    with pytest.raises(xpuc.ExecutionPlacementError, match="active device context is"):
        scale(x, y)


CHILD = '''
import threading
import numpy as np
import numba
import xpuc
from xpuc.device import device_name


@xpuc.jit
def twice(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = 2.0 * a[i]


def call():
    a, out = np.arange(10.0), np.zeros(10)
    twice(a, out)
    assert np.array_equal(out, 2.0 * a)


try:
    call()
    thread = threading.Thread(target=call)
    thread.start()
    thread.join()
except xpuc.DeviceError as error:
    print("DeviceError:", error)
else:
    print(device_name(xpuc.get_current_queue().sycl_device), xpuc.stats()["kernel_launches"])
'''


def run_with(value: str) -> str:
    env = dict(os.environ, XPUC_DEVICE=value)
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_xpuc_device_names_the_default_device_of_a_process():
    root = dpctl.SyclDevice(DEVICE)
    assert run_with(DEVICE) == f"{root.filter_string} 2"  # main thread and another
    if root.partition_max_sub_devices > 1:
        name = f"{root.filter_string}/partition=1/1"
        assert run_with(name) == f"{name} 2"


def test_a_wrong_xpuc_device_fails_every_call_that_would_use_it():
    output = run_with("opencl:no-such-device")
    assert output.startswith("DeviceError: XPUC_DEVICE='opencl:no-such-device': no SYCL queue")
