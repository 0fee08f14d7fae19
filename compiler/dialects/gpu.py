"""The gpu dialect ops the frontend writes itself: ``gpu.printf``, which
convert-gpu-to-spirv lowers to OpenCL's printf (its format a constant
string of the SPIR-V module), and work-group reductions."""

from __future__ import annotations

from .builder import Builder, Value
from .literals import string_literal


def printf(b: Builder, format: str, values: list[Value]) -> None:
    """Emit ``printf(format, values...)`` on the device."""
    operands = "".join(f", {v.name}" for v in values)
    types = ", ".join(v.type.mlir for v in values)
    b.emit(f"gpu.printf {string_literal(format)}{operands}" + (f" : {types}" if values else ""))


def all_reduce(b: Builder, operation: str, value: Value) -> Value:
    """``operation`` (``add``, ``minnumf``, ...) of ``value`` over the
    work-group, reached by all its work-items, in each."""
    return b.op(f"gpu.all_reduce {operation} {value.name} uniform {{}} : "
                f"({value.type.mlir}) -> ({value.type.mlir})", value.type)
