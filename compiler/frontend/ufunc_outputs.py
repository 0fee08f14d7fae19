"""A ufunc's output argument, ``np.add(x, y, out=o)`` or ``np.add(x, y, o)``,
as the store it means: ``o[:] = np.add(x, y)``, the call's value ``o``.

Numba compiles no keyword argument of a ufunc (a bare ``NotImplementedError``)
and the positional output as a host loop, serial, which reads an input that
overlaps the output after writing it (``np.add(a[1:], a[:-1], a[1:])``) and
cannot reach a ``usm_type="device"`` array. As a store of an array expression
it offloads as slice assignments do, an input that shares the output's memory
copied first where it does (shared_operands.py), as NumPy copies it. Other
keyword arguments (``where=``, ``dtype=``) are refused naming the line.
"""

from __future__ import annotations

import numpy as np
from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.consts import ConstantInferenceError
from numba.core.ir_utils import build_definitions, get_definition, guard, mk_unique_var

from ..errors import UnsupportedError


@register_pass(mutates_CFG=False, analysis_only=False)
class UfuncOutputArguments(FunctionPass):
    """Rewrite each ``r = ufunc(inputs..., out=o)`` as ``$v = ufunc(inputs...);
    o[:] = $v; r = o`` (before typing)."""

    _name = "xpuc_ufunc_output_arguments"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        changed = False
        for block in state.func_ir.blocks.values():
            new_body = []
            for stmt in block.body:
                rewritten = _as_store(state.func_ir, stmt)
                changed |= rewritten is not None
                new_body.extend(rewritten or [stmt])
            block.body = new_body
        if changed:
            state.func_ir._definitions = build_definitions(state.func_ir.blocks)
        return changed


def _called_ufunc(func_ir: ir.FunctionIR, expr: ir.Expr) -> np.ufunc | None:
    try:
        callee = func_ir.infer_constant(expr.func)
    except ConstantInferenceError:
        return None
    return callee if isinstance(callee, np.ufunc) else None


def _as_store(func_ir: ir.FunctionIR, stmt: ir.Stmt) -> list[ir.Stmt] | None:
    """The statements of the store ``stmt`` means where it calls a ufunc with
    its output given; None for any other statement."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
            and stmt.value.op == "call"):
        return None
    call, loc = stmt.value, stmt.loc
    ufunc = _called_ufunc(func_ir, call)
    if ufunc is None or ufunc.nout != 1:
        return None
    keywords = dict(call.kws)
    out = keywords.pop("out", None)
    if keywords:
        given = ", ".join(f"{name}=" for name in sorted(keywords))
        raise UnsupportedError(
            f"{loc.filename}:{loc.line}: np.{ufunc.__name__}(..., {given}) is not supported: "
            f"of a ufunc's keyword arguments, xpuc compiles out= alone")
    args = list(call.args)
    if out is None and len(args) == ufunc.nin + 1:
        out = args.pop()
    if out is None or len(args) != ufunc.nin or call.vararg:
        return None
    bound = guard(get_definition, func_ir, out)
    if isinstance(bound, ir.Expr) and bound.op == "build_tuple" and len(bound.items) == 1:
        out = bound.items[0]  # out=(o,), NumPy's tuple of outputs

    scope = stmt.target.scope

    def new_var(prefix: str) -> ir.Var:
        return ir.Var(scope, mk_unique_var(prefix), loc)

    value, none, slice_fn, whole = (new_var("$ufunc_value"), new_var("$none"),
                                    new_var("$slice_fn"), new_var("$whole"))
    return [ir.Assign(ir.Expr.call(call.func, args, (), loc), value, loc),
            ir.Assign(ir.Const(None, loc), none, loc),
            ir.Assign(ir.Global("slice", slice, loc), slice_fn, loc),
            ir.Assign(ir.Expr.call(slice_fn, (none, none), (), loc), whole, loc),
            ir.SetItem(out, whole, value, loc),
            ir.Assign(out, stmt.target, loc)]
