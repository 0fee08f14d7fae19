"""Sub-devices (issue 23): a device split with ``create_sub_devices`` works
wherever a device does: device contexts, USM arguments, explicit kernels,
compiled-code keys (in memory and on disk), ``xpuc devices`` and ``xpuc
compile --device``. Sub-devices of one device share compiled code; arrays on
two of them follow SPEC rule 3."""

import os
import subprocess
import sys

import dpctl
import numba
import numpy as np
import pytest
from device_support import DEVICE

import xpuc
from xpuc.array_library import tensor as dpt
from xpuc.cache import device_key
from xpuc.device import as_device, as_queue, describe, device_name
from xpuc.placement import equivalent
from xpuc.targets import target_for

ROOT = dpctl.SyclDevice(DEVICE)
pytestmark = pytest.mark.skipif(ROOT.partition_max_sub_devices < 2,
                                reason=f"{DEVICE} cannot be split in two")
NAMES = [f"{ROOT.filter_string}/partition=1/{i}" for i in range(2)]


def scale_body(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = 3.0 * a[i] + 1.0


def add_one_body(a):
    i = xpuc.get_global_id(0)
    a[i] += 1.0


@pytest.fixture
def split():
    """The issue's example: sub-devices split off by the user, one context
    spanning them, a queue on each."""
    sub_devices = ROOT.create_sub_devices(partition=1)
    context = dpctl.SyclContext(sub_devices)
    return [dpctl.SyclQueue(context, sub_device) for sub_device in sub_devices]


def test_device_contexts_on_sub_devices_share_one_compilation(split):
    scale = xpuc.jit(scale_body)
    a = np.arange(100.0)
    xpuc.reset_stats()
    for queue in split:
        out = np.zeros_like(a)
        with xpuc.device_context(queue):
            scale(a, out)
        np.testing.assert_array_equal(out, 3.0 * a + 1.0)
    stats = xpuc.stats()
    assert stats["kernel_launches"] == 2
    assert stats["kernels_compiled"] == 1  # the SPIR-V is shared
    # each sub-device's driver builds it: a program built for one sub-device
    # does not run on another of the same context
    assert stats["kernel_builds"] == 2


def test_usm_arguments_on_sub_devices(split):
    scale = xpuc.jit(scale_body)
    a = np.arange(50.0)
    for queue in split:
        x, y = xpuc.asarray(a, queue=queue), xpuc.asarray(np.zeros_like(a), queue=queue)
        assert x.sycl_device == queue.sycl_device
        scale(x, y)
        np.testing.assert_array_equal(dpt.asnumpy(y), 3.0 * a + 1.0)


def test_arrays_on_two_sub_devices_of_one_context_are_refused_with_the_way_out(split):
    scale = xpuc.jit(scale_body)
    a = np.arange(10.0)
    x = xpuc.asarray(a, queue=split[0])
    y = xpuc.asarray(np.zeros_like(a), queue=split[1])
    with pytest.raises(xpuc.ExecutionPlacementError,
                       match=r"a on a sub-device of opencl:cpu:0 .*out on a sub-device of "
                             r"opencl:cpu:0 .*\(different devices\).*xpuc\.asarray\(out, "
                             r"queue=a\.sycl_queue\)"):
        scale(x, y)
    moved = xpuc.asarray(y, queue=x.sycl_queue)  # what the message says to do
    scale(x, moved)
    np.testing.assert_array_equal(dpt.asnumpy(moved), 3.0 * a + 1.0)


def test_explicit_kernels_on_sub_devices_compile_once(split):
    add_one = xpuc.kernel(add_one_body)
    xpuc.reset_stats()
    for queue in split:
        x = xpuc.asarray(np.arange(8.0), queue=queue)
        add_one[8](x)
        np.testing.assert_array_equal(dpt.asnumpy(x), np.arange(8.0) + 1.0)
        with xpuc.device_context(queue):
            b = np.zeros(8)
            add_one[8](b)
        np.testing.assert_array_equal(b, 1.0)
    assert xpuc.stats()["kernels_compiled"] == 2  # for USM and NumPy arrays, not per device


def test_named_sub_devices_are_one_device_each_in_one_context():
    first, second = (as_device(name) for name in NAMES)
    assert first.parent_device == ROOT and second.parent_device == ROOT
    assert as_device(NAMES[0]) is first  # split once, not per lookup
    assert [device_name(first), device_name(second)] == NAMES
    assert describe(second) == f"{NAMES[1]} ({ROOT.name})"
    q1, q2 = as_queue(NAMES[0]), as_queue(NAMES[0])
    assert equivalent(q1, q2)  # so arrays made on one mix with a context on the other
    assert q1.sycl_context == as_queue(NAMES[1]).sycl_context
    assert equivalent(as_queue(first), q1)
    scale = xpuc.jit(scale_body)
    x = xpuc.asarray(np.arange(5.0), queue=NAMES[0])
    with xpuc.device_context(NAMES[0]) as queue:
        assert queue.sycl_device == first
        y = xpuc.asarray(np.zeros(5))
        scale(x, y)
    np.testing.assert_array_equal(dpt.asnumpy(y), 3.0 * np.arange(5.0) + 1.0)


def test_a_sub_device_split_elsewhere_has_no_name_but_is_described(split):
    device = split[0].sycl_device
    assert device_name(device) is None
    assert describe(device) == (f"a sub-device of {ROOT.filter_string} ({ROOT.name}, "
                                "1 compute unit)")
    # a queue made for it twice: equivalent (one context kept for it)
    assert equivalent(as_queue(device), as_queue(device))


@pytest.mark.parametrize("name, reason", [
    (f"{DEVICE}/partition=1", "is not a device name"),
    (f"{DEVICE}/partitions=1/0", "is not a device name"),
    (f"{DEVICE}/partition=1/9", "has 2 sub-devices, so no sub-device 9"),
    (f"{DEVICE}/partition=99/0", "cannot be split with partition=99"),
    ("no-such-device:7/partition=1/0", "no SYCL device 'no-such-device:7'"),
])
def test_wrong_sub_device_names_say_why(name, reason):
    with pytest.raises(xpuc.DeviceError, match=reason):
        xpuc.device_context(name).__enter__()


def test_compiled_code_is_keyed_by_the_root_device():
    sub_device = as_device(NAMES[1])
    target = target_for(sub_device)
    assert target == target_for(ROOT)
    assert device_key(sub_device, target) == device_key(ROOT, target)


MODULE = '''
import numba
import xpuc


@xpuc.jit("void(float64[::1], float64[::1])")
def twice(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = 2.0 * a[i]
'''

CALLER = '''
import numpy as np
import xpuc
import mod

a, out = np.arange(10.0), np.zeros(10)
with xpuc.device_context({name!r}) as queue:
    mod.twice(a, out)
assert np.array_equal(out, 2.0 * a) and queue.sycl_device.parent_device is not None
print(xpuc.stats()["kernels_compiled"])
'''


def test_compiled_ahead_for_one_sub_device_serves_another(tmp_path):
    """``xpuc compile --device`` takes a sub-device name; what it stores on
    disk is found by a process on a sibling sub-device (workers on tiles of
    one device compile once)."""
    (tmp_path / "mod.py").write_text(MODULE)
    env = {k: v for k, v in os.environ.items() if k != "XPUC_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-m", "xpuc.cli", "compile", "mod.py", "--device",
                           NAMES[1], "-o", "built"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert f"twice: 1 signature, 1 kernel for {NAMES[1]}" in done.stdout
    env["XPUC_CACHE_DIR"] = str(tmp_path / "built")
    run = subprocess.run([sys.executable, "-c", CALLER.format(name=NAMES[0])], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["0"]  # loaded, not compiled


def test_devices_command_names_a_sub_device():
    done = subprocess.run([sys.executable, "-m", "xpuc.cli", "devices"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"e.g. {NAMES[0]}" in done.stdout
