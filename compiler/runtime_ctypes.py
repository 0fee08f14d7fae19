"""The ctypes types of the ABI's notation (``abi.py``), from which the ctypes
bindings of both runtimes (``runtime.py``, ``cuda_runtime.py``) derive their
entries' signatures. Imports only ctypes and ``.abi``."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_char, c_char_p, c_int, c_int32, c_int64, c_uint64, c_void_p

from . import abi


class Stats(ctypes.Structure):
    _fields_ = [(name, c_int64) for name in abi.STATS_FIELDS]


# The ctypes type of each base type of abi's notation (not pointed to).
_BASE_CTYPES: dict[str, type | None] = {
    "void": None,
    "status": c_int,
    "char": c_char,
    "i32": c_int32,
    "i64": c_int64,
    "u64": c_uint64,
    "stats": Stats,
}


def ctypes_type(kind: abi.Type) -> type | None:
    """The ctypes type of a type of abi's notation: pointers to void and to
    the opaque types are ``c_void_p``, ``char*`` is a string (``c_char_p``),
    other pointers are ``POINTER``s."""
    if kind.pointers == 0:
        return _BASE_CTYPES[kind.base]
    if kind.pointers == 1 and kind.base in ("void", *abi.OPAQUE_TYPES):
        return c_void_p
    if kind.pointers == 1 and kind.base == "char":
        return c_char_p
    return POINTER(ctypes_type(abi.Type(kind.base, kind.pointers - 1)))


def ctypes_signature(entry: abi.Entry) -> tuple[type | None, list[type]]:
    """``(restype, argtypes)`` of a runtime entry."""
    return ctypes_type(entry.result_type), [ctypes_type(t) for t in entry.param_types]


def bind(library: ctypes.CDLL, entries: dict[str, abi.Entry]) -> None:
    """Give each of ``entries`` in ``library`` its signature."""
    for entry in entries.values():
        function = getattr(library, entry.name)
        function.restype, function.argtypes = ctypes_signature(entry)


def slot(kind: int, value: float) -> int:
    """The 64-bit slot holding ``value``'s bits as kernel argument of ``kind``
    (an f32 in the low four bytes)."""
    if kind == abi.ArgKind.F32:
        return int.from_bytes(ctypes.c_float(value), "little")
    if kind == abi.ArgKind.F64:
        return int.from_bytes(ctypes.c_double(value), "little")
    return int(value) & 0xFFFF_FFFF_FFFF_FFFF
