"""``xpuc.offload_to`` (issue 23): a placement that carries its queue, so a
function bound to it runs on that device from any thread, and travels to
another process by the name of its device."""

import pickle
import subprocess
import sys
import threading

import dpctl
import numba
import numpy as np
import pytest
from device_support import DEVICE

import xpuc
from xpuc.device import as_device


@xpuc.jit
def scale(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = 3.0 * a[i] + 1.0


def test_a_bound_function_runs_on_the_queue_and_leaves_no_context():
    p = xpuc.offload_to(DEVICE)
    assert isinstance(p.queue, dpctl.SyclQueue)
    assert p.queue.sycl_device == dpctl.SyclDevice(DEVICE)
    bound = p(scale)
    assert bound.__name__ == "scale"
    a, out = np.arange(20.0), np.zeros(20)
    xpuc.reset_stats()
    bound(a, out)
    np.testing.assert_array_equal(out, 3.0 * a + 1.0)
    assert xpuc.stats()["kernel_launches"] == 1
    assert xpuc.get_current_queue() is None
    scale(a, out)  # unbound: plain Numba on the CPU (SPEC rule 1)
    assert xpuc.stats()["kernel_launches"] == 1


def test_a_bound_function_runs_on_its_device_from_other_threads():
    bound = xpuc.offload_to(DEVICE)(scale)
    results, seen = {}, {}

    def worker(index: int) -> None:
        a, out = np.arange(100.0) + index, np.zeros(100)
        bound(a, out)
        results[index] = np.array_equal(out, 3.0 * a + 1.0)
        seen[index] = xpuc.get_current_queue()

    xpuc.reset_stats()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: True for i in range(4)}
    assert seen == {i: None for i in range(4)}
    assert xpuc.stats()["kernel_launches"] == 4


def test_a_placement_on_a_sub_device_name():
    root = dpctl.SyclDevice(DEVICE)
    if root.partition_max_sub_devices < 2:
        pytest.skip(f"{DEVICE} cannot be split")
    name = f"{root.filter_string}/partition=1/1"
    p = xpuc.offload_to(name)
    assert p.queue.sycl_device == as_device(name)
    assert repr(p) == f"xpuc.offload_to('{name} ({root.name})')"
    a, out = np.arange(8.0), np.zeros(8)
    p(scale)(a, out)
    np.testing.assert_array_equal(out, 3.0 * a + 1.0)
    assert pickle.loads(pickle.dumps(p)).queue.sycl_device == p.queue.sycl_device


def test_a_sub_device_split_elsewhere_cannot_be_pickled():
    root = dpctl.SyclDevice(DEVICE)
    if root.partition_max_sub_devices < 2:
        pytest.skip(f"{DEVICE} cannot be split")
    p = xpuc.offload_to(root.create_sub_devices(partition=1)[0])
    with pytest.raises(xpuc.DeviceError, match="name it instead, e.g. xpuc.offload_to"):
        pickle.dumps(p)


MODULE = '''
import numba
import numpy as np
import xpuc


@xpuc.jit
def twice(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = 2.0 * a[i]


def run(a):
    out = np.zeros_like(a)
    twice(a, out)
    return out
'''

CHILD = '''
import pickle, sys
import numpy as np
import xpuc
from xpuc.device import device_name

bound = pickle.loads(sys.stdin.buffer.read())
a = np.arange(10.0)
out = bound(a)
print(device_name(bound.placement.queue.sycl_device), np.array_equal(out, 2.0 * a),
      xpuc.stats()["kernel_launches"])
'''


def test_a_bound_function_pickles_into_another_process(tmp_path, monkeypatch):
    root = dpctl.SyclDevice(DEVICE)
    name = (f"{root.filter_string}/partition=1/1" if root.partition_max_sub_devices > 1
            else root.filter_string)
    (tmp_path / "offload_to_module.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import offload_to_module

    try:
        blob = pickle.dumps(xpuc.offload_to(name)(offload_to_module.run))
    finally:
        del sys.modules["offload_to_module"]
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=tmp_path, input=blob,
                          capture_output=True, timeout=240)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split() == [name, "True", "1"]
