"""Array element access in the memref dialect. Every array reaches a kernel as
a flat ``memref<?xT>`` over its data; the element offset is computed here from
the indices and the array's dimensions (C order), so the kernel ABI is one
pointer per array plus index values the host passes."""

from __future__ import annotations

from collections.abc import Sequence

from .arith import binary, cast
from .builder import Builder, Value
from .types import BOOL, ScalarType


def memref_type(dtype: ScalarType) -> str:
    return f"memref<?x{dtype.storage}>"


def linear_index(b: Builder, indices: Sequence[Value], dims: Sequence[Value]) -> Value:
    """Row-major offset of ``indices`` (index values) in an array of shape
    ``dims``: 0, a 0-d array's one element, where there are none."""
    if not indices:
        return b.index_constant(0)
    offset = indices[0]
    for index, dim in zip(indices[1:], dims[1:]):
        offset = binary(b, "arith.addi", binary(b, "arith.muli", offset, dim), index)
    return offset


def strided_offset(b: Builder, indices: Sequence[Value], strides: Sequence[Value]) -> Value:
    """Offset of ``indices`` in a view with these element strides (any sign);
    0 where there are none (a 0-d view)."""
    if not indices:
        return b.index_constant(0)
    offset = binary(b, "arith.muli", indices[0], strides[0])
    for index, stride in zip(indices[1:], strides[1:]):
        offset = binary(b, "arith.addi", offset, binary(b, "arith.muli", index, stride))
    return offset


def load(b: Builder, array: str, dtype: ScalarType, offset: Value,
         array_type: str | None = None) -> Value:
    """``array[offset]``; ``array_type`` when it is not ``memref_type(dtype)``."""
    stored = ScalarType("i", 8) if dtype.kind == "b" else dtype
    value = b.op(f"memref.load {array}[{offset.name}] : {array_type or memref_type(dtype)}",
                 stored)
    return cast(b, value, BOOL) if dtype.kind == "b" else value


def store(b: Builder, value: Value, array: str, dtype: ScalarType, offset: Value,
          array_type: str | None = None) -> None:
    stored = cast(b, value, ScalarType("u", 8)) if dtype.kind == "b" else value
    b.emit(f"memref.store {stored.name}, {array}[{offset.name}] : "
           f"{array_type or memref_type(dtype)}")


__all__ = ["linear_index", "load", "memref_type", "store", "strided_offset"]
