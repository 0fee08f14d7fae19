"""Stores of array expressions that read the memory they write, made right:
``a[1:] += a[:-1]``, ``m += m.T``, ``m -= m[0]``, ``m[:] = m.T * m``.

An in-place operator becomes ``a[:] = a op b`` (``inplace_operators.py``),
and Numba's parfor pass fuses an array expression with the slice assignment
it feeds into one loop, which reads each operand's element where it writes
the target's. Where an operand shares the target's memory at other elements
(a shifted view, a transpose, a row broadcast over its own matrix), the loop
reads elements it has already written: a wrong answer, on the host (the cost
model) and in a kernel alike, and under Numba's ``parallel=True`` too. NumPy
reads every operand as if before any element is written (it copies an
operand that overlaps the output).

Before such a store, each array the fused loop would read that the function
did not compute (an argument, a view, a name bound to one) is compared with
the target at run time (addresses, shapes and strides only, host code) and
copied first where its bytes meet the target's and it is not the target's
own elements: the bytes its elements span are copied (``usm.span_copy``), by
the runtime on the call's queue for a USM array (a CUDA array too), by one
``memcpy`` on the host for a NumPy array; no kernel is compiled for a copy
most calls never make.
An operand the function computes (``b * 2``, ``np.sin(b)``) and the target read at the
element it writes (``a`` in ``a[:] = a + b``) need no check: those stores
stay one loop, as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.extending import register_jitable
from numba.core.inline_closurecall import inline_closure_call
from numba.core.ir_utils import get_definition, guard, mk_unique_var

from ..errors import UnsupportedError
from .inplace_operators import copied_by_indexing
from .slice_assignments import (
    GLOBALS,
    computed_here,
    is_ufunc_call,
    rewrite_host_stores,
    same_elements,
    spans_meet,
)
from .usm import span_copy


@register_jitable
def reads_other_elements(address, shape, strides, itemsize, other, other_shape, other_strides,
                         other_itemsize) -> bool:
    """Whether a loop writing one array while it reads another at the same
    index may read an element it has written: their bytes meet, and they are
    not the very same elements (same place, shape, strides). Host code reads
    only where the arrays are and their shapes, never an element."""
    return spans_meet(address, shape, strides, itemsize,
                      other, other_shape, other_strides, other_itemsize) and \
        not same_elements(address, shape, strides, itemsize,
                          other, other_shape, other_strides, other_itemsize)


# its IR is inlined before each store's loop: a copy of the operand's byte
# span (``span_copy``: the runtime's device to device for a USM array, one
# ``memcpy`` on the host for NumPy's), no kernel compiled for a copy most calls
# never make
def _staged_operand(target, operand):
    """``operand``, or its copy where a loop writing ``target`` would read
    elements it has written."""
    if reads_other_elements(target.ctypes.data, target.shape, target.strides, target.itemsize,
                            operand.ctypes.data, operand.shape, operand.strides,
                            operand.itemsize):
        return span_copy(operand)
    return operand


_GLOBALS = {**GLOBALS, "reads_other_elements": reads_other_elements}


@register_pass(mutates_CFG=True, analysis_only=False)
class StageSharedOperands(FunctionPass):
    """Copy first, where they share its memory, the arrays read by the array
    expression each host ``a[index] = expression`` stores."""

    _name = "xpuc_stage_shared_operands"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        # a split moves the store to a new block, visited again: each once
        done: dict[int, ir.Stmt] = {}  # the stmt kept, so that its id stays its own

        def stage_once(state, block: ir.Block, i: int, stmt: ir.SetItem | ir.StaticSetItem,
                       work_list: list) -> bool:
            if id(stmt) in done:
                return False
            done[id(stmt)] = stmt
            if _is_masked_store(state, stmt):
                return _stage_masked_operands(state, block, i, stmt, work_list)
            return _stage_operands(state, block, i, stmt, work_list)

        return rewrite_host_stores(state, stage_once)


def _is_elementwise(state, stmt: ir.Stmt) -> bool:
    """Whether ``stmt`` makes an array element by element from its operands:
    what Numba's array-expression rewrite fuses into the loop of the store it
    feeds (``b * 2``, ``-b``, ``np.sin(b)``)."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
            and isinstance(state.typemap.get(stmt.target.name), types.Array)):
        return False
    return stmt.value.op in ("binop", "unary") or is_ufunc_call(state, stmt.value)


def _operands(expr: ir.Expr) -> list[ir.Var]:
    if expr.op == "binop":
        return [expr.lhs, expr.rhs]
    if expr.op == "unary":
        return [expr.value]
    return list(expr.args)


def _stage_operands(state, block: ir.Block, i: int, stmt: ir.SetItem | ir.StaticSetItem,
                    work_list: list) -> bool:
    """Before the statements of ``block`` that compute the array expression
    ``stmt`` (at ``block.body[i]``) stores, copy each array they read that may
    share the target's memory, where it does; whether anything was."""
    typemap = state.typemap
    if not (isinstance(typemap[stmt.target.name], types.Array)
            and isinstance(typemap[stmt.value.name], types.Array)
            and computed_here(state, stmt.value)):
        return False
    defined_at = {s.target.name: k for k, s in enumerate(block.body[:i])
                  if isinstance(s, ir.Assign)}
    # the statements the store's loop fuses: the value's, and those of the
    # arrays they read that are made element-wise in this block
    fused, pending = [], [stmt.value]
    while pending:
        var = pending.pop()
        k = defined_at.get(var.name)
        if k is not None and k not in fused and _is_elementwise(state, block.body[k]):
            fused.append(k)
            pending.extend(_operands(block.body[k].value))
    if not fused:
        return False
    fused.sort()
    read_in_place = whole_view(state, stmt)

    def checked(start: int) -> list[ir.Var] | None:
        """The arrays the loop reads that need a check when the copies go
        before ``block.body[start]`` (the statements fused from there on);
        None where one of them (or the target) is made after it."""
        made_from = {block.body[k].target.name for k in fused if k >= start}
        reads = []
        for k in fused:
            if k < start:
                continue
            for var in _operands(block.body[k].value):
                if var.name in made_from or var.name in {r.name for r in reads} or \
                        not isinstance(typemap[var.name], types.Array) or \
                        typemap[var.name].ndim == 0 or var.name == read_in_place or \
                        computed_here(state, var):
                    continue
                reads.append(var)
        needed = [*reads, stmt.target]
        if any(defined_at.get(var.name, -1) >= start for var in needed):
            return None
        return reads

    for start in fused:
        reads = checked(start)
        if reads is not None:
            break
    else:
        # the target is made after its value (``m.T[:] = m + 1``): the value is
        # computed whole first, where the copy would go
        start, reads = i, [stmt.value]
    if not reads:
        return False
    _insert_staging(state, block, start, stmt.target, reads,
                    [block.body[k] for k in fused if k >= start], work_list)
    return True


def _is_masked_store(state, stmt: ir.SetItem | ir.StaticSetItem) -> bool:
    """Whether ``stmt`` is ``a[m] = v`` with ``m`` a mask of ``a``'s rank,
    which Numba's parfor pass makes a loop storing ``v[i]`` (or a scalar) at
    each ``i`` where ``m[i]``."""
    if not isinstance(stmt, ir.SetItem):
        return False
    target, index = state.typemap[stmt.target.name], state.typemap[stmt.index.name]
    return isinstance(index, types.Array) and isinstance(index.dtype, types.Boolean) and \
        index.ndim == target.ndim


def _stage_masked_operands(state, block: ir.Block, i: int, stmt: ir.SetItem,
                           work_list: list) -> bool:
    """Before the masked store ``a[m] = v[m]`` (or ``a[m] = scalar``) at
    ``block.body[i]``, copy ``m`` and ``v`` where they share ``a``'s memory
    at other elements: NumPy reads ``v[m]`` (a copy) and ``m`` whole before
    it stores; the loop reads each at the element it writes. Whether anything
    was staged."""
    reads, start = [], i
    if not computed_here(state, stmt.index):
        reads.append(stmt.index)
    value = guard(get_definition, state.func_ir, stmt.value)
    value_at = next((k for k, s in enumerate(block.body[:i])
                     if isinstance(s, ir.Assign) and s.value is value), None)
    read_value = isinstance(value, ir.Expr) and value.op == "getitem" and \
        value.index.name == stmt.index.name and value_at is not None
    defined_at = {s.target.name: k for k, s in enumerate(block.body[:i])
                  if isinstance(s, ir.Assign)}
    if read_value:
        if not computed_here(state, value.value):
            reads.append(value.value)
        if defined_at.get(stmt.target.name, -1) > value_at:
            # Python makes the target (``t.T`` in ``t.T[m] = v[m]``) after the
            # value, which the store's loop reads: ``v[m]`` moves to the
            # store, past the views and slices that make the target
            if not all(_makes_a_view(state, s) for s in block.body[value_at + 1:i]):
                raise UnsupportedError(
                    f"{stmt.loc.filename}:{stmt.loc.line}: a masked store whose target is "
                    "made by more than views of arrays after its value is not supported")
            block.body.insert(i - 1, block.body.pop(value_at))
            value_at = i - 1
        start = value_at
    if not reads or any(defined_at.get(var.name, -1) >= start for var in reads):
        return False
    staged = stage_operands(state, block, start, stmt.target, reads, work_list)
    stmt.index = staged.get(stmt.index.name, stmt.index)
    if read_value:
        value.value = staged.get(value.value.name, value.value)
        value.index = stmt.index  # the parfor pass needs the store's own mask here
    return True


def _makes_a_view(state, stmt: ir.Stmt) -> bool:
    """Whether ``stmt`` reads and writes no element: a view (``a[1:]``,
    ``a.T``), a slice, a tuple, a constant or a copy of a name."""
    if not isinstance(stmt, ir.Assign):
        return False
    value = stmt.value
    if isinstance(value, (ir.Const, ir.Global, ir.FreeVar, ir.Var)):
        return True
    if not isinstance(value, ir.Expr):
        return False
    if value.op in ("getitem", "static_getitem"):
        return not copied_by_indexing(state, stmt.target)
    if value.op == "call":
        return getattr(state.typemap.get(value.func.name), "typing_key", None) is slice
    return value.op in ("getattr", "build_tuple")


def stage_operands(state, block: ir.Block, start: int, target: ir.Var,
                   reads: list[ir.Var], work_list: list) -> dict[str, ir.Var]:
    """Insert at ``block.body[start]``, for each of ``reads``, a call making
    it or its copy where it shares ``target``'s memory at other elements,
    inlined; the variables holding them, by the names of ``reads``."""
    typemap, scope = state.typemap, block.scope
    calls, staged_names = [], {}
    for var in reads:
        loc = var.loc
        staged = ir.Var(scope, mk_unique_var("$staged_operand"), loc)
        callee = ir.Var(scope, mk_unique_var("$stage_operand"), loc)
        typemap[callee.name] = types.none  # never read: the call is inlined at once
        call = ir.Assign(ir.Expr.call(callee, (target, var), (), loc), staged, loc)
        calls.append((ir.Assign(ir.Const(None, loc), callee, loc), call, var))
        staged_names[var.name] = staged
    block.body[start:start] = [s for callee, call, _ in calls for s in (callee, call)]
    for _, call, var in calls:
        # each inlining splits the block holding the next call
        holder = next(b for b in state.func_ir.blocks.values()
                      if any(s is call for s in b.body))
        at = next(k for k, s in enumerate(holder.body) if s is call)
        callee_blocks, _ = inline_closure_call(
            state.func_ir, _GLOBALS, holder, at,
            _staged_operand,
            state.typingctx, state.targetctx, (typemap[target.name], typemap[var.name]),
            typemap, state.calltypes, work_list)
        # the operand or its copy, typed as the inlined function returns them
        typemap[call.target.name] = next(
            typemap[s.value.name] for b in callee_blocks.values()
            for s in b.find_insts(ir.Assign) if s.target.name == call.target.name)
    return staged_names


def _insert_staging(state, block: ir.Block, start: int, target: ir.Var,
                    reads: list[ir.Var], fused: list[ir.Stmt], work_list: list) -> None:
    """Stage ``reads`` at ``block.body[start]`` and have the statements
    ``fused`` read what was staged instead."""
    staged_names = stage_operands(state, block, start, target, reads, work_list)
    for fused_stmt in fused:
        expr = fused_stmt.value
        if expr.op == "binop":
            expr.lhs = staged_names.get(expr.lhs.name, expr.lhs)
            expr.rhs = staged_names.get(expr.rhs.name, expr.rhs)
        elif expr.op == "unary":
            expr.value = staged_names.get(expr.value.name, expr.value)
        else:
            expr.args = [staged_names.get(a.name, a) for a in expr.args]


def whole_view(state, stmt: ir.SetItem | ir.StaticSetItem) -> str | None:
    """The name of ``stmt``'s target where ``stmt`` stores into all of it
    (``a[:] = ...``, ``m[:, :] = ...``): read there, the target gives the
    element being written."""
    whole = is_whole_index(stmt.index, definitions_in(state.func_ir), state.typemap)
    return stmt.target.name if whole else None


def definitions_in(func_ir: ir.FunctionIR) -> Callable[[ir.Var | str], object]:
    """What a variable of ``func_ir`` is assigned, or None where it is not
    assigned once."""
    return functools.partial(guard, get_definition, func_ir)


def is_whole_index(index: object, definition: Callable[[ir.Var], object],
                   typemap: dict) -> bool:
    """Whether ``index`` (a variable, or a static index: a slice or a tuple)
    is made of ``:`` alone, ``definition`` giving what a variable is assigned
    (None where that is not known)."""
    if not isinstance(index, ir.Var):
        items = index if isinstance(index, tuple) else (index,)
        return all(item == slice(None) for item in items)
    made = definition(index)
    items = made.items if isinstance(made, ir.Expr) and made.op == "build_tuple" else [index]
    return all(_is_colon(item, definition, typemap) for item in items)


def _is_colon(var: ir.Var, definition: Callable[[ir.Var], object], typemap: dict) -> bool:
    """Whether ``var`` is ``slice(None, None)``: ``:``."""
    made = definition(var)
    return isinstance(made, ir.Expr) and made.op == "call" and \
        getattr(typemap.get(made.func.name), "typing_key", None) is slice and \
        all(isinstance(bound := definition(arg), ir.Const) and bound.value is None
            for arg in made.args)
