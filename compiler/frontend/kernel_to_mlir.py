"""Translate an explicit kernel (a Python function written per work-item) into
the MLIR of its ``gpu`` stage: one ``gpu.func`` whose body is the function's
Numba IR, by the same statement, expression and call rules as parfor bodies,
and before those the call rules only kernels see (``KERNEL_CALL_RULES``:
work-item functions, local arrays: kernel_intrinsics.py; atomics:
kernel_atomics.py; barriers, fences, collectives: kernel_work_group.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from numba.core import ir, types

from ..dialects import Builder
from ..dialects.builder import located
from ..errors import UnsupportedError
from . import kernel_atomics, kernel_work_group, rules  # noqa: F401  (importing the rules registers them)
from .kernel_api_calls import KernelApiLaunch
from .kernel_intrinsics import KERNEL_CALL_RULES
from .pipeline import type_function
from .translation import (
    ArrayUse,
    CallRule,
    KernelParam,
    Translation,
    bind_param,
    emit_blocks,
    located_lines,
    location_of,
)


@dataclass
class KernelTranslation(Translation):
    body: ClassVar[str] = "a kernel"
    func_ir: ir.FunctionIR | None = None
    ndim: int = 1  # of the range the kernel is launched over

    def rule_for_call(self, key: object) -> CallRule | None:
        """A kernel's own call rules first, then those of parfor bodies."""
        return KERNEL_CALL_RULES.lookup(key) or super().rule_for_call(key)

    def definition(self, var: ir.Var) -> object:
        """What ``var`` is assigned in the kernel, when it is assigned once."""
        try:
            return self.func_ir.get_definition(var)
        except KeyError:  # assigned more than once (or never)
            return None


@dataclass
class KernelModule:
    """A kernel's ``gpu`` stage and what the host passes it."""

    name: str
    mlir: str
    params: tuple[KernelParam, ...]
    arrays: dict[str, ArrayUse]


def type_kernel(py_func, argtypes: tuple[types.Type, ...], fp64: bool = True,
                kernel_api: KernelApiLaunch | None = None) -> tuple[ir.FunctionIR, dict, dict]:
    """Numba's typed IR of ``py_func`` for ``argtypes``, which must return
    nothing; Python floats are float32 unless ``fp64``; ``kernel_api``: how
    ``call_kernel`` launches it, if it does."""
    func_ir, typemap, calltypes, return_type = type_function(py_func, argtypes, fp64,
                                                             kernel_api)
    if return_type != types.none:
        raise UnsupportedError(
            f"{func_ir.loc.filename}:{func_ir.loc.line}: kernel '{py_func.__name__}' returns "
            f"{return_type}; a kernel returns nothing (it writes its array arguments)")
    return func_ir, typemap, calltypes


def translate_kernel(func_ir: ir.FunctionIR, typemap: dict, calltypes: dict, name: str,
                     ndim: int) -> KernelModule:
    """The ``gpu.module`` holding kernel ``name`` for an ``ndim``-D range: a
    gpu.func calling the body, a func.func with one block per Numba IR block."""
    t = KernelTranslation(None, typemap, calltypes, func_ir=func_ir, ndim=ndim)
    location = location_of(func_ir.loc)
    t.b = Builder(depth=3, location=location)
    blocks = {}
    for label, block in func_ir.blocks.items():
        body = ir.Block(block.scope, block.loc)
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Arg):
                bind_param(t, stmt.value.name, stmt.loc)
                t.env[stmt.target.name] = t.env[stmt.value.name]
            else:
                body.append(stmt)
        blocks[label] = body
    emit_blocks(t, blocks, "^exit")
    t.b.emit("^exit:", indent=-1)
    t.b.emit("return")
    signature = ", ".join(f"{ssa}: {param.mlir_type}" for ssa, param in t.args)
    arguments = ", ".join(ssa for ssa, _ in t.args)
    types_ = ", ".join(param.mlir_type for _, param in t.args)
    end = located("}", location)
    # the body is a func.func, which the gpu stage structures (lift-cf-to-scf
    # works on func.func only) and then inlines into the kernel
    text = "\n".join([
        "module attributes {gpu.container_module} {", "  gpu.module @kernels {",
        *located_lines(t.variables, location, "    "),
        f"    func.func private @{name}_body({signature}) {{",
        *located_lines(t.allocas, location, "      "), *t.b.lines, f"    {end}",
        f"    gpu.func @{name}({signature}) kernel attributes "
        "{spirv.entry_point_abi = #spirv.entry_point_abi<>} {",
        *located_lines([f"func.call @{name}_body({arguments}) : ({types_}) -> ()",
                        "gpu.return"], location, "      "),
        f"    {end}", f"  {end}", end, ""])
    return KernelModule(name, text, tuple(p for _, p in t.args), t.arrays)
