"""A ufunc's output argument, ``np.add(x, y, out=o)`` or ``np.add(x, y, o)``,
as the store it means: ``o[:] = np.add(x, y)``, the call's value ``o``; and
``np.copyto(dst, src)`` as ``dst[:] = src``, which Numba does not compile.

Numba compiles no keyword argument of a ufunc (a bare ``NotImplementedError``)
and the positional output as a host loop, serial, which reads an input that
overlaps the output after writing it (``np.add(a[1:], a[:-1], a[1:])``) and
cannot reach a ``usm_type="device"`` array. As a store of an array expression
it offloads as slice assignments do, an input that shares the output's memory
copied first where it does (shared_operands.py), as NumPy copies it. Other
keyword arguments (``where=``, ``dtype=``, ``casting=``) are refused naming
the line.
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
    o[:] = $v; r = o``, and ``np.copyto(dst, src)`` as ``dst[:] = src``
    (before typing)."""

    _name = "xpuc_ufunc_output_arguments"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        func_ir = state.func_ir
        rewritten_calls = []
        for block in func_ir.blocks.values():
            new_body = []
            for stmt in block.body:
                rewritten = _as_store(func_ir, stmt)
                if rewritten is not None:
                    rewritten_calls.append(stmt.value)
                new_body.extend(rewritten or [stmt])
            block.body = new_body
        if not rewritten_calls:
            return False
        # Numba cannot type np.copyto itself, which nothing calls now
        copyto = {call.func.name for call in rewritten_calls
                  if _callee(func_ir, call) is np.copyto}
        for block in func_ir.blocks.values():
            block.body = [stmt for stmt in block.body
                          if not (isinstance(stmt, ir.Assign) and stmt.target.name in copyto)]
        func_ir._definitions = build_definitions(func_ir.blocks)
        return True


def _callee(func_ir: ir.FunctionIR, expr: ir.Expr) -> object:
    """The global function ``expr`` calls, else None."""
    try:
        return func_ir.infer_constant(expr.func)
    except ConstantInferenceError:
        return None


def _refuse_keywords(loc: ir.Loc, name: str, keywords: dict, allowed: str) -> None:
    if keywords:
        given = ", ".join(f"{keyword}=" for keyword in sorted(keywords))
        raise UnsupportedError(
            f"{loc.filename}:{loc.line}: np.{name}(..., {given}) is not supported: {allowed}")


def _as_store(func_ir: ir.FunctionIR, stmt: ir.Stmt) -> list[ir.Stmt] | None:
    """The statements of the store ``stmt`` means where it calls a ufunc with
    its output given or ``np.copyto``; None for any other statement."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
            and stmt.value.op == "call") or stmt.value.vararg:
        return None
    call, loc, scope = stmt.value, stmt.loc, stmt.target.scope

    def new_var(prefix: str) -> ir.Var:
        return ir.Var(scope, mk_unique_var(prefix), loc)

    callee, keywords = _callee(func_ir, call), dict(call.kws)
    if callee is np.copyto and len(call.args) == 2:
        _refuse_keywords(loc, "copyto", keywords, "xpuc compiles np.copyto(dst, src)")
        out, value = call.args
        computing, result = [], ir.Const(None, loc)
    elif isinstance(callee, np.ufunc) and callee.nout == 1:
        out = keywords.pop("out", None)
        _refuse_keywords(loc, callee.__name__, keywords,
                         "of a ufunc's keyword arguments, xpuc compiles out= alone")
        args = list(call.args)
        if out is None and len(args) == callee.nin + 1:
            out = args.pop()
        if out is None or len(args) != callee.nin:
            return None
        bound = guard(get_definition, func_ir, out)
        if isinstance(bound, ir.Expr) and bound.op == "build_tuple" and len(bound.items) == 1:
            out = bound.items[0]  # out=(o,), NumPy's tuple of outputs
        value = new_var("$ufunc_value")
        computing, result = [ir.Assign(ir.Expr.call(call.func, args, (), loc), value, loc)], out
    else:
        return None
    none, slice_fn, whole = new_var("$none"), new_var("$slice_fn"), new_var("$whole")
    return [*computing,
            ir.Assign(ir.Const(None, loc), none, loc),
            ir.Assign(ir.Global("slice", slice, loc), slice_fn, loc),
            ir.Assign(ir.Expr.call(slice_fn, (none, none), (), loc), whole, loc),
            ir.SetItem(out, whole, value, loc),
            ir.Assign(result, stmt.target, loc)]
