"""Device contexts: accepted forms, nesting, thread-locality."""

import threading

import dpctl

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
