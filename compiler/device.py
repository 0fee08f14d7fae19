"""Devices and where NumPy arguments run: device names (sub-devices
included), device contexts (thread-local, nestable, innermost wins), the
process-wide default device, and placements that carry their queue.

A sub-device has no dpctl filter string, so xpuc names one as its root
device's filter string followed by ``/partition=P/I`` for each split: the
``I``-th sub-device of ``create_sub_devices(partition=P)``, e.g.
``opencl:cpu:0/partition=1/0``. ``P`` is what ``create_sub_devices`` takes: a
number of compute units each, counts joined by commas (``2,2``), or an
affinity domain (``numa``, ``next_partitionable``). xpuc splits a device once
per partition and puts its sub-devices in one SYCL context, so every queue
on a named sub-device shares it.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import cuda_runtime, runtime
from .errors import DeviceError

if TYPE_CHECKING:  # imported when a SYCL device is first named: xpuc imports without it
    import dpctl

    DeviceLike = str | dpctl.SyclDevice | dpctl.SyclQueue

DEVICE_VARIABLE = "XPUC_DEVICE"


def _dpctl() -> ModuleType:
    """dpctl, or DeviceError where it is not installed."""
    try:
        import dpctl
    except ImportError:
        raise DeviceError("xpuc: SYCL devices need dpctl, which is not installed: "
                          "pip install dpctl==0.22.1 dpnp==0.20.0") from None
    return dpctl

# ---- names ------------------------------------------------------------------


@dataclass(frozen=True)
class _Partition:
    """The sub-devices of one split of a device, in one context spanning them."""

    context: dpctl.SyclContext
    devices: tuple[dpctl.SyclDevice, ...]
    names: tuple[str, ...]


_partitions: dict[tuple[str, str], _Partition] = {}  # by (parent's name, partition)
# Sub-devices made outside xpuc get a context of their own, once: a queue per
# call on a fresh context would make queues of one device non-equivalent.
_contexts: dict[dpctl.SyclDevice, dpctl.SyclContext] = {}
_names_lock = threading.Lock()


def _partition_argument(partition: str) -> int | list[int] | str:
    """``create_sub_devices``'s ``partition`` for the text of a name."""
    if partition.isdigit():
        return int(partition)
    counts = partition.split(",")
    if len(counts) > 1 and all(c.isdigit() for c in counts):
        return [int(c) for c in counts]
    return partition


def _split(parent: dpctl.SyclDevice, parent_name: str, partition: str) -> _Partition:
    dpctl = _dpctl()
    with _names_lock:
        found = _partitions.get((parent_name, partition))
        if found is None:
            try:
                devices = parent.create_sub_devices(partition=_partition_argument(partition))
            except (dpctl.SyclSubDeviceCreationError, ValueError, TypeError) as error:
                raise DeviceError(
                    f"device {parent_name} ({parent.name}) cannot be split with "
                    f"partition={partition} ({error}); it has {parent.max_compute_units} "
                    f"compute units and at most {parent.partition_max_sub_devices} "
                    "sub-devices") from None
            found = _partitions[parent_name, partition] = _Partition(
                dpctl.SyclContext(devices), tuple(devices),
                tuple(f"{parent_name}/partition={partition}/{i}" for i in range(len(devices))))
    return found


def as_device(device: str | dpctl.SyclDevice) -> dpctl.SyclDevice:
    """The device of a dpctl filter string or of a sub-device name (see the
    module's notes), or ``device`` itself."""
    dpctl = _dpctl()
    if isinstance(device, dpctl.SyclDevice):
        return device
    root, *steps = device.split("/")
    if len(steps) % 2 or not all(p.startswith("partition=") and p != "partition=" and i.isdigit()
                                 for p, i in zip(steps[::2], steps[1::2])):
        raise DeviceError(f"{device!r} is not a device name: a filter string such as "
                          "'opencl:cpu:0', then '/partition=P/I' for each split (the I-th "
                          "sub-device of create_sub_devices(partition=P))")
    try:
        found = dpctl.SyclDevice(root)
    except (dpctl.SyclDeviceCreationError, ValueError, TypeError) as error:
        raise DeviceError(f"no SYCL device {root!r} ({error}); available devices: "
                          f"{_available()}") from None
    name = found.filter_string
    for partition, index in zip(steps[::2], steps[1::2]):
        split = _split(found, name, partition.removeprefix("partition="))
        if int(index) >= len(split.devices):
            raise DeviceError(f"{device!r}: {name} split with {partition} has "
                              f"{len(split.devices)} sub-devices, so no sub-device {index}")
        found, name = split.devices[int(index)], split.names[int(index)]
    return found


def sub_device_names(name: str, partition: str) -> tuple[str, ...]:
    """The names of the sub-devices of the device ``name`` split with
    ``partition`` (as a name writes it: ``1``, ``2,2``, ``numa``)."""
    found = as_device(name)
    return _split(found, device_name(found), partition).names  # named: as_device found it


def _available() -> str:
    return ", ".join(d.filter_string for d in _dpctl().get_devices()) or "none"


def root_device(device: dpctl.SyclDevice) -> dpctl.SyclDevice:
    """The device ``device`` was split from (itself if it is a root device)."""
    while (parent := device.parent_device) is not None:
        device = parent
    return device


def device_name(device: dpctl.SyclDevice) -> str | None:
    """A name that gives ``device`` back through ``as_device``: its filter
    string, or the name of a sub-device that xpuc split off; None for a
    sub-device split off elsewhere (which split made it is not recorded)."""
    if device.parent_device is None:
        return device.filter_string
    with _names_lock:
        for split in _partitions.values():
            for sub_device, name in zip(split.devices, split.names):
                if sub_device == device:
                    return name
    return None


def describe(device: dpctl.SyclDevice) -> str:
    """``device`` for messages: its name and model."""
    name = device_name(device)
    if name is not None:
        return f"{name} ({device.name})"
    units = device.max_compute_units
    return (f"a sub-device of {root_device(device).filter_string} ({device.name}, {units} "
            f"compute unit{'s' if units != 1 else ''})")


def _context_of(device: dpctl.SyclDevice) -> dpctl.SyclContext:
    """The context queues on sub-device ``device`` share."""
    with _names_lock:
        for split in _partitions.values():
            if device in split.devices:
                return split.context
        context = _contexts.get(device)
        if context is None:
            context = _contexts[device] = _dpctl().SyclContext(device)
    return context


class CudaQueue:
    """Where calls on CUDA device ``cuda:N`` run (a device context's, CUDA
    arrays' own): the device, a stream of it (a CUstream; 0, the legacy
    default stream, is a device context's) and the runtime's queue on them,
    one per device and stream (``cuda_queue`` makes the device's, which
    makes the others: ``on_stream``). Queues of one device are equivalent: a
    call with arrays on several of its streams runs on the first one's and
    waits for the others'."""

    def __init__(self, device: cuda_runtime.CudaDevice, stream: int = 0) -> None:
        self.device = device
        self.stream = stream
        self._streams: dict[int, CudaQueue] = {stream: self}

    def on_stream(self, stream: int) -> CudaQueue:
        """The queue of the device's stream ``stream``, made once (by the
        device's queue, ``cuda_queue``'s)."""
        found = self._streams.get(stream)
        if found is None:
            found = self._streams.setdefault(stream, CudaQueue(self.device, stream))
        return found

    @functools.cached_property
    def runtime_queue(self) -> runtime.CudaQueue:
        # made by the first call that runs here: placement's errors need none
        return runtime.CudaQueue(self.device.ordinal, self.stream)

    def wait(self) -> None:
        """Wait for the work queued on the stream."""
        self.device.synchronize(self.stream)

    @property
    def name(self) -> str:
        """``cuda:N``, which gives this queue back through ``as_queue``."""
        return f"cuda:{self.device.ordinal}"

    def __repr__(self) -> str:
        return f"<xpuc CUDA queue on {self.name} ({self.device.name})>"


def _cuda_ordinal(name: str) -> int | None:
    """N of a CUDA device name, ``cuda`` (0) or ``cuda:N``; None for other names."""
    if name != "cuda" and not name.startswith("cuda:"):
        return None
    number = name.removeprefix("cuda").removeprefix(":") or "0"
    if not number.isdigit():
        raise DeviceError(f"{name!r} is not a CUDA device name: 'cuda' or 'cuda:N'")
    return int(number)


@functools.cache
def cuda_queue(ordinal: int) -> CudaQueue:
    """The queue of CUDA device ``ordinal`` (on its legacy default stream),
    made once."""
    return CudaQueue(cuda_runtime.CudaDevice.open(ordinal))


def device_of(queue: dpctl.SyclQueue | CudaQueue) -> dpctl.SyclDevice | cuda_runtime.CudaDevice:
    """The device a call on ``queue`` compiles for."""
    return queue.device if isinstance(queue, CudaQueue) else queue.sycl_device


def describe_queue(queue: dpctl.SyclQueue | CudaQueue) -> str:
    """The device of ``queue`` for messages: its name and model."""
    if isinstance(queue, CudaQueue):
        return f"{queue.name} ({queue.device.name})"
    return describe(queue.sycl_device)


def runtime_queue(queue: dpctl.SyclQueue | CudaQueue) -> runtime.Queue:
    """The runtime's queue of ``queue``, which a call holds until it ends."""
    return queue.runtime_queue if isinstance(queue, CudaQueue) else runtime.queue_handle(queue)


def as_queue(device: DeviceLike | CudaQueue | None) -> dpctl.SyclQueue | CudaQueue:
    """A queue for a device name, device or queue (None: the default device).
    Queues made for one device are equivalent (SPEC rule 3): a root device's
    share dpctl's default context, a sub-device's the context of its split.
    ``cuda`` and ``cuda:N`` name CUDA devices."""
    if isinstance(device, CudaQueue):
        return device
    if isinstance(device, str) and (ordinal := _cuda_ordinal(device)) is not None:
        return cuda_queue(ordinal)
    dpctl = _dpctl()
    if isinstance(device, dpctl.SyclQueue):
        return device
    if ((isinstance(device, str) and "/" in device)
            or (isinstance(device, dpctl.SyclDevice) and device.parent_device is not None)):
        sub_device = as_device(device)
        return dpctl.SyclQueue(_context_of(sub_device), sub_device)
    try:
        return dpctl.SyclQueue() if device is None else dpctl.SyclQueue(device)
    except (dpctl.SyclQueueCreationError, ValueError, TypeError) as exc:
        what = "the default device" if device is None else f"device {device!r}"
        raise DeviceError(f"no SYCL queue for {what} ({exc}); available devices: "
                          f"{_available()}") from None


# ---- device contexts and the default device ----------------------------------

class _ThreadQueues(threading.local):
    """Each thread's stack of device contexts' queues, made empty in each
    thread on first use: every offloaded call reads it, with no test of
    whether the thread has one yet."""

    def __init__(self) -> None:
        self.queues: list[dpctl.SyclQueue] = []


_local = _ThreadQueues()


def _stack() -> list[dpctl.SyclQueue]:
    return _local.queues


@contextmanager
def device_context(device: DeviceLike | CudaQueue) -> Iterator[dpctl.SyclQueue | CudaQueue]:
    """Run the parfors of NumPy-argument calls inside the block on ``device``
    (a SYCL device's name, device or queue; ``cuda:N``)."""
    queue = as_queue(device)
    stack = _stack()
    stack.append(queue)
    try:
        yield queue
    finally:
        stack.pop()


_UNREAD = object()
_default: Any = _UNREAD  # the default device's queue, None, or not read yet
_default_lock = threading.Lock()


def set_default_device(device: DeviceLike | CudaQueue | None) -> None:
    """Make ``device`` the outermost device context of every thread (None:
    no default device, SPEC rule 1). Overrides ``XPUC_DEVICE``."""
    global _default
    queue = None if device is None else as_queue(device)
    with _default_lock:
        _default = queue


def _default_queue() -> dpctl.SyclQueue | None:
    global _default
    if _default is _UNREAD:
        with _default_lock:
            if _default is _UNREAD:
                name = os.environ.get(DEVICE_VARIABLE)
                try:
                    _default = as_queue(name) if name else None
                except DeviceError as error:
                    # left unread: every call that would run there fails alike
                    raise DeviceError(f"{DEVICE_VARIABLE}={name!r}: {error}") from None
    return _default


def get_current_queue() -> dpctl.SyclQueue | None:
    """The queue of the innermost active device context, else the default
    device's (``XPUC_DEVICE``, ``set_default_device``), or None."""
    stack = _stack()
    return stack[-1] if stack else _default_queue()


# ---- placements ---------------------------------------------------------------


class OffloadTo:
    """A device to run functions on, held by the object rather than by a
    thread's device contexts: ``p(f)`` runs ``f`` as inside
    ``device_context(p.queue)``, from any thread. Pickles as the name of its
    device (a new process makes its own queue there)."""

    def __init__(self, device: DeviceLike | CudaQueue) -> None:
        self.queue = as_queue(device)
        # a sub-device split off outside xpuc has no name: it cannot travel
        self._name = (self.queue.name if isinstance(self.queue, CudaQueue)
                      else device_name(self.queue.sycl_device))

    def __call__(self, function: Callable) -> Callable:
        return _Offloaded(self, function)

    def __reduce__(self) -> tuple:
        if self._name is None:
            raise DeviceError(
                f"cannot pickle a placement on {describe_queue(self.queue)}: it was "
                "split off outside xpuc, so no name gives it back in another process; "
                "name it instead, e.g. xpuc.offload_to('opencl:cpu:0/partition=1/0')")
        return (OffloadTo, (self._name,))

    def __repr__(self) -> str:
        return f"xpuc.offload_to({describe_queue(self.queue)!r})"


class _Offloaded:
    """``function`` bound to a placement; picklable when ``function`` is."""

    def __init__(self, placement: OffloadTo, function: Callable) -> None:
        self.placement = placement
        self.function = function
        functools.update_wrapper(self, function, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with device_context(self.placement.queue):
            return self.function(*args, **kwargs)

    def __reduce__(self) -> tuple:
        return (_Offloaded, (self.placement, self.function))


def offload_to(device: DeviceLike | CudaQueue) -> OffloadTo:
    """A placement on ``device`` (a device name, device or queue): ``p(f)``
    runs ``f`` with NumPy arguments on ``p.queue``."""
    return OffloadTo(device)
