"""Calls from compiled host code into the C runtime (its symbols registered
with the JIT linker), shared by parfor lowering, host-access syncs and USM
allocation."""

from __future__ import annotations

import ctypes

from llvmlite import binding as llvm_binding
from llvmlite import ir as llvm
from numba.core import cgutils, types
from numba.core.runtime import _nrt_python

from .. import runtime
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


I8P = llvm.IntType(8).as_pointer()
I32 = llvm.IntType(32)
I64 = llvm.IntType(64)
_ENTRY_TYPES = {
    "xpuc_buffer_acquire": llvm.FunctionType(I32, [I8P, I64, I32, I8P.as_pointer()]),
    "xpuc_buffer_release": llvm.FunctionType(I32, [I8P, I64, I32]),
    "xpuc_host_access": llvm.FunctionType(I32, [I8P, I64, I32]),
    "xpuc_usm_array_alloc": llvm.FunctionType(I32, [I64, I32, I8P.as_pointer()]),
    "xpuc_launch": llvm.FunctionType(
        I32,
        [I8P, I64, I64, I8P, I64.as_pointer(), I32.as_pointer(), I32,
         I64.as_pointer(), I64.as_pointer(), I32],
    ),
}


def call_runtime(context, builder: llvm.IRBuilder, entry: str, *args: llvm.Value) -> None:
    """Call a runtime entry; a non-zero status raises KernelFault."""
    fn = cgutils.get_or_insert_function(builder.module, _ENTRY_TYPES[entry], entry)
    status = builder.call(fn, args)
    failed = builder.icmp_signed("!=", status, I32(0))
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
    low, high = I64(0), I64(0)
    shape = cgutils.unpack_tuple(b, ary.shape, nbtype.ndim)
    strides = cgutils.unpack_tuple(b, ary.strides, nbtype.ndim)
    for dim, stride in zip(shape, strides):
        reach = b.mul(b.sub(dim, I64(1)), stride)
        negative = b.icmp_signed("<", reach, I64(0))
        low = b.add(low, b.select(negative, reach, I64(0)))
        high = b.add(high, b.select(negative, I64(0), reach))
    empty = b.icmp_signed("==", ary.nitems, I64(0))
    nbytes = b.select(empty, I64(0), b.add(b.sub(high, low), ary.itemsize))
    return b.gep(data, [low]), nbytes, b.neg(low)
