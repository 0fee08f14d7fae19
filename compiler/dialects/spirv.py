"""SPIR-V ops the frontend writes itself, in the kernels' gpu stage, where
upstream MLIR has no op of a higher dialect that lowers to them: work-group
(local) arrays as Workgroup variables, and their elements' pointers, loads
and stores. convert-gpu-to-spirv leaves these as they are."""

from __future__ import annotations

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
