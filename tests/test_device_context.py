"""Device contexts: accepted forms, nesting, thread-locality."""

import threading

import dpctl
import dpctl.tensor as dpt
import numpy as np
from device_support import run_in_threads

import xpuc


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
    USM arrays are made and read outside the threads: dpctl's own copies
    from several threads at once can deadlock (seen with dpctl 0.21.1)."""

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
