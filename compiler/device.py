"""Device contexts: which SYCL queue NumPy arguments run on (thread-local,
nestable, innermost wins)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import dpctl

from .errors import DeviceError

_local = threading.local()


def _stack() -> list[dpctl.SyclQueue]:
    if not hasattr(_local, "queues"):
        _local.queues = []
    return _local.queues


def as_queue(device: str | dpctl.SyclDevice | dpctl.SyclQueue | None) -> dpctl.SyclQueue:
    """A queue for a dpctl filter string, device or queue (None: the default device)."""
    if isinstance(device, dpctl.SyclQueue):
        return device
    try:
        return dpctl.SyclQueue() if device is None else dpctl.SyclQueue(device)
    except (dpctl.SyclQueueCreationError, ValueError, TypeError) as exc:
        available = ", ".join(d.filter_string for d in dpctl.get_devices()) or "none"
        what = "the default device" if device is None else f"device {device!r}"
        raise DeviceError(
            f"no SYCL queue for {what} ({exc}); available devices: {available}"
        ) from None


@contextmanager
def device_context(device: str | dpctl.SyclDevice | dpctl.SyclQueue) -> Iterator[dpctl.SyclQueue]:
    """Run the parfors of NumPy-argument calls inside the block on ``device``."""
    queue = as_queue(device)
    stack = _stack()
    stack.append(queue)
    try:
        yield queue
    finally:
        stack.pop()


def get_current_queue() -> dpctl.SyclQueue | None:
    """The queue of the innermost active device context, or None."""
    stack = _stack()
    return stack[-1] if stack else None
