"""ctypes binding of libxpuc_runtime.so, xpuc's C runtime on dpctl's C API
(SYCL queues) and on the CUDA driver API (CUDA devices' queues).

Compiled host code calls the runtime directly (see ``symbol_addresses``); this
module wraps queues for it and gives Python access for tests and diagnostics.
The entries' ctypes signatures are derived from ``abi.ENTRIES``. It imports
only ctypes, NumPy, ``.abi`` and ``.errors``: no compiler pieces, and not
dpctl, which a SYCL queue comes from (a runtime built without SYCL loads
where dpctl is not installed).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.resources
import os
import threading
from collections.abc import Sequence
from ctypes import c_int32, c_int64, c_uint64, c_void_p
from typing import TYPE_CHECKING

import numpy as np

from . import abi
from .abi import MAX_KERNEL_ARGS, MAX_WORK_ITEMS, ArgKind, UsmKind
from .errors import DeviceError
from .runtime_ctypes import Stats, bind, slot

if TYPE_CHECKING:
    import dpctl

__all__ = [
    "ARG_F32",
    "ARG_F64",
    "ARG_I8",
    "ARG_I16",
    "ARG_I32",
    "ARG_I64",
    "ARG_PTR",
    "LIBRARY_PATH",
    "MAX_KERNEL_ARGS",
    "MAX_WORK_ITEMS",
    "USM_DEVICE",
    "USM_HOST",
    "USM_SHARED",
    "CudaQueue",
    "Queue",
    "buffer_acquire",
    "buffer_release",
    "byte_extent",
    "call_begin",
    "call_end",
    "call_queue",
    "call_register",
    "check",
    "copy_to_device",
    "copy_to_host",
    "host_access",
    "last_error",
    "launch",
    "queue_handle",
    "reset_stats",
    "set_nrt_api",
    "spirv_hash",
    "stats",
    "symbol_addresses",
    "usm_advise",
    "usm_alloc",
    "usm_free",
]

# The ABI's kinds (abi.py) by the names callers of this module use.
USM_DEVICE, USM_SHARED, USM_HOST = UsmKind.DEVICE, UsmKind.SHARED, UsmKind.HOST
ARG_PTR, ARG_I8, ARG_I16, ARG_I32 = ArgKind.PTR, ArgKind.I8, ArgKind.I16, ArgKind.I32
ARG_I64, ARG_F32, ARG_F64 = ArgKind.I64, ArgKind.F32, ArgKind.F64

_LIBRARY_NAME = "libxpuc_runtime.so"


def _find_library() -> str:
    # A wheel install puts the library next to this file. An editable install
    # (scikit-build-core's redirect mode) leaves this file in compiler/ and
    # installs the library in site-packages/xpuc; the package's resources span
    # both folders, so importlib.resources finds it in either case.
    path = importlib.resources.files(__package__) / _LIBRARY_NAME
    if not path.is_file():
        raise ImportError(
            f"xpuc: {_LIBRARY_NAME} is missing from {__package__}; is xpuc installed?"
        )
    return str(path)


LIBRARY_PATH: str = _find_library()
# The runtime finds libDPCTLSyclInterface.so (where built with SYCL) and
# libxpuc_cuda.so through its rpath; RTLD_GLOBAL makes the runtime's symbols
# visible to code that is linked later in this process.
_lib = ctypes.CDLL(LIBRARY_PATH, mode=ctypes.RTLD_GLOBAL)


bind(_lib, abi.ENTRIES)


def symbol_addresses() -> dict[str, int]:
    """Address of every runtime entry, for ``llvmlite.binding.add_symbol``."""
    return {name: ctypes.cast(getattr(_lib, name), c_void_p).value for name in abi.ENTRIES}


def last_error() -> str:
    """The message of the calling thread's last failed runtime entry."""
    return _lib.xpuc_last_error().decode(errors="replace")


def check(status: int) -> None:
    """Raise ``DeviceError`` with the runtime's message if ``status`` is an error."""
    if status != 0:
        raise DeviceError(last_error())


class Queue:
    """An ``xpuc_queue*`` made from a ``dpctl.SyclQueue``.

    The runtime keeps its own copy of the SYCL queue; ``sycl_queue`` is kept so
    the Python object (and what it was made from) lives as long as this one.
    """

    # Bound here so __del__ still works while the interpreter shuts down.
    _release = _lib.xpuc_queue_release

    def __init__(self, sycl_queue: dpctl.SyclQueue) -> None:
        self.sycl_queue = sycl_queue
        self._handle: int | None = None
        handle = c_void_p()
        check(_lib.xpuc_queue_wrap(sycl_queue.addressof_ref(), ctypes.byref(handle)))
        self._handle = handle.value
        self._system_memory = sycl_queue.sycl_device.has_aspect_usm_system_allocations

    @property
    def uses_host_memory(self) -> bool:
        """Whether kernels on this queue take NumPy arrays' memory as it is
        (so a call registers no NumPy memory to keep on the device)."""
        return self._system_memory and _system_memory_allowed

    @property
    def handle(self) -> int:
        """The ``xpuc_queue*`` as an integer."""
        if self._handle is None:
            raise DeviceError("xpuc: the queue was closed")
        return self._handle

    def close(self) -> None:
        if _named.queue is self:  # another thread's name of it is that thread's to drop
            call_queue(None)
        if self._handle is not None:
            check(self._release(self._handle))
            self._handle = None

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            self._release(self._handle)

    def __repr__(self) -> str:
        return f"<xpuc.runtime.Queue on {self.sycl_queue.sycl_device.name!r}>"


class CudaQueue(Queue):
    """An ``xpuc_queue*`` on stream ``stream`` (a CUstream; 0: the legacy
    default stream) of CUDA device ``cuda:<ordinal>``: the same entries take
    it as a SYCL queue's (calls, buffers, launches of PTX). Kernels never
    take NumPy memory in place: each call copies it."""

    def __init__(self, ordinal: int, stream: int = 0) -> None:
        self.ordinal = ordinal
        self.stream = stream
        self._handle = None
        handle = c_void_p()
        check(_lib.xpuc_queue_cuda(ordinal, stream, ctypes.byref(handle)))
        self._handle = handle.value
        self._system_memory = False

    def __repr__(self) -> str:
        return f"<xpuc.runtime.CudaQueue on cuda:{self.ordinal}, stream {self.stream:#x}>"


# dpctl.SyclQueue objects cannot be weakly referenced, so the cache holds them
# strongly: each entry keeps its queue alive, which also keeps id() unique while
# the entry exists. Keyed by id() rather than by the queue (whose hash and ==
# call into SYCL) so a hit costs one dict lookup. A program that makes many
# queues would grow the cache without bound, so the oldest entries are dropped
# past _QUEUE_CACHE_SIZE; a dropped Queue lives on while a caller holds it.
_QUEUE_CACHE_SIZE = 64
_queues: dict[int, Queue] = {}
_queues_lock = threading.Lock()


def queue_handle(sycl_queue: dpctl.SyclQueue) -> Queue:
    """The (cached) ``Queue`` of a ``dpctl.SyclQueue``; hold it during a call."""
    queue = _queues.get(id(sycl_queue))
    if queue is not None:
        return queue
    with _queues_lock:
        queue = _queues.get(id(sycl_queue))
        if queue is None:
            queue = Queue(sycl_queue)
            if len(_queues) >= _QUEUE_CACHE_SIZE:
                del _queues[next(iter(_queues))]
            _queues[id(sycl_queue)] = queue
        return queue


# Every offloaded call makes these two: bound once, checked inline.
_call_begin, _call_end = _lib.xpuc_call_begin, _lib.xpuc_call_end


def call_begin(queue: Queue) -> None:
    if _call_begin(queue.handle):
        raise DeviceError(last_error())


def call_end() -> None:
    if _call_end():
        raise DeviceError(last_error())


class _NamedQueue(threading.local):
    queue: Queue | None = None  # what xpuc_call_queue last named on the thread


_named = _NamedQueue()


def call_queue(queue: Queue | None) -> None:
    """Name the queue that offloaded compiled code called on this thread
    outside a call runs on (``xpuc_call_queue``); the runtime is told only
    when it changes. Holds ``queue`` while it is named."""
    if _named.queue is not queue:
        check(_lib.xpuc_call_queue(None if queue is None else queue.handle))
        _named.queue = queue


def named_call_queue() -> Queue | None:
    """The queue ``call_queue`` last named on this thread."""
    return _named.queue


def build_ahead(queue: Queue, modules: Sequence[bytes]) -> None:
    """Build ``modules`` for ``queue``'s device as their first launches would
    (``xpuc_build_ahead``), in a thread of their own, while the caller goes on
    (the runtime's call takes no GIL): their launches find them in the kernel
    cache, or wait for the build under way. A module that does not build is
    left to its launch, which builds it again and reports why."""

    def build() -> None:
        for module in modules:
            if _lib.xpuc_build_ahead(queue.handle, module, len(module), spirv_hash(module)):
                return

    threading.Thread(target=build, name="xpuc-build-ahead").start()


def usm_alloc(queue: Queue, nbytes: int, kind: int = USM_DEVICE) -> int:
    """Allocate USM memory (``USM_DEVICE``, ``USM_SHARED`` or ``USM_HOST``)."""
    pointer = c_void_p()
    check(_lib.xpuc_usm_alloc(queue.handle, nbytes, kind, ctypes.byref(pointer)))
    return pointer.value


def usm_free(queue: Queue, pointer: int, nbytes: int, kind: int = USM_DEVICE) -> None:
    """Free what ``usm_alloc(queue, nbytes, kind)`` gave."""
    check(_lib.xpuc_usm_free(queue.handle, pointer, nbytes, kind))


def usm_advise(queue: Queue, pointer: int, nbytes: int) -> None:
    """Give USM memory that dpctl allocated the page advice of the runtime's
    own allocations (huge pages on a CPU device), before its first write."""
    check(_lib.xpuc_usm_advise(queue.handle, pointer, nbytes))


def copy_to_device(queue: Queue, device: int, host: int, nbytes: int) -> None:
    """Copy ``nbytes`` from host address ``host`` to USM address ``device``."""
    check(_lib.xpuc_copy_to_device(queue.handle, device, host, nbytes))


def copy_to_host(queue: Queue, host: int, device: int, nbytes: int) -> None:
    """Copy ``nbytes`` from USM address ``device`` to host address ``host``."""
    check(_lib.xpuc_copy_to_host(queue.handle, host, device, nbytes))


def buffer_acquire(host: int, nbytes: int, copy_in: bool) -> int:
    """The current call's device copy of the host array at ``host``."""
    device = c_void_p()
    check(_lib.xpuc_buffer_acquire(host, nbytes, int(copy_in), ctypes.byref(device)))
    return device.value


def buffer_release(host: int, nbytes: int, copy_out: bool) -> None:
    check(_lib.xpuc_buffer_release(host, nbytes, int(copy_out)))


def device_copy(dst: int, src: int, nbytes: int) -> None:
    """Copy ``nbytes`` from USM address ``src`` to USM address ``dst`` on the
    current call's queue."""
    check(_lib.xpuc_device_copy(dst, src, nbytes))


def call_register(host: int, nbytes: int) -> None:
    """Make the host bytes ``[host, host + nbytes)`` resident for the current call."""
    check(_lib.xpuc_call_register(host, nbytes))


def host_access(host: int, nbytes: int, writes: bool) -> None:
    check(_lib.xpuc_host_access(host, nbytes, int(writes)))


def set_nrt_api(api_table: int) -> None:
    """Give the runtime Numba's NRT API table (``NRT_get_api()``), with which
    the USM arrays compiled code allocates are owned by Numba MemInfos."""
    check(_lib.xpuc_set_nrt_api(api_table))


def byte_extent(array: np.ndarray) -> tuple[int, int]:
    """``(start, nbytes)`` of the memory an array's elements span."""
    start = array.__array_interface__["data"][0]
    if array.size == 0:
        return start, 0
    low = sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s < 0)
    high = sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s > 0)
    return start + low, high - low + array.itemsize


def spirv_hash(spirv: bytes) -> int:
    """A 64-bit hash of a SPIR-V module, the kernel cache's key."""
    return int.from_bytes(hashlib.blake2b(spirv, digest_size=8).digest(), "little")


class KernelLaunch:
    """Launches of one kernel with arguments of fixed kinds: what each launch
    would otherwise work out again (the kinds as a C array, the name as
    bytes, the module's hash) kept."""

    def __init__(self, spirv: bytes, kernel_name: str, kinds: Sequence[int],
                 spirv_hash_value: int | None = None) -> None:
        self.spirv = spirv
        self.name = kernel_name.encode()
        self.count = len(kinds)
        self.kinds = (c_int32 * max(self.count, 1))(*kinds)
        self.hash = spirv_hash(spirv) if spirv_hash_value is None else spirv_hash_value
        self._slots = c_uint64 * max(self.count, 1)
        # what every launch passes before its slots, made once; as C values,
        # as the entries bound for launches without argument types take them
        self._module = (spirv, c_int64(len(spirv)), c_uint64(self.hash), self.name)
        self._count = c_int32(self.count)

    def __call__(self, slots: Sequence[int], global_size: Sequence[int],
                 local_size: Sequence[int] | None = None, queue: Queue | None = None) -> None:
        """Launch on the current call's queue, or in a call of its own on
        ``queue`` (``xpuc_call_launch``: nothing to copy), and wait:
        ``slots`` as ``slot`` makes them, sizes in SPIR-V order (x, y, z)."""
        ndim = len(global_size)
        # more than 3 dimensions: the runtime's to refuse, with its message
        sizes = _SIZES.get(ndim) or c_int64 * ndim
        launch = (*self._module, self._slots(*slots), self.kinds, self._count,
                  sizes(*global_size), sizes(*local_size) if local_size else None,
                  _RANKS.get(ndim) or c_int32(ndim))
        check(_launch_values(*launch) if queue is None
              else _call_launch_values(c_void_p(queue.handle), *launch))


# a launch range's sizes as a C array, by its number of dimensions (0: none)
_SIZES = {ndim: c_int64 * max(ndim, 1) for ndim in range(4)}
_RANKS = {ndim: c_int32(ndim) for ndim in range(4)}

# xpuc_launch and xpuc_call_launch bound again without argument types, for
# KernelLaunch, which passes C values only: ctypes then converts none of the
# eleven (converting them cost 1 us of a 7 us launch); they return a status
_launch_values = _lib._FuncPtr(("xpuc_launch", _lib))
_call_launch_values = _lib._FuncPtr(("xpuc_call_launch", _lib))


def launch(
    spirv: bytes,
    kernel_name: str,
    args: Sequence[tuple[int, int | float]],
    global_size: Sequence[int],
    local_size: Sequence[int] | None = None,
    spirv_hash_value: int | None = None,
) -> None:
    """Launch ``kernel_name`` on the current call's queue and wait.

    ``args`` are ``(ARG_* kind, value)`` pairs (pointers as integers); sizes are
    in SPIR-V order (x, y, z). This is how compiled host code calls
    ``xpuc_launch``, spelled in Python.
    """
    kernel = KernelLaunch(spirv, kernel_name, [kind for kind, _ in args], spirv_hash_value)
    kernel([slot(kind, value) for kind, value in args], global_size, local_size)


def stats() -> dict[str, int]:
    """The runtime's process-wide counters."""
    counters = Stats()
    _lib.xpuc_get_stats(ctypes.byref(counters))
    return {name: getattr(counters, name) for name, _ in Stats._fields_}


def reset_stats() -> None:
    _lib.xpuc_reset_stats()


COPY_HOST_ARRAYS_VARIABLE = "XPUC_COPY_HOST_ARRAYS"


def use_system_memory(on: bool) -> None:
    """On a device that can use host system memory (aspect
    ``usm_system_allocations``), let kernels use NumPy arrays in place (the
    default), or, off, copy them as other devices need; ``XPUC_COPY_HOST_ARRAYS=1``
    turns it off at import."""
    global _system_memory_allowed
    check(_lib.xpuc_use_system_memory(int(on)))
    _system_memory_allowed = on


# The runtime's switch as use_system_memory last set it (it is set nowhere
# else): read on every call, which a ctypes query would cost more than.
_system_memory_allowed = True


if os.environ.get(COPY_HOST_ARRAYS_VARIABLE) == "1":
    use_system_memory(False)


TRACE_VARIABLE = "XPUC_TRACE_LAUNCHES"


def trace_launches(on: bool) -> None:
    """Print a line to stderr for each kernel launched (its name, device and
    global size) while ``on``; ``XPUC_TRACE_LAUNCHES=1`` turns it on at import."""
    _lib.xpuc_trace_launches(int(on))


if os.environ.get(TRACE_VARIABLE) == "1":
    trace_launches(True)
