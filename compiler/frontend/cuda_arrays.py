"""Arrays in CUDA device memory: what callers pass (CuPy arrays, PyTorch CUDA
tensors, numba.cuda device arrays: any object with ``__cuda_array_interface__``,
or with DLPack on a CUDA device), used in place by compiled code, and what a
call on a CUDA device returns.

To compiled code a CUDA array is a device USM array (``CudaArrayType``
subclasses ``DeviceUSMArray``): on a CUDA queue the runtime's memory is device
memory whatever the USM kind, so what holds for device USM arrays holds for
them (kernels take the pointer as it is, host code reads single elements
through copies and nothing else, arrays made from them are allocated by the
runtime on the call's device). Only the Python objects differ: an argument
comes in as a ``CudaArrayArgument`` (what the unboxer reads, made by
placement from the caller's object), and an array that compiled code returns
leaves as a ``CudaArray`` (both protocols), which the call hands back as an
array of the caller's library where it knows that library.
"""

from __future__ import annotations

import functools
import sys
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
from numba.core.extending import box, typeof_impl
from numba.np import numpy_support

from .. import cuda_runtime, dlpack
from .usm import DeviceUSMArray, box_through, current_call_queue, register_usm_class

_CUDA_DEVICE_TYPES = (dlpack.KDL_CUDA, dlpack.KDL_CUDA_MANAGED)


def is_cuda_array(value: object) -> bool:
    """Whether ``value`` is an array in CUDA device memory: it offers
    ``__cuda_array_interface__`` (PyTorch's CPU tensors have the attribute and
    refuse to give it), or DLPack on a CUDA device. Looked up on the class
    first: every argument of every call passes here."""
    cls = type(value)
    if hasattr(cls, "__cuda_array_interface__"):
        return getattr(value, "__cuda_array_interface__", None) is not None
    return hasattr(cls, "__dlpack_device__") and _dlpack_device(value)[0] in _CUDA_DEVICE_TYPES


def _dlpack_device(value: object) -> tuple[int, int]:
    try:
        return tuple(value.__dlpack_device__())
    except (AttributeError, TypeError, ValueError, BufferError):
        return (0, 0)  # no device DLPack names


def cuda_ordinal(value: object, pointer: int | None = None) -> int | None:
    """The ordinal of the CUDA device whose memory CUDA array ``value`` is:
    what its ``__dlpack_device__`` says, else what the driver says of its
    pointer (``pointer``, else its ``__cuda_array_interface__``'s); None for
    an array with no memory that names no device."""
    if hasattr(type(value), "__dlpack_device__"):
        kind, ordinal = _dlpack_device(value)
        if kind in _CUDA_DEVICE_TYPES:
            return ordinal
    if pointer is None:
        pointer = value.__cuda_array_interface__["data"][0]
    return cuda_runtime.pointer_device(pointer) if pointer else None


def cuda_stream(value: object) -> int:
    """The stream a call on CUDA array ``value`` runs on: the CUstream its
    ``__cuda_array_interface__`` names (CuPy's current stream), else its
    library's current stream (PyTorch's interface, version 2, names none), 0
    (the legacy default stream) where that is the one named, or none is."""
    interface = getattr(value, "__cuda_array_interface__", None)
    return 0 if interface is None else _interface_stream(value, interface)


def _interface_stream(value: object, interface: dict) -> int:
    if "stream" in interface:
        return _call_stream(interface["stream"])
    current = _LIBRARY_STREAMS.get(library_of(value))
    return 0 if current is None else _call_stream(current(value))


def _torch_stream(tensor: object) -> int:
    return sys.modules["torch"].cuda.current_stream(tensor.device).cuda_stream


# Where a library's arrays are used when their interface names no stream: the
# library's current stream on their device, as its own operations use it.
_LIBRARY_STREAMS: dict[str, Callable[[object], int]] = {"torch": _torch_stream}


def _call_stream(stream: int | None) -> int:
    # __cuda_array_interface__ v3: None needs no wait, 1 is the legacy default
    # stream (the driver's NULL stream), 2 the per-thread default stream
    # (CU_STREAM_PER_THREAD, a handle the driver takes as it is), else a CUstream
    return 0 if stream is None or stream == 1 else stream


KeyedArgument = tuple[tuple, "CudaArrayArgument"]


def keyed_argument(value: object) -> KeyedArgument | None:
    """CUDA array ``value`` as compiled code takes it, with what of it decides
    where and how a call with it runs: its device and stream, and its type to
    compiled code (typestr, rank, layout, writability), plain values that hash
    fast. Its ``__cuda_array_interface__`` is read once. None where it is no
    CUDA array that compiled code takes (DLPack alone, a mask: placement says
    why)."""
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is None:
        return None
    try:
        argument = CudaArrayArgument.of_interface(value, interface)
    except ValueError:
        return None
    key = (cuda_ordinal(value, argument._pointer), _interface_stream(value, interface),
           interface["typestr"], argument.ndim, argument.layout, argument.readonly)
    return key, argument


def _keyed_cupy_argument(value: object) -> KeyedArgument | None:
    """``keyed_argument`` of a ``cupy.ndarray``, read from its attributes: what
    its ``__cuda_array_interface__`` says, without the dict CuPy builds at each
    read (with its dtype's ``descr``, made by NumPy in Python), which cost
    more than the rest of keying a call. What cannot change of the array is
    read once (``_cupy_arrays``); its shape and strides, and CuPy's current
    stream, at each call."""
    shape, byte_strides = value.shape, value.strides
    known = _cupy_arrays.get(id(value))
    if known is None or known.shape != shape or known.byte_strides != byte_strides or (
            known() is not value):
        known = _read_cupy_array(value, shape, byte_strides, known)
        if known is None:
            return None
    else:
        known.again = True
    argument = known.argument
    return (known.device, cupy_stream(), known.typestr, len(shape), argument.layout,
            False), argument


def cupy_stream() -> int:
    """The stream of a call on CuPy arrays: CuPy's current stream, which
    their ``__cuda_array_interface__`` names."""
    return _call_stream(sys.modules["cupy"].cuda.get_current_stream().ptr)


def known_cupy_array(value: object) -> KnownCupyArray | None:
    """What call plans last read of ``value``, a CuPy array, where they read
    it more than once as it is now (None if not): an array made for one call
    is not worth knowing again."""
    known = _cupy_arrays.get(id(value))
    return known if known is not None and known.again and known() is value else None


class KnownCupyArray(weakref.ref):
    """A weak reference to a ``cupy.ndarray`` with what
    ``_keyed_cupy_argument`` read of it: what cannot change (its device and
    dtype; its pointer, in ``argument``), its shape and strides (bytes) as
    read, which can (``a.shape = ...``: another entry then), the argument
    they make (holding the array weakly), and whether a later call read it
    so again. Going, the array takes its entry of ``_cupy_arrays`` (at
    ``number``, its id()) with it."""

    __slots__ = ("number", "device", "typestr", "shape", "byte_strides", "argument", "again")


# id() of each cupy.ndarray _keyed_cupy_argument has read, alive -> what it
# read. Calls in a loop mostly pass the same arrays, and reading an array's
# pointer, dtype and device, and making its argument, cost more than the
# rest of keying it. (One object an array: an array made for one call costs
# it too.)
_cupy_arrays: dict[int, KnownCupyArray] = {}


def _forget(known: KnownCupyArray, forget: Callable = _cupy_arrays.pop) -> None:
    # (the pop bound here: at exit the module's globals may be gone first)
    forget(known.number, None)


def _read_cupy_array(value: object, shape: tuple[int, ...], byte_strides: tuple[int, ...],
                     known: KnownCupyArray | None) -> KnownCupyArray | None:
    """``value``'s entry of ``_cupy_arrays`` for its shape and strides
    (``known``: its entry so far, if any), made and kept; None for strides
    that are not whole elements (placement refuses the array, saying so)."""
    if known is None or known() is not value:
        dtype, memory = value.dtype, value.data
        pointer, device = (memory.ptr if value.size else 0), memory.device_id
    else:
        dtype, pointer, device = known.argument.dtype, known.argument._pointer, known.device
    if value.flags.c_contiguous:
        strides = None
    elif any(s % dtype.itemsize for s in byte_strides):
        return None
    else:
        strides = tuple(s // dtype.itemsize for s in byte_strides)
    known = KnownCupyArray(value, _forget)
    known.number, known.device, known.typestr = id(value), device, dtype.str
    known.shape, known.byte_strides, known.again = shape, byte_strides, False
    known.argument = CudaArrayArgument(weakref.ref(value), pointer, shape,
                                       *_strides_and_layout(shape, strides), dtype, False)
    _cupy_arrays[known.number] = known
    return known


# The classes of the CUDA arrays placement has met (cupy.ndarray,
# torch.Tensor...) and how call plans read their instances: CuPy's by their
# attributes, the others' by their interface. A class alone does not make a
# CUDA array (PyTorch's CPU tensors).
cuda_array_classes: dict[type, Callable[[object], KeyedArgument | None]] = {}


def met_cuda_array_class(cls: type) -> None:
    """Placement met CUDA arrays of class ``cls``: later calls key them."""
    cupy = sys.modules.get("cupy")
    cuda_array_classes[cls] = (_keyed_cupy_argument if cupy is not None
                               and issubclass(cls, cupy.ndarray) else keyed_argument)


def library_of(value: object) -> str:
    """The package that made CUDA array ``value`` (``cupy``, ``torch``...)."""
    return type(value).__module__.partition(".")[0]


class CudaArrayArgument:
    """A CUDA array as compiled code takes it: what the unboxer reads
    (``_pointer``, ``shape``, ``strides`` in elements) and ``source``, the
    caller's object, given back where the function returns that whole array.
    Its strides and layout come worked out (``_strides_and_layout``): every
    call unboxes each argument."""

    __slots__ = ("_pointer", "shape", "strides", "layout", "dtype", "readonly", "_source",
                 "_owner")

    def __init__(self, source: object | weakref.ref, pointer: int, shape: tuple[int, ...],
                 strides: tuple[int, ...], layout: str, dtype: np.dtype, readonly: bool,
                 owner: object = None) -> None:
        # a weak reference where the argument is kept from call to call
        # (_cupy_arrays): the caller holds the object while a call has it
        self._source = source
        self._pointer = pointer
        self.shape = shape
        self.strides = strides  # in elements
        self.layout = layout  # Numba's, as NumPy's flags would say
        self.dtype = dtype
        self.readonly = readonly
        self._owner = owner  # what keeps memory read through DLPack alive

    @property
    def source(self) -> object:
        """The caller's object (alive while a call has it)."""
        source = self._source
        return source() if isinstance(source, weakref.ref) else source

    @classmethod
    def of(cls, value: object) -> CudaArrayArgument:
        """CUDA array ``value`` through its ``__cuda_array_interface__`` (else
        its DLPack capsule). ``ValueError`` for what compiled code cannot
        take: a mask, strides that are not whole elements, a capsule of
        memory that is not a CUDA device's."""
        interface = getattr(value, "__cuda_array_interface__", None)
        if interface is None:
            tensor = dlpack.read_capsule(value.__dlpack__())
            if tensor.device[0] not in _CUDA_DEVICE_TYPES:
                raise ValueError("its DLPack capsule describes memory on DLPack device "
                                 f"type {tensor.device[0]}, not a CUDA device's")
            return cls(value, tensor.pointer, tensor.shape,
                       *_strides_and_layout(tensor.shape, tensor.strides), tensor.dtype, False,
                       tensor.owner)
        return cls.of_interface(value, interface)

    @classmethod
    def of_interface(cls, value: object, interface: dict) -> CudaArrayArgument:
        """``value`` through ``interface``, its ``__cuda_array_interface__``."""
        if interface.get("mask") is not None:
            raise ValueError("a masked __cuda_array_interface__ cannot be offloaded")
        dtype = _dtype(interface["typestr"])
        shape = tuple(interface["shape"])
        byte_strides = interface.get("strides")
        if byte_strides is None:
            strides = None  # C order, worked out when wanted
        elif any(s % dtype.itemsize for s in byte_strides):
            raise ValueError(f"its strides {tuple(byte_strides)} (bytes) are not "
                             f"whole elements of {dtype}")
        else:
            strides = tuple(s // dtype.itemsize for s in byte_strides)
        pointer, readonly = interface["data"]
        return cls(value, pointer or 0, shape, *_strides_and_layout(shape, strides), dtype,
                   bool(readonly))

    @property
    def ndim(self) -> int:
        return len(self.shape)


@functools.lru_cache(maxsize=64)
def _dtype(typestr: str) -> np.dtype:
    return np.dtype(typestr)


@functools.lru_cache(maxsize=256)
def _strides_and_layout(shape: tuple[int, ...], strides: tuple[int, ...] | None
                        ) -> tuple[tuple[int, ...], str]:
    """The strides (elements) of an array of ``shape`` and ``strides`` (None:
    C order), and its layout."""
    if strides is None:
        return _c_strides(shape), "C"
    return strides, _layout(shape, strides)


@functools.lru_cache(maxsize=256)
def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """C order's strides of ``shape``, in elements."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _layout(shape: tuple[int, ...], strides: tuple[int, ...]) -> str:
    """Numba's layout of an array of ``shape`` and ``strides`` (elements), as
    NumPy's flags would say: axes of extent 1 have any stride."""
    if 0 in shape:
        return "C"
    kept = [(n, s) for n, s in zip(shape, strides) if n != 1]
    if all(s == _c_strides(tuple(n for n, _ in kept))[i] for i, (_, s) in enumerate(kept)):
        return "C"
    reverse = list(reversed(kept))
    if all(s == _c_strides(tuple(n for n, _ in reverse))[i] for i, (_, s) in enumerate(reverse)):
        return "F"
    return "A"


class CudaArrayType(DeviceUSMArray):
    """Numba's type of an array in CUDA device memory (see the module's notes)."""

    described = "CUDA array"
    host_alternative = ""

    def __init__(self, dtype, ndim, layout, readonly=False, name=None, aligned=True):
        if name is None:
            access = "readonly " if readonly else ""
            name = f"{access}cuda_array({dtype}, {ndim}d, {layout})"
        super().__init__(dtype, ndim, layout, readonly=readonly, name=name, aligned=aligned)


register_usm_class(CudaArrayType)


@functools.lru_cache(maxsize=256)
def cuda_array_type(dtype: np.dtype, ndim: int, layout: str, readonly: bool) -> CudaArrayType:
    # cached: making a Numba type costs more than the rest of a call's dispatch
    return CudaArrayType(numpy_support.from_dtype(dtype), ndim, layout, readonly=readonly)


def argument_type(value: CudaArrayArgument) -> CudaArrayType:
    """Numba's type of a ``CudaArrayArgument`` (what ``numba.typeof`` gives)."""
    return cuda_array_type(value.dtype, value.ndim, value.layout, value.readonly)


typeof_impl.register(CudaArrayArgument)(lambda value, context: argument_type(value))


# ---- what a call returns -----------------------------------------------------

class _DeviceAllocation:
    """Device memory xpuc allocated for a host array a call returned."""

    def __init__(self, device: cuda_runtime.CudaDevice, nbytes: int) -> None:
        self.device = device
        self.pointer = device.alloc(nbytes) if nbytes else 0

    def __del__(self) -> None:
        if self.pointer:
            self.device.free(self.pointer)


class CudaArray:
    """An array in CUDA device memory that an ``xpuc.jit`` call returned,
    where no library of the caller's could take it: it offers
    ``__cuda_array_interface__`` and DLPack (``cupy.asarray``,
    ``torch.from_dlpack``... take it without a copy) and keeps the memory
    alive while anything holds it."""

    def __init__(self, pointer: int, shape: tuple[int, ...], strides: tuple[int, ...],
                 dtype: np.dtype, ordinal: int, owner: object) -> None:
        self.pointer = pointer
        self.shape = shape
        self.strides = strides  # bytes, as NumPy's
        self.dtype = dtype
        self.ordinal = ordinal
        self._owner = owner

    @classmethod
    def from_host(cls, array: np.ndarray, device: cuda_runtime.CudaDevice) -> CudaArray:
        """A device copy of host ``array`` (in its memory order)."""
        order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
        host = np.asarray(array, order=order)
        memory = _DeviceAllocation(device, host.nbytes)
        if host.nbytes:
            device.copy_to_device(memory.pointer, host.ctypes.data, host.nbytes)
        return cls(memory.pointer, host.shape, host.strides, host.dtype, device.ordinal, memory)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def __cuda_array_interface__(self) -> dict:
        # the work that made it is done (calls are synchronous): no stream
        contiguous = self.strides == tuple(s * self.dtype.itemsize
                                           for s in _c_strides(self.shape))
        return {"shape": self.shape, "typestr": self.dtype.str,
                "data": (self.pointer, False), "version": 3, "stream": None,
                "strides": None if contiguous else self.strides}

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple | None = None,
                   dl_device: tuple | None = None, copy: bool | None = None) -> object:
        # stream: nothing to order, the memory is ready
        if copy:
            raise BufferError("xpuc's CUDA arrays are shared through DLPack, never copied")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"this array is on cuda:{self.ordinal}, not DLPack device "
                              f"{tuple(dl_device)}")
        return dlpack.make_capsule(self.pointer, self.__dlpack_device__(), self.shape,
                                   tuple(s // self.dtype.itemsize for s in self.strides),
                                   self.dtype, self)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (dlpack.KDL_CUDA, self.ordinal)

    def __repr__(self) -> str:
        return (f"<xpuc.CudaArray {self.dtype} {self.shape} on cuda:{self.ordinal} "
                f"at {self.pointer:#x}>")


def as_cuda_array(view: np.ndarray, parent: object) -> object:
    """What compiled code returns as a CUDA array (``view`` aliases its
    device memory and holds it): ``parent``'s source where it is that whole
    argument, else a ``CudaArray`` on the call's device."""
    itemsize = view.itemsize
    pointer = view.__array_interface__["data"][0]
    if (isinstance(parent, CudaArrayArgument) and parent.dtype == view.dtype
            and parent.shape == view.shape and parent._pointer == pointer
            and tuple(s * itemsize for s in parent.strides) == view.strides):
        return parent.source
    return CudaArray(pointer, view.shape, view.strides, view.dtype,
                     current_call_queue().device.ordinal, view)


@box(CudaArrayType)
def _box_cuda_array(typ: CudaArrayType, val, c):
    return box_through(typ, val, c, as_cuda_array)


# ---- the caller's library ------------------------------------------------------

def _cupy(array: CudaArray) -> Any:
    import cupy

    return cupy.asarray(array)


def _torch(array: CudaArray) -> Any:
    import torch

    return torch.as_tensor(array, device=f"cuda:{array.ordinal}")


def _numba_cuda(array: CudaArray) -> Any:
    from numba import cuda

    return cuda.as_cuda_array(array)


# The library of the first CUDA argument -> its array of a CudaArray, no copy.
_LIBRARY_ARRAYS: dict[str, Callable[[CudaArray], Any]] = {
    "cupy": _cupy, "torch": _torch, "numba": _numba_cuda, "numba_cuda": _numba_cuda,
}


def cuda_result(result: Any, library: str, device: cuda_runtime.CudaDevice) -> Any:
    """A call's result as the caller gets it when CUDA arrays came in: every
    array out is on the device, an array of ``library`` where xpuc knows it
    (else the ``CudaArray``); a host array the function made is copied there."""
    if isinstance(result, tuple):
        return tuple(cuda_result(r, library, device) for r in result)
    if isinstance(result, np.ndarray):
        result = CudaArray.from_host(result, device)
    if isinstance(result, CudaArray):
        make = _LIBRARY_ARRAYS.get(library)
        return result if make is None else make(result)
    return result


__all__ = ["CudaArray", "CudaArrayArgument", "CudaArrayType", "cuda_ordinal", "cuda_result",
           "is_cuda_array", "library_of"]
