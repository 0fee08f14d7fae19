"""ctypes binding of libxpuc_cuda.so, xpuc's CUDA runtime (runtime/cuda/):
devices, device memory and copies, and launches of PTX kernels with the
launch ABI of the SYCL runtime. The entries' ctypes signatures are derived
from ``abi.CUDA_ENTRIES``. It imports only ctypes, ``.abi``, ``.errors`` and
``.runtime_ctypes``: neither dpctl nor the compiler, and the library links
nothing of CUDA (it loads the driver's libcuda.so.1 when first used)."""

from __future__ import annotations

import ctypes
import hashlib
import importlib.resources
from collections.abc import Sequence
from ctypes import c_int32, c_int64, c_uint64, c_void_p
from dataclasses import dataclass

from . import abi
from .errors import DeviceError
from .runtime_ctypes import bind, slot

__all__ = ["LIBRARY_PATH", "CudaDevice", "device_count", "pointer_device", "ptx_hash"]

_LIBRARY_NAME = "libxpuc_cuda.so"


def _find_library() -> str:
    # as runtime._find_library: next to this file, or in site-packages/xpuc
    # for an editable install
    path = importlib.resources.files(__package__) / _LIBRARY_NAME
    if not path.is_file():
        raise ImportError(
            f"xpuc: {_LIBRARY_NAME} is missing from {__package__}; is xpuc installed?")
    return str(path)


LIBRARY_PATH: str = _find_library()
_lib = ctypes.CDLL(LIBRARY_PATH)
bind(_lib, abi.CUDA_ENTRIES)


def _check(status: int) -> None:
    if status != abi.Status.OK:
        raise DeviceError(_lib.xpuc_cuda_last_error().decode(errors="replace"))


def device_count() -> int:
    """The number of CUDA devices; DeviceError where there is no CUDA driver."""
    count = c_int32()
    _check(_lib.xpuc_cuda_device_count(ctypes.byref(count)))
    return count.value


def pointer_device(address: int) -> int | None:
    """The ordinal of the CUDA device whose memory ``address`` is, or None
    (host memory)."""
    ordinal = c_int32()
    _check(_lib.xpuc_cuda_pointer_device(address, ctypes.byref(ordinal)))
    return None if ordinal.value < 0 else ordinal.value


def ptx_hash(ptx: bytes) -> int:
    """The key of a PTX module in the runtime's module cache."""
    return int.from_bytes(hashlib.blake2b(ptx, digest_size=8).digest(), "little")


@dataclass(frozen=True)
class CudaDevice:
    """CUDA device ``cuda:<ordinal>`` as the runtime opened it."""

    ordinal: int
    handle: int
    name: str
    compute_capability: tuple[int, int]
    multiprocessors: int = 0  # its SMs; 0: not known, as the architecture's largest part

    @classmethod
    def open(cls, ordinal: int) -> CudaDevice:
        handle = c_void_p()
        _check(_lib.xpuc_cuda_device_open(ordinal, ctypes.byref(handle)))
        name = ctypes.create_string_buffer(256)
        major, minor = c_int32(), c_int32()
        _check(_lib.xpuc_cuda_device_describe(handle, name, len(name), ctypes.byref(major),
                                              ctypes.byref(minor)))
        multiprocessors = c_int32()
        _check(_lib.xpuc_cuda_device_multiprocessors(handle, ctypes.byref(multiprocessors)))
        return cls(ordinal, handle.value, name.value.decode(), (major.value, minor.value),
                   multiprocessors.value)

    @property
    def max_work_group_size(self) -> int:
        """The most threads a block has: 1024 on every architecture xpuc
        compiles for (sm_75 on, see nvidia_gpus)."""
        return 1024

    @property
    def sm_arch(self) -> str:
        """The architecture's name as ptxas takes it: ``sm_90``."""
        return "sm_{}{}".format(*self.compute_capability)

    def alloc(self, nbytes: int) -> int:
        pointer = c_void_p()
        _check(_lib.xpuc_cuda_alloc(self.handle, nbytes, ctypes.byref(pointer)))
        return pointer.value

    def free(self, pointer: int) -> None:
        _check(_lib.xpuc_cuda_free(self.handle, pointer))

    def copy_to_device(self, device_pointer: int, host_pointer: int, nbytes: int) -> None:
        _check(_lib.xpuc_cuda_copy_to_device(self.handle, device_pointer, host_pointer, nbytes))

    def copy_to_host(self, host_pointer: int, device_pointer: int, nbytes: int) -> None:
        _check(_lib.xpuc_cuda_copy_to_host(self.handle, host_pointer, device_pointer, nbytes))

    def synchronize(self, stream: int) -> None:
        """Wait for the work queued on ``stream`` (a CUstream; 0: the legacy
        default stream)."""
        _check(_lib.xpuc_cuda_synchronize(self.handle, stream))

    def launch(self, ptx: bytes, kernel_name: str, args: Sequence[tuple[int, float]],
               global_size: Sequence[int], local_size: Sequence[int] | None = None,
               stream: int = 0) -> None:
        """Run ``kernel_name`` of ``ptx`` over ``global_size`` (x, y, z) on
        ``stream`` (0: the legacy default stream) and wait; ``args`` are
        ``(ArgKind, value)`` pairs, an array's value its device address.
        Without ``local_size`` the runtime picks the block."""
        ndim, count = len(global_size), len(args)
        _check(_lib.xpuc_cuda_launch(
            self.handle, stream, ptx, len(ptx), ptx_hash(ptx), kernel_name.encode(),
            (c_uint64 * max(count, 1))(*(slot(kind, value) for kind, value in args)),
            (c_int32 * max(count, 1))(*(kind for kind, _ in args)), count,
            (c_int64 * ndim)(*global_size), (c_int64 * ndim)(*(local_size or [0] * ndim)),
            ndim))
        self.synchronize(stream)
