"""SPIR-V ops the frontend writes itself, in the kernels' gpu stage, where
upstream MLIR has no op of a higher dialect that lowers to them: work-group
(local) arrays as Workgroup variables, and their elements' pointers, loads
and stores; atomics on an element's pointer (upstream lowers none on OpenCL
global memory); barriers and fences of the memories a kernel names; the
work-group product. convert-gpu-to-spirv leaves these as they are; on a CUDA
device the nvvm stage translates them (passes/spirv_to_nvvm.py)."""

from __future__ import annotations

from collections.abc import Callable

from .arith import cast
from .builder import Builder, Value
from .types import BOOL, I64, U8, ScalarType


def array_pointer_type(dtype: ScalarType, elements: int, storage: str) -> str:
    """The type of a pointer to an array variable of ``elements`` of ``dtype``."""
    return f"!spirv.ptr<!spirv.array<{elements} x {dtype.storage}>, {storage}>"


def element_pointer(b: Builder, base: str, base_type: str, offset: Value,
                    dtype: ScalarType, storage: str) -> Value:
    """The pointer to element ``offset`` (an index) of the array variable
    ``base`` points to (a Value standing for a pointer to ``dtype``)."""
    position = cast(b, offset, I64)
    return b.op(f"spirv.AccessChain {base}[{position.name}] : {base_type}, i64 "
                f"-> !spirv.ptr<{dtype.storage}, {storage}>", dtype)


def load(b: Builder, pointer: Value, dtype: ScalarType, storage: str) -> Value:
    stored = ScalarType("i", 8) if dtype.kind == "b" else dtype
    value = b.op(f'spirv.Load "{storage}" {pointer.name} : {stored.mlir}', stored)
    return cast(b, value, BOOL) if dtype.kind == "b" else value


def store(b: Builder, pointer: Value, value: Value, dtype: ScalarType, storage: str) -> None:
    stored = cast(b, value, U8) if dtype.kind == "b" else value
    b.emit(f'spirv.Store "{storage}" {pointer.name}, {stored.name} : {stored.type.mlir}')


def pointer_element(b: Builder, pointer: str, offset: Value, dtype: ScalarType,
                    storage: str) -> Value:
    """The pointer to element ``offset`` (an index) from ``pointer``, a pointer
    argument to ``dtype`` elements (an array passed again for its atomics)."""
    pointer_type = f"!spirv.ptr<{dtype.mlir}, {storage}>"
    position = cast(b, offset, I64)
    return b.op(f"spirv.PtrAccessChain {pointer}[{position.name}] : {pointer_type}, i64 "
                f"-> {pointer_type}", dtype)


def as_bits(b: Builder, value: Value, bits: ScalarType) -> Value:
    """A float's bits as an integer of its width (an integer as it is)."""
    if not value.type.is_float:
        return value
    return b.op(f"arith.bitcast {value.name} : {value.type.mlir} to {bits.mlir}", bits)


def from_bits(b: Builder, value: Value, dtype: ScalarType) -> Value:
    """The ``dtype`` value of the integer ``value``'s bits."""
    if not dtype.is_float:
        return value
    return b.op(f"arith.bitcast {value.name} : {value.type.mlir} to {dtype.mlir}", dtype)


def _bits_pointer(b: Builder, element: Value, dtype: ScalarType, storage: str) -> Value:
    """``element`` as a pointer to an integer of ``dtype``'s width: SPIR-V's
    atomics are integer ones, a float's go through its bits."""
    if not dtype.is_float:
        return element
    bits = ScalarType("i", dtype.bits)
    return b.op(f"spirv.Bitcast {element.name} : !spirv.ptr<{dtype.mlir}, {storage}> to "
                f"!spirv.ptr<{bits.mlir}, {storage}>", bits)


def atomic(b: Builder, op: str, element: Value, dtype: ScalarType, storage: str, scope: str,
           operands: list[Value]) -> Value:
    """SPIR-V's integer atomic ``op`` (``AtomicIAdd``, ...) on the bits of the
    ``dtype`` element that ``element`` points to (in ``storage``, atomic among
    the work-items of ``scope``), with ``operands`` of ``dtype``; the value the
    element held before."""
    bits = ScalarType("i", dtype.bits)
    arguments = ", ".join(as_bits(b, v, bits).name for v in operands)
    held = b.op(f"spirv.{op} <{scope}> <None> {_bits_pointer(b, element, dtype, storage).name}, "
                f"{arguments} : !spirv.ptr<{bits.mlir}, {storage}>", bits)
    return from_bits(b, held, dtype)


def compare_exchange(b: Builder, element: Value, dtype: ScalarType, storage: str, scope: str,
                     expected: Value, desired: Value) -> Value:
    """``*element = desired`` if it holds ``expected`` (floats compared by
    their bits), atomically; the value it held before either way."""
    bits = ScalarType("i", dtype.bits)
    held = b.op(f"spirv.AtomicCompareExchange <{scope}> <None> <None> "
                f"{_bits_pointer(b, element, dtype, storage).name}, "
                f"{as_bits(b, desired, bits).name}, {as_bits(b, expected, bits).name} : "
                f"!spirv.ptr<{bits.mlir}, {storage}>", bits)
    return from_bits(b, held, dtype)


def atomic_update_loop(b: Builder, element: Value, dtype: ScalarType, storage: str, scope: str,
                       combine: Callable[[Value], Value]) -> Value:
    """``*element = combine(*element)``, atomically, as a compare-exchange loop
    on the element's bits (any ``combine``, of any type SPIR-V has atomics
    of); the value it held before."""
    bits = ScalarType("i", dtype.bits)
    bits_pointer = _bits_pointer(b, element, dtype, storage)
    first = b.op(f'spirv.Load "{storage}" {element.name} : {dtype.mlir}', dtype)
    result, expected, seen = b.fresh(), b.fresh(), b.fresh()
    with b.region(f"{result} = scf.while ({expected} = {first.name}) : ({dtype.mlir}) -> "
                  f"({dtype.mlir})", footer="} do {"):
        new_bits = as_bits(b, combine(Value(expected, dtype)), bits)
        expected_bits = as_bits(b, Value(expected, dtype), bits)
        got_bits = b.op(f"spirv.AtomicCompareExchange <{scope}> <None> <None> "
                        f"{bits_pointer.name}, {new_bits.name}, {expected_bits.name} : "
                        f"!spirv.ptr<{bits.mlir}, {storage}>", bits)
        got = from_bits(b, got_bits, dtype)
        # another work-item changed it in between: try again from its value
        retry = b.op(f"arith.cmpi ne, {got_bits.name}, {expected_bits.name} : {bits.mlir}",
                     BOOL)
        b.emit(f"scf.condition({retry.name}) {got.name} : {dtype.mlir}")
    b.emit(f"^bb0({seen}: {dtype.mlir}):")
    b.emit(f"  scf.yield {seen} : {dtype.mlir}")
    b.emit("}")
    return Value(result, dtype)


# the memories a barrier or fence orders
WORKGROUP_MEMORY = "WorkgroupMemory"
GLOBAL_MEMORY = "CrossWorkgroupMemory"


def control_barrier(b: Builder, memories: list[str]) -> None:
    """Wait for the work-group; its accesses to ``memories`` before are
    visible after."""
    b.emit(f"spirv.ControlBarrier <Workgroup>, <Workgroup>, "
           f"<{'|'.join(['AcquireRelease', *memories])}>")


def memory_barrier(b: Builder, scope: str, order: str, memories: list[str]) -> None:
    """Order this work-item's accesses to ``memories`` (``order``:
    ``AcquireRelease``, ``SequentiallyConsistent``) as the work-items of
    ``scope`` (``Workgroup``, ``Device``) see them."""
    b.emit(f"spirv.MemoryBarrier <{scope}>, <{'|'.join([order, *memories])}>")


def group_product(b: Builder, value: Value) -> Value:
    """The product of ``value`` over the work-group, in each work-item."""
    op = "spirv.KHR.GroupFMul" if value.type.is_float else "spirv.KHR.GroupIMul"
    return b.op(f"{op} <Workgroup> <Reduce> {value.name} : {value.type.mlir}", value.type)
