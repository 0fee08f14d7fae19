"""``prange`` loops with a step other than 1 (``prange(0, n, 2)``,
``prange(n - 1, -1, -1)``, a step passed as an argument) as unit-step ones.

Numba's parfor pass takes a prange of step 1 only (others raise its
``UnsupportedRewriteError``, under ``parallel=True`` too). Before typing, each
other ``for i in prange(start, stop, step)`` becomes a loop over its trip
count ``k in prange(len(range(start, stop, step)))`` whose index is
``i = start + k * step``: the iterations Python's ``range`` gives, once each.
"""

from __future__ import annotations

import operator

import numba
from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.consts import ConstantInferenceError
from numba.core.extending import register_jitable
from numba.core.ir_utils import get_definition, guard, mk_unique_var


@register_jitable
def range_length(start, stop, step):
    """``len(range(start, stop, step))``."""
    if step == 0:
        raise ValueError("range() arg 3 must not be zero")
    if step > 0:
        return (stop - start - 1) // step + 1 if start < stop else 0
    return (start - stop - 1) // -step + 1 if stop < start else 0


def _constant(func_ir: ir.FunctionIR, var: ir.Var) -> object:
    """The value of ``var`` where it is known when compiling, else None."""
    try:
        return func_ir.infer_constant(var)
    except ConstantInferenceError:
        return None


def _stepped_prange(func_ir: ir.FunctionIR, iterator: ir.Var) -> ir.Expr | None:
    """The ``prange(start, stop, step)`` call ``iterator`` iterates, of a step
    that is not the constant 1, else None."""
    getiter = guard(get_definition, func_ir, iterator)
    if not (isinstance(getiter, ir.Expr) and getiter.op == "getiter"):
        return None
    call = guard(get_definition, func_ir, getiter.value)
    if not (isinstance(call, ir.Expr) and call.op == "call" and len(call.args) == 3
            and not call.kws and _constant(func_ir, call.func) is numba.prange):
        return None
    return None if _constant(func_ir, call.args[2]) == 1 else call


def _assign(block_body: list[ir.Stmt], value: ir.Expr | ir.Var | ir.Global, name: str,
            scope: ir.Scope, loc: ir.Loc, func_ir: ir.FunctionIR) -> ir.Var:
    """A new variable ``name`` holding ``value``, appended to ``block_body``."""
    var = ir.Var(scope, mk_unique_var(name), loc)
    block_body.append(ir.Assign(value, var, loc))
    func_ir._definitions[var.name] = [value]
    return var


def _count_iterations(func_ir: ir.FunctionIR, call: ir.Expr, block: ir.Block
                      ) -> tuple[ir.Var, ir.Var]:
    """Make ``call`` (a statement of ``block``) a ``prange`` over its trip
    count, computed before it; return copies of its start and step (the
    user's variables may be reassigned in the loop)."""
    position = next(k for k, stmt in enumerate(block.body)
                    if isinstance(stmt, ir.Assign) and stmt.value is call)
    scope, loc = block.scope, call.loc
    before: list[ir.Stmt] = []
    start, stop, step = call.args
    start = _assign(before, start, "$prange_start", scope, loc, func_ir)
    step = _assign(before, step, "$prange_step", scope, loc, func_ir)
    length = _assign(before, ir.Global("range_length", range_length, loc), "$range_length",
                     scope, loc, func_ir)
    trips = _assign(before, ir.Expr.call(length, [start, stop, step], (), loc), "$prange_trips",
                    scope, loc, func_ir)
    block.body[position:position] = before
    call.args = [trips]
    return start, step


@register_pass(mutates_CFG=False, analysis_only=False)
class UnitStepPranges(FunctionPass):
    """Every prange of a step other than 1 as a prange over its trip count."""

    _name = "xpuc_unit_step_pranges"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        func_ir = state.func_ir
        headers = []  # the loop header's ``i = pair_first(iternext(iterator))`` of each
        block_of = {}  # the block of each assigned expression
        for block in func_ir.blocks.values():
            for stmt in block.find_insts(ir.Assign):
                block_of[id(stmt.value)] = block
                if isinstance(stmt.value, ir.Expr) and stmt.value.op == "pair_first":
                    advance = guard(get_definition, func_ir, stmt.value.value)
                    if isinstance(advance, ir.Expr) and advance.op == "iternext":
                        call = _stepped_prange(func_ir, advance.value)
                        if call is not None:
                            headers.append((block, stmt, call))
        for block, stmt, call in headers:
            start, step = _count_iterations(func_ir, call, block_of[id(call)])
            index, loc = stmt.target, stmt.loc
            index_of: list[ir.Stmt] = []
            trip = _assign(index_of, stmt.value, "$prange_trip", block.scope, loc, func_ir)
            offset = _assign(index_of, ir.Expr.binop(operator.mul, trip, step, loc),
                             "$prange_offset", block.scope, loc, func_ir)
            value = ir.Expr.binop(operator.add, start, offset, loc)
            index_of.append(ir.Assign(value, index, loc))
            func_ir._definitions[index.name] = [value]
            position = block.body.index(stmt)
            block.body[position:position + 1] = index_of
        return bool(headers)
