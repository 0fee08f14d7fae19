"""The launch ABI between compiled host code, Python and the C runtime, defined
once: the enums and limits of ``runtime/xpuc_runtime.h`` and the signature of
every entry it declares.

The ctypes binding (``runtime.py``) and the llvmlite declarations of compiled
host code (``frontend/runtime_calls.py``) are derived from this module, and
``tests/test_abi.py`` checks the C header against it. To change the ABI,
change this module and the header together.

This module imports nothing from xpuc (every layer may import it) and nothing
that loads the runtime.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "BASE_TYPES",
    "CUDA_ENTRIES",
    "CUDA_X_CONTIGUOUS_SUFFIX",
    "ENTRIES",
    "ENUMS",
    "LIMITS",
    "MAX_KERNEL_ARGS",
    "MAX_WORK_ITEMS",
    "OPAQUE_TYPES",
    "STATS_FIELDS",
    "ArgKind",
    "CopyIn",
    "Entry",
    "Status",
    "Type",
    "UsmKind",
    "c_prototype",
    "parse_type",
]


class Status(IntEnum):
    """What the entries return (``xpuc_status``; ``status`` in the notation
    below); the message of an error is in ``xpuc_last_error()``."""

    OK = 0
    ERR_INVALID = 1  # bad argument, or no call open on this thread
    ERR_ALLOC = 2  # USM allocation failed
    ERR_COPY = 3  # host<->device copy failed
    ERR_BUILD = 4  # SPIR-V module did not build for the device
    ERR_LAUNCH = 5  # kernel submission or execution failed
    ERR_DRIVER = 6  # the device driver is missing or failed (CUDA)


class UsmKind(IntEnum):
    """Kinds of USM memory (``xpuc_usm_kind``)."""

    DEVICE = 0
    SHARED = 1
    HOST = 2


class ArgKind(IntEnum):
    """Kinds of kernel arguments (``xpuc_arg_kind``). Each argument travels as
    one 64-bit slot holding its value's bits: a pointer, an integer, or a float
    (an f32 in the slot's low four bytes)."""

    PTR = 0
    I8 = 1
    I32 = 2
    I64 = 3
    F32 = 4
    F64 = 5
    I16 = 6


class CopyIn(IntEnum):
    """What a kernel does with an array it is given (``xpuc_copy_in``), which
    decides the copy ``xpuc_buffer_acquire`` makes: none of its bytes needed,
    its bytes read, or every byte written before any is read."""

    NONE = 0
    IN = 1
    OVERWRITTEN = 2


#: The C enums mirrored above: C type name -> (enum, prefix of its C names).
#: ``ArgKind.PTR`` is ``XPUC_ARG_PTR``.
ENUMS: dict[str, tuple[type[IntEnum], str]] = {
    "xpuc_status": (Status, "XPUC_"),
    "xpuc_usm_kind": (UsmKind, "XPUC_USM_"),
    "xpuc_arg_kind": (ArgKind, "XPUC_ARG_"),
    "xpuc_copy_in": (CopyIn, "XPUC_COPY_"),
}

#: Most kernel arguments one launch takes.
MAX_KERNEL_ARGS = 256
#: Most work-items one launch runs (dpctl's submit functions keep ids in an
#: int); the compiler takes every global id to be below it.
MAX_WORK_ITEMS = 2**31 - 1

#: A PTX module's global named a kernel's name and this suffix marks the
#: kernel as one whose accesses move by one element along x, for the CUDA
#: runtime's block shape (``XPUC_CUDA_X_CONTIGUOUS_SUFFIX``).
CUDA_X_CONTIGUOUS_SUFFIX = "__xpuc_x_contiguous"

#: The header's limits (its ``#define``s) by C name.
LIMITS: dict[str, int] = {
    "XPUC_MAX_KERNEL_ARGS": MAX_KERNEL_ARGS,
    "XPUC_MAX_WORK_ITEMS": MAX_WORK_ITEMS,
}

#: The fields of ``xpuc_stats``, in order, each an ``int64_t``.
STATS_FIELDS: tuple[str, ...] = (
    "kernel_launches",
    "kernel_builds",  # program builds from SPIR-V (cache misses)
    "kernel_cache_hits",  # launches that found their kernel built
    "h2d_bytes",
    "d2h_bytes",
    "d2d_bytes",  # copies within device memory (xpuc_device_copy)
    "usm_allocs",
    "usm_frees",
    "host_parfors",  # parfors the cost model ran on the host (xpuc_parfor_on_host)
    "device_waits",  # times the host blocked on a device (a call's start, launches, copies)
)

# ---- the type notation --------------------------------------------------------

#: The notation's base types and the C type each stands for. A type is a base
#: type, optionally preceded by ``const`` and followed by ``*``s, read as in
#: C: ``const u64*`` is ``const uint64_t *``, ``void**`` is ``void **``.
#: ``queue`` and ``cuda_device`` are opaque (only pointed to); ``stats`` is
#: the struct above.
BASE_TYPES: dict[str, str] = {
    "void": "void",
    "status": "int",  # a Status value
    "char": "char",
    "i32": "int32_t",
    "i64": "int64_t",
    "u64": "uint64_t",
    "queue": "xpuc_queue",
    "cuda_device": "xpuc_cuda_device",
    "stats": "xpuc_stats",
}
OPAQUE_TYPES = ("queue", "cuda_device")


@dataclass(frozen=True)
class Type:
    """A type of the notation, parsed."""

    base: str
    pointers: int = 0
    const: bool = False

    def c_declaration(self, name: str) -> str:
        """``name`` declared with this type, as C writes it: ``const uint64_t *slots``."""
        text = ("const " if self.const else "") + BASE_TYPES[self.base]
        return f"{text} {'*' * self.pointers}{name}"


_TYPE = re.compile(r"(const\s+)?(\w+)\s*(\**)")


def parse_type(text: str) -> Type:
    """``"const u64*"`` -> ``Type("u64", pointers=1, const=True)``."""
    match = _TYPE.fullmatch(text.strip())
    if not match or match[2] not in BASE_TYPES:
        raise ValueError(f"xpuc.abi: not a type of the notation: {text!r}")
    parsed = Type(match[2], len(match[3]), bool(match[1]))
    if parsed.base in OPAQUE_TYPES and not parsed.pointers:
        raise ValueError(f"xpuc.abi: {parsed.base} is opaque, only pointed to: {text!r}")
    return parsed


@dataclass(frozen=True)
class Entry:
    """A C entry of the runtime, ``result name(params)``: each parameter a
    ``(name, type)`` pair, types in the notation above. ``host_code``: compiled
    host code calls it (the LLVM modules Numba builds declare it)."""

    name: str
    result: str
    params: tuple[tuple[str, str], ...]
    host_code: bool = False

    @property
    def result_type(self) -> Type:
        return parse_type(self.result)

    @property
    def param_types(self) -> tuple[Type, ...]:
        return tuple(parse_type(kind) for _, kind in self.params)


def c_prototype(entry: Entry) -> str:
    """The entry as the header declares it, on one line and without the
    semicolon: ``const char *xpuc_last_error(void)``."""
    params = ", ".join(parse_type(kind).c_declaration(name) for name, kind in entry.params)
    return f"{entry.result_type.c_declaration(entry.name)}({params or 'void'})"


def _entry(name: str, result: str, *params: tuple[str, str], host_code: bool = False) -> Entry:
    return Entry(name, result, tuple(params), host_code)


# ---- the entries ----------------------------------------------------------------

# What a launch takes (xpuc_launch; after a queue, xpuc_call_launch).
_LAUNCH_PARAMS = (
    ("spirv", "const void*"),
    ("spirv_len", "i64"),
    ("spirv_hash", "u64"),
    ("kernel_name", "const char*"),
    ("arg_slots", "const u64*"),  # nargs slots (ArgKind says what each holds)
    ("arg_kinds", "const i32*"),  # nargs ArgKind values
    ("nargs", "i32"),
    ("global", "const i64*"),  # ndim sizes, x y z (SPIR-V order)
    ("local", "const i64*"),  # ndim sizes or NULL; all zero: not fixed
    ("ndim", "i32"),
)

#: Every entry of the runtime, by name, in the header's order.
ENTRIES: dict[str, Entry] = {
    entry.name: entry
    for entry in (
        # queues
        _entry("xpuc_queue_wrap", "status", ("dpctl_queue_ref", "void*"), ("out", "queue**")),
        _entry("xpuc_queue_cuda", "status", ("ordinal", "i32"), ("stream", "void*"),
               ("out", "queue**")),
        _entry("xpuc_queue_release", "status", ("queue", "queue*")),
        # USM memory and copies
        _entry("xpuc_usm_alloc", "status", ("queue", "queue*"), ("nbytes", "i64"),
               ("usm_kind", "i32"), ("out", "void**")),
        _entry("xpuc_usm_free", "status", ("queue", "queue*"), ("ptr", "void*"),
               ("nbytes", "i64"), ("usm_kind", "i32")),
        _entry("xpuc_usm_advise", "status", ("queue", "queue*"), ("ptr", "void*"),
               ("nbytes", "i64")),
        _entry("xpuc_copy_to_device", "status", ("queue", "queue*"), ("dst", "void*"),
               ("src", "const void*"), ("nbytes", "i64")),
        _entry("xpuc_copy_to_host", "status", ("queue", "queue*"), ("dst", "void*"),
               ("src", "const void*"), ("nbytes", "i64")),
        # calls and their buffers
        _entry("xpuc_call_begin", "status", ("queue", "queue*")),
        _entry("xpuc_call_end", "status", host_code=True),
        _entry("xpuc_call_queue", "status", ("queue", "queue*")),
        _entry("xpuc_call_enter", "status", host_code=True),
        _entry("xpuc_use_system_memory", "status", ("on", "i32")),
        _entry("xpuc_call_register", "status", ("host", "void*"), ("nbytes", "i64")),
        _entry("xpuc_array_resident", "status", ("meminfo", "void*"), host_code=True),
        _entry("xpuc_buffer_acquire", "status", ("host", "void*"), ("nbytes", "i64"),
               ("copy_in", "i32"), ("device", "void**"), host_code=True),
        _entry("xpuc_buffer_release", "status", ("host", "void*"), ("nbytes", "i64"),
               ("copy_out", "i32"), host_code=True),
        _entry("xpuc_host_access", "status", ("host", "void*"), ("nbytes", "i64"),
               ("writes", "i32"), host_code=True),
        _entry("xpuc_element_copy", "status", ("dst", "void*"), ("src", "const void*"),
               ("nbytes", "i64"), ("to_device", "i32"), host_code=True),
        _entry("xpuc_device_copy", "status", ("dst", "void*"), ("src", "const void*"),
               ("nbytes", "i64"), host_code=True),
        # USM arrays of compiled code
        _entry("xpuc_set_nrt_api", "status", ("api", "const void*")),
        _entry("xpuc_usm_array_alloc", "status", ("nbytes", "i64"), ("usm_kind", "i32"),
               ("meminfo", "void**"), host_code=True),
        # launches
        _entry("xpuc_launch", "status", *_LAUNCH_PARAMS, host_code=True),
        _entry("xpuc_call_launch", "status", ("queue", "queue*"), *_LAUNCH_PARAMS),
        _entry("xpuc_build_ahead", "status", ("queue", "queue*"), ("spirv", "const void*"),
               ("spirv_len", "i64"), ("spirv_hash", "u64")),
        _entry("xpuc_parfor_on_host", "status", ("kernel_name", "const char*"),
               ("trip_count", "i64"), ("iteration_cost", "i64"), ("on_host", "i32*"),
               host_code=True),
        # errors, statistics, tracing
        _entry("xpuc_last_error", "const char*"),
        _entry("xpuc_get_stats", "void", ("out", "stats*")),
        _entry("xpuc_reset_stats", "void"),
        _entry("xpuc_trace_launches", "void", ("on", "i32")),
    )
}

#: Every entry of the CUDA runtime (runtime/cuda/xpuc_cuda.h, libxpuc_cuda.so),
#: by name, in the header's order. Its launch takes a device and stream and
#: then what the SYCL runtime's ``xpuc_launch`` takes: one launch ABI for both.
CUDA_ENTRIES: dict[str, Entry] = {
    entry.name: entry
    for entry in (
        # devices
        _entry("xpuc_cuda_device_count", "status", ("out", "i32*")),
        _entry("xpuc_cuda_device_open", "status", ("ordinal", "i32"),
               ("out", "cuda_device**")),
        _entry("xpuc_cuda_device_describe", "status", ("device", "cuda_device*"),
               ("name", "char*"), ("name_size", "i64"), ("major", "i32*"),
               ("minor", "i32*")),
        _entry("xpuc_cuda_device_multiprocessors", "status", ("device", "cuda_device*"),
               ("out", "i32*")),
        # device memory and copies
        _entry("xpuc_cuda_alloc", "status", ("device", "cuda_device*"), ("nbytes", "i64"),
               ("out", "void**")),
        _entry("xpuc_cuda_free", "status", ("device", "cuda_device*"), ("ptr", "void*")),
        _entry("xpuc_cuda_copy_to_device", "status", ("device", "cuda_device*"),
               ("dst", "void*"), ("src", "const void*"), ("nbytes", "i64")),
        _entry("xpuc_cuda_copy_to_host", "status", ("device", "cuda_device*"),
               ("dst", "void*"), ("src", "const void*"), ("nbytes", "i64")),
        _entry("xpuc_cuda_copy", "status", ("device", "cuda_device*"), ("stream", "void*"),
               ("dst", "void*"), ("src", "const void*"), ("nbytes", "i64"), ("wait", "i32")),
        _entry("xpuc_cuda_pointer_device", "status", ("ptr", "const void*"),
               ("ordinal", "i32*")),
        _entry("xpuc_cuda_synchronize", "status", ("device", "cuda_device*"),
               ("stream", "void*")),
        # launches: a device and stream (where a SYCL launch has its call's
        # queue), then xpuc_launch's parameters (the binary is PTX)
        Entry("xpuc_cuda_launch", "status", (
            ("device", "cuda_device*"), ("stream", "void*"),
            *((name.replace("spirv", "ptx"), kind)
              for name, kind in ENTRIES["xpuc_launch"].params))),
        # errors
        _entry("xpuc_cuda_last_error", "const char*"),
    )
}
