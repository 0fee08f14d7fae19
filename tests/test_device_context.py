"""Device contexts: accepted forms, nesting, thread-locality."""

import subprocess
import sys
import threading
from pathlib import Path

import dpctl
import numpy as np
from device_support import run_in_threads

import xpuc
from xpuc.array_library import tensor as dpt


def test_forms_of_device():
    device = dpctl.SyclDevice("opencl:cpu")
    queue = dpctl.SyclQueue(device)
    for spec in ("opencl:cpu", device, queue):
        with xpuc.device_context(spec) as q:
            assert isinstance(q, dpctl.SyclQueue)
            assert q.sycl_device == device
            assert xpuc.get_current_queue() is q
    with xpuc.device_context(queue) as q:
        assert q is queue


def test_nesting_innermost_wins():
    outer, inner = dpctl.SyclQueue("opencl:cpu"), dpctl.SyclQueue("opencl:cpu")
    assert xpuc.get_current_queue() is None
    with xpuc.device_context(outer):
        with xpuc.device_context(inner):
            assert xpuc.get_current_queue() is inner
        assert xpuc.get_current_queue() is outer
    assert xpuc.get_current_queue() is None


def test_thread_local():
    seen = []
    with xpuc.device_context("opencl:cpu"):
        thread = threading.Thread(target=lambda: seen.append(xpuc.get_current_queue()))
        thread.start()
        thread.join()
        assert xpuc.get_current_queue() is not None
    assert seen == [None]


def test_concurrent_calls_from_threads():
    """Same function, different data and queues, first compile included. The
    USM arrays are made and read outside the threads: dpctl's own copies on
    an out-of-order queue from several threads at once can deadlock (see the
    next test)."""

    @xpuc.jit
    def axpy(a, x, y):
        return a * x + y

    queues = [dpctl.SyclQueue("opencl:cpu"),
              dpctl.SyclQueue("opencl:cpu", property="in_order")]
    inputs = [np.random.default_rng(k).random((2, 5000)) for k in range(6)]
    on_device = [[dpt.asarray(v, sycl_queue=queues[k % 2]) for v in inputs[k]]
                 for k in range(6)]
    usm_results = {}

    def worker(k):
        x, y = inputs[k]
        for _ in range(10):
            with xpuc.device_context(queues[k % 2]):
                np.testing.assert_allclose(axpy(float(k), x, y), k * x + y)
            usm_results[k] = axpy(float(k), *on_device[k])

    xpuc.reset_stats()
    run_in_threads(worker, 6)
    for k, result in usm_results.items():
        x, y = inputs[k]
        assert result.sycl_queue == queues[k % 2]
        np.testing.assert_allclose(dpt.asnumpy(result), k * x + y)
    stats = xpuc.stats()
    assert stats["kernel_launches"] == 6 * 10 * 2
    assert stats["kernels_compiled"] == 2  # NumPy and USM signatures, once each


# Six threads, each calling on one of two out-of-order queues (dpctl's
# default), with NumPy arrays and with USM arrays, in rounds.
CALLS_FROM_THREADS = """
import dpctl, numpy as np
from device_support import run_in_threads
import xpuc
from xpuc.array_library import tensor as dpt

@xpuc.jit
def axpy(a, x, y):
    return a * x + y

queues = [dpctl.SyclQueue("opencl:cpu"), dpctl.SyclQueue("opencl:cpu")]
inputs = [np.random.default_rng(k).random((2, 5000)) for k in range(6)]
on_device = [[dpt.asarray(v, sycl_queue=queues[k % 2]) for v in inputs[k]] for k in range(6)]

def worker(k):
    x, y = inputs[k]
    for _ in range(10):
        with xpuc.device_context(queues[k % 2]):
            assert np.allclose(axpy(float(k), x, y), k * x + y)
        axpy(float(k), *on_device[k])

for _ in range(50):
    run_in_threads(worker, 6)
assert xpuc.stats()["kernel_launches"] == 50 * 6 * 10 * 2
"""


def test_calls_from_threads_on_out_of_order_queues():
    """The OpenCL CPU runtime (2025.3) deadlocks, or crashes, when commands
    reach two queues, one of them out-of-order, from several threads at once
    (reproduced with dpctl alone); xpuc submits to in-order queues of its
    own, so these calls finish (before, this program hung in 6 runs of 6).
    In a child process, so that a hang is this test's failure."""
    try:
        done = subprocess.run([sys.executable, "-c", CALLS_FROM_THREADS],
                              cwd=Path(__file__).parent, capture_output=True, text=True,
                              timeout=120)
    except subprocess.TimeoutExpired:
        raise AssertionError("calls from 6 threads on 2 queues hung") from None
    assert done.returncode == 0, done.stderr
