"""Calls from compiled host code into the C runtime (its symbols registered
with the JIT linker), shared by parfor lowering, host-access syncs and USM
allocation."""

from __future__ import annotations

import ctypes

from llvmlite import binding as llvm_binding
from llvmlite import ir as llvm
from numba.core import cgutils, types
from numba.core.runtime import _nrt_python

from .. import abi, runtime
from ..errors import XpucError


class KernelFault(XpucError):
    """Raised by compiled host code when a runtime entry fails; the dispatcher
    replaces it with a DeviceError carrying the runtime's message."""


_linked = False


def link_runtime() -> None:
    """Make the runtime usable from compiled host code, before compiling or
    loading (from a cache) code that calls it: the JIT linker resolves its
    entries, and it has Numba's NRT API (USM arrays are Numba MemInfos)."""
    global _linked
    if not _linked:
        for name, address in runtime.symbol_addresses().items():
            llvm_binding.add_symbol(name, address)
        get_api = ctypes.CFUNCTYPE(ctypes.c_void_p)(_nrt_python.c_helpers["get_api"])
        runtime.set_nrt_api(get_api())
        _linked = True


I8 = llvm.IntType(8)
I8P = I8.as_pointer()
I32 = llvm.IntType(32)
I64 = llvm.IntType(64)
# The LLVM type of each base type of abi's notation (not pointed to).
_BASE_TYPES: dict[str, llvm.Type] = {
    "void": llvm.VoidType(),
    "status": I32,
    "char": I8,
    "i32": I32,
    "i64": I64,
    "u64": I64,
    "stats": llvm.LiteralStructType([I64] * len(abi.STATS_FIELDS)),
}


def llvm_type(kind: abi.Type) -> llvm.Type:
    """The LLVM type of a type of abi's notation; pointers to void and to the
    opaque queue are ``i8*``, as in C compiled by clang."""
    if kind.pointers and kind.base in ("void", "queue"):
        result = I8
    else:
        result = _BASE_TYPES[kind.base]
    for _ in range(kind.pointers):
        result = result.as_pointer()
    return result


def entry_type(entry: abi.Entry) -> llvm.FunctionType:
    """The LLVM function type of a runtime entry."""
    return llvm.FunctionType(llvm_type(entry.result_type),
                             [llvm_type(t) for t in entry.param_types])


# The entries compiled host code calls, with the types it declares them with.
ENTRY_TYPES: dict[str, llvm.FunctionType] = {
    name: entry_type(entry) for name, entry in abi.ENTRIES.items() if entry.host_code
}


def call_runtime(context, builder: llvm.IRBuilder, entry: str, *args: llvm.Value) -> None:
    """Call a runtime entry (one of ``ENTRY_TYPES``); a non-zero status raises
    KernelFault."""
    fn = cgutils.get_or_insert_function(builder.module, ENTRY_TYPES[entry], entry)
    status = builder.call(fn, args)
    failed = builder.icmp_signed("!=", status, I32(abi.Status.OK))
    with cgutils.if_unlikely(builder, failed):
        context.call_conv.return_user_exc(builder, KernelFault, ())


def host_extent(context, builder: llvm.IRBuilder, nbtype: types.Array,
                value: llvm.Value) -> tuple[llvm.Value, llvm.Value, llvm.Value]:
    """The bytes an array's elements span: their start, size, and the offset
    of element 0 from the start (a view with negative strides starts below
    its element 0)."""
    b = builder
    ary = context.make_array(nbtype)(context, builder, value=value)
    data = b.bitcast(ary.data, I8P)
    if nbtype.layout == "C":
        return data, b.mul(ary.nitems, ary.itemsize), I64(0)
    return byte_span(b, data, cgutils.unpack_tuple(b, ary.shape, nbtype.ndim),
                     cgutils.unpack_tuple(b, ary.strides, nbtype.ndim), ary.itemsize)


def byte_span(builder: llvm.IRBuilder, data: llvm.Value, shape: list[llvm.Value],
              strides: list[llvm.Value], itemsize: llvm.Value
              ) -> tuple[llvm.Value, llvm.Value, llvm.Value]:
    """``host_extent`` of the elements at ``data`` (an i8*) of ``shape`` and
    byte ``strides``, whatever their order: 0 bytes where a dimension is 0."""
    b = builder
    low, high, empty = I64(0), I64(0), cgutils.false_bit
    for dim, stride in zip(shape, strides):
        reach = b.mul(b.sub(dim, I64(1)), stride)
        negative = b.icmp_signed("<", reach, I64(0))
        low = b.add(low, b.select(negative, reach, I64(0)))
        high = b.add(high, b.select(negative, I64(0), reach))
        empty = b.or_(empty, b.icmp_signed("==", dim, I64(0)))
    nbytes = b.select(empty, I64(0), b.add(b.sub(high, low), itemsize))
    return b.gep(data, [low]), nbytes, b.neg(low)


def within_a_call(context, module: llvm.Module, fndesc) -> llvm.Function:
    """A function of the same native signature as ``fndesc``'s that calls it
    between ``xpuc_call_enter`` and ``xpuc_call_end``, which runs also when
    the function fails. Its CPython entry calls this instead of the function,
    so that a call from Python costs no runtime call of its own. A failed
    enter raises KernelFault; a failed end does too, after a function that
    succeeded (a failed function's own error stands)."""
    fnty = context.call_conv.get_function_type(fndesc.restype, fndesc.argtypes)
    function = cgutils.get_or_insert_function(module, fnty, fndesc.llvm_func_name)
    bracket = llvm.Function(module, fnty, f"{fndesc.llvm_func_name}.within_call")
    bracket.linkage = "internal"
    builder = llvm.IRBuilder(bracket.append_basic_block("entry"))
    call_runtime(context, builder, "xpuc_call_enter")
    code = builder.call(function, bracket.args)
    end = cgutils.get_or_insert_function(module, ENTRY_TYPES["xpuc_call_end"], "xpuc_call_end")
    end_failed = builder.icmp_signed("!=", builder.call(end, ()), I32(abi.Status.OK))
    # Numba's return codes: 0 a result, -2 None, anything else an exception
    returned = builder.icmp_signed("==", code, code.type(0))
    succeeded = builder.or_(returned, builder.icmp_signed("==", code, code.type(-2)))
    with cgutils.if_unlikely(builder, builder.and_(succeeded, end_failed)):
        with builder.if_then(returned):
            # the result the caller will not get (the first argument points to it)
            # (stored as the return type's representation: a bool is an i8 there)
            result = context.get_returned_value(builder, fndesc.restype,
                                                builder.load(bracket.args[0]))
            context.nrt.decref(builder, fndesc.restype, result)
        context.call_conv.return_user_exc(builder, KernelFault, ())
    builder.ret(code)
    return bracket
