"""DLPack's C structures, read and written with ctypes: what an object's
``__dlpack__`` capsule describes (for GPU arrays that offer DLPack alone),
and capsules describing memory xpuc hands out (the ``__dlpack__`` of the
arrays a call returns on a CUDA device). Only the unversioned capsule
(``"dltensor"``, DLPack 0.x and what 1.x producers give without
``max_version``) is read and made."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_char_p, c_int32, c_int64, c_uint8, c_uint16, c_uint64, c_void_p
from dataclasses import dataclass

import numpy as np

# DLDeviceType values xpuc meets
KDL_CPU, KDL_CUDA, KDL_CUDA_MANAGED = 1, 2, 13

# DLDataTypeCode -> NumPy's kind letter
_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}
_CODES = {kind: code for code, kind in _KINDS.items()}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device", _DLDevice), ("ndim", c_int32),
                ("dtype", _DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", c_void_p),
                             ("deleter", _Deleter)]

_UNUSED, _USED = b"dltensor", b"used_dltensor"

_pythonapi = ctypes.pythonapi
_pythonapi.PyCapsule_IsValid.argtypes = [ctypes.py_object, c_char_p]
_pythonapi.PyCapsule_IsValid.restype = ctypes.c_int
_pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
_pythonapi.PyCapsule_GetPointer.restype = c_void_p
_pythonapi.PyCapsule_SetName.argtypes = [ctypes.py_object, c_char_p]
_pythonapi.PyCapsule_SetName.restype = ctypes.c_int
_Destructor = ctypes.CFUNCTYPE(None, c_void_p)
# the same two entries on a capsule's address, for the capsule's destructor,
# which must not make a reference to the capsule it is destroying
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, c_void_p, c_char_p)(
    ("PyCapsule_IsValid", _pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(
    ("PyCapsule_GetPointer", _pythonapi))
_pythonapi.PyCapsule_New.argtypes = [c_void_p, c_char_p, _Destructor]
_pythonapi.PyCapsule_New.restype = ctypes.py_object


@dataclass(frozen=True)
class DLPackTensor:
    """What a consumed capsule describes. ``owner`` keeps the producer's
    memory alive: it calls the producer's deleter once it is collected."""

    pointer: int
    device: tuple[int, int]  # (DLDeviceType, device id)
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    dtype: np.dtype
    owner: object


class _Consumed:
    """A consumed ``DLManagedTensor``, released through its deleter when the
    last view of it goes."""

    def __init__(self, managed: ctypes.POINTER(_DLManagedTensor)) -> None:
        self._managed = managed

    def __del__(self) -> None:
        deleter = self._managed.contents.deleter
        if deleter:
            deleter(self._managed)


def read_capsule(capsule: object) -> DLPackTensor:
    """Consume a ``"dltensor"`` capsule: it is renamed ``"used_dltensor"``
    and its memory is held by the result's ``owner``."""
    if not _pythonapi.PyCapsule_IsValid(capsule, _UNUSED):
        raise ValueError("not an unused DLPack capsule (a 'dltensor' PyCapsule)")
    managed = ctypes.cast(_pythonapi.PyCapsule_GetPointer(capsule, _UNUSED),
                          POINTER(_DLManagedTensor))
    _pythonapi.PyCapsule_SetName(capsule, _USED)
    owner = _Consumed(managed)  # from here on, the deleter runs whatever happens
    tensor = managed.contents.dl_tensor
    dtype = tensor.dtype
    if dtype.lanes != 1 or dtype.code not in _KINDS or dtype.bits % 8:
        raise ValueError(f"DLPack data type (code {dtype.code}, {dtype.bits} bits, "
                         f"{dtype.lanes} lanes) has no NumPy dtype")
    ndim = tensor.ndim
    shape = tuple(tensor.shape[i] for i in range(ndim))
    if tensor.strides:
        strides = tuple(tensor.strides[i] for i in range(ndim))
    else:  # NULL: C order
        strides = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(ndim))
    return DLPackTensor((tensor.data or 0) + tensor.byte_offset,
                        (tensor.device.device_type, tensor.device.device_id), shape, strides,
                        np.dtype(f"{_KINDS[dtype.code]}{dtype.bits // 8}"), owner)


# Capsules made here and not yet released, by the DLManagedTensor's address:
# each entry holds the ctypes structures (and the memory's owner) alive.
_made: dict[int, tuple] = {}


@_Deleter
def _release(managed: ctypes.POINTER(_DLManagedTensor)) -> None:
    _made.pop(ctypes.addressof(managed.contents), None)


@_Destructor
def _capsule_destructor(capsule: int) -> None:
    # a capsule no consumer took still owns its tensor; a used one does not
    if _capsule_is_valid(capsule, _UNUSED):
        _made.pop(_capsule_pointer(capsule, _UNUSED), None)


def make_capsule(pointer: int, device: tuple[int, int], shape: tuple[int, ...],
                 strides: tuple[int, ...], dtype: np.dtype, owner: object) -> object:
    """A ``"dltensor"`` capsule describing memory that ``owner`` keeps alive
    (``strides`` in elements), holding ``owner`` until the consumer's deleter
    call (or, if never consumed, the capsule's end)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in _CODES:
        raise BufferError(f"DLPack has no data type for {dtype}")
    ndim = len(shape)
    shape_array = (c_int64 * max(ndim, 1))(*shape)
    strides_array = (c_int64 * max(ndim, 1))(*strides)
    managed = _DLManagedTensor()
    managed.dl_tensor = _DLTensor(
        pointer, _DLDevice(*device), ndim, _DLDataType(_CODES[dtype.kind], dtype.itemsize * 8, 1),
        ctypes.cast(shape_array, POINTER(c_int64)), ctypes.cast(strides_array, POINTER(c_int64)),
        0)
    managed.deleter = _release
    address = ctypes.addressof(managed)
    _made[address] = (managed, shape_array, strides_array, owner)
    return _pythonapi.PyCapsule_New(address, _UNUSED, _capsule_destructor)
