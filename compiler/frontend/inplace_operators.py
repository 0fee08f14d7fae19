"""In-place operators on whole arrays in host code (``a *= s``,
``data -= mean``), rewritten as the slice assignment they mean
(``a[:] = a * s``) so that the parfor pass offloads them.

Numba's parfor pass turns ``a op= b`` into a parfor only when ``b`` is an
array of ``a``'s shape: a scalar ``b`` stays host code, and a ``b`` that
broadcasts (a row over a 2-D array) makes a loop that indexes ``b`` with
``a``'s indices, which fails to type. ``a[:] = a op b`` is an array
expression and a slice assignment, which broadcast as NumPy does and both
become parfors. The right-hand side is computed whole before ``a`` is
written, so an operand that overlaps ``a`` reads its old values, as in NumPy.

In-place operators inside a ``prange`` body are left alone: there
``acc += row`` on an array made outside the loop is a reduction, which the
parfor pass recognises by its ``inplace_binop``.
"""

from __future__ import annotations

import operator

from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import build_definitions, get_definition, guard, mk_unique_var
from numba.misc.special import pndindex, prange

_PARALLEL_RANGES = (prange, pndindex)


def _calls_parallel_range(block: ir.Block, typemap: dict) -> bool:
    """Whether ``block`` calls ``prange`` or ``pndindex`` (a prange loop's
    entry block makes its iterator)."""
    return any(isinstance(stmt.value, ir.Expr) and stmt.value.op == "call"
               and getattr(typemap.get(stmt.value.func.name), "typing_key", None)
               in _PARALLEL_RANGES for stmt in block.find_insts(ir.Assign))


def prange_body_labels(func_ir: ir.FunctionIR, typemap: dict) -> set[int]:
    """The labels of the blocks inside some prange loop."""
    labels: set[int] = set()
    for loop in compute_cfg_from_blocks(func_ir.blocks).loops().values():
        if any(_calls_parallel_range(func_ir.blocks[entry], typemap) for entry in loop.entries):
            labels |= loop.body
    return labels


@register_pass(mutates_CFG=False, analysis_only=False)
class InplaceArrayOperators(FunctionPass):
    """Rewrite each host ``x = inplace_binop(a, b)`` with an array ``a`` as
    ``$t = a op b; a[:] = $t; x = a``."""

    _name = "xpuc_inplace_array_operators"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        in_prange = prange_body_labels(state.func_ir, state.typemap)
        updated_views = {}  # the result of each rewritten operator: its array
        for label, block in state.func_ir.blocks.items():
            if label in in_prange:
                continue
            new_body = []
            for stmt in block.body:
                if _stores_view_into_itself(state, stmt, updated_views):
                    continue
                rewritten = _as_slice_assignment(state, stmt)
                if rewritten:
                    updated_views[stmt.target.name] = stmt.value.lhs
                new_body.extend(rewritten or [stmt])
            block.body = new_body
        if updated_views:
            state.func_ir._definitions = build_definitions(state.func_ir.blocks)
        return bool(updated_views)


def _stores_view_into_itself(state, stmt: ir.Stmt, updated_views: dict[str, ir.Var]) -> bool:
    """Whether ``stmt`` is the store that ends ``a[i] op= b``: Python's
    ``a[i] = a[i].__iop__(b)``, which for an array ``a[i]`` (a view, updated
    in place) writes the view's elements over themselves. Left in, it would be
    host code copying a row. Through an index array or a mask (``a[idx] +=
    1``) ``a[i]`` is a copy, and the store is the update."""
    if not isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) or \
            stmt.value.name not in updated_views:
        return False
    return stores_where_read(stmt, guard(get_definition, state.func_ir,
                                         updated_views[stmt.value.name]), state.typemap)


def stores_where_read(stmt: ir.SetItem | ir.StaticSetItem, view: object, typemap: dict) -> bool:
    """Whether ``stmt`` stores into the array and at the index that ``view``,
    a definition (``a[i]``), reads, and that index makes a view (not an
    index array or a mask, whose ``a[idx]`` is a copy)."""
    if not (isinstance(view, ir.Expr) and view.op in ("getitem", "static_getitem")
            and view.value.name == stmt.target.name):
        return False
    if view.op == "static_getitem":
        return isinstance(stmt, ir.StaticSetItem) and view.index == stmt.index
    return isinstance(stmt, ir.SetItem) and view.index.name == stmt.index.name and \
        is_basic_index(typemap[view.index.name])


def is_basic_index(index_type: types.Type) -> bool:
    """Whether indexing with ``index_type`` gives a view (slices, integers):
    an index array or a mask gives a copy."""
    indices = index_type.types if isinstance(index_type, types.BaseTuple) else (index_type,)
    return all(isinstance(i, (types.Integer, types.SliceType, types.EllipsisType, types.NoneType))
               for i in indices)


def copied_by_indexing(state, var: ir.Var) -> bool:
    """Whether ``var`` is an array indexed with an index array or a mask
    (``a[idx]``, ``a[a > 0]``): a new array."""
    definition = guard(get_definition, state.func_ir, var)
    return isinstance(definition, ir.Expr) and definition.op == "getitem" and \
        not is_basic_index(state.typemap[definition.index.name])


def _as_slice_assignment(state, stmt: ir.Stmt) -> list[ir.Stmt] | None:
    """The statements of ``a[:] = a op b; x = a`` for ``stmt``, an in-place
    operator on an array ``a`` (``x = a op b`` where ``a`` is a copy made by
    indexing); None for any other statement."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
            and stmt.value.op == "inplace_binop"):
        return None
    expr, typemap, typingctx = stmt.value, state.typemap, state.typingctx
    array_type = typemap[expr.lhs.name]
    if (not isinstance(array_type, types.Array) or array_type.ndim == 0
            or typemap[stmt.target.name] != array_type):
        return None
    scope, loc = stmt.target.scope, stmt.loc

    def new_var(prefix: str, var_type: types.Type) -> ir.Var:
        var = ir.Var(scope, mk_unique_var(prefix), loc)
        typemap[var.name] = var_type
        return var

    result_signature = typingctx.resolve_function_type(
        expr.immutable_fn, (array_type, typemap[expr.rhs.name]), {})
    result = new_var("$inplace_result", result_signature.return_type)
    binop = ir.Expr.binop(expr.immutable_fn, expr.lhs, expr.rhs, loc)
    state.calltypes[binop] = result_signature
    if copied_by_indexing(state, expr.lhs):
        # ``a[idx] op= b``: the copy's update is ``a[idx] op b``, which the
        # store after it writes into ``a``
        if result_signature.return_type != array_type:
            return None
        return [ir.Assign(binop, stmt.target, loc)]

    # one slice per dimension, as the parfor pass makes a parfor of a slice
    # assignment only when it sets every dimension
    making_index, index = slices_of_every_dimension(state, [], array_type.ndim, scope, loc)
    store = ir.SetItem(expr.lhs, index, result, loc)
    state.calltypes[store] = typingctx.resolve_function_type(
        operator.setitem, (array_type, typemap[index.name], result_signature.return_type), {})
    return [ir.Assign(binop, result, loc), *making_index, store,
            ir.Assign(expr.lhs, stmt.target, loc)]


def slices_of_every_dimension(state, slices: list[ir.Var], ndim: int, scope: ir.Scope,
                              loc: ir.Loc) -> tuple[list[ir.Stmt], ir.Var]:
    """The statements that make an index of ``ndim`` slices, ``slices``
    followed by ``:`` for each dimension they leave out (the slice alone for
    one), and its variable."""
    typemap, typingctx = state.typemap, state.typingctx

    def new_var(prefix: str, var_type: types.Type) -> ir.Var:
        var = ir.Var(scope, mk_unique_var(prefix), loc)
        typemap[var.name] = var_type
        return var

    none = new_var("$none", types.none)
    slice_type = typingctx.resolve_value_type(slice)
    slice_fn = new_var("$slice_fn", slice_type)
    whole = new_var("$whole", types.slice2_type)
    slice_call = ir.Expr.call(slice_fn, (none, none), (), loc)
    state.calltypes[slice_call] = typingctx.resolve_function_type(
        slice_type, (types.none, types.none), {})
    items = [*slices, *[whole] * (ndim - len(slices))]
    making = [ir.Assign(ir.Const(None, loc), none, loc),
              ir.Assign(ir.Global("slice", slice, loc), slice_fn, loc),
              ir.Assign(slice_call, whole, loc)]
    if len(items) == 1:
        # a slice, not a 1-tuple of it: Numba's array analysis puts the slice
        # it bounds in the tuple's place in a parfor's load of the view, which
        # then fails to lower (where the store follows a branch)
        return making, items[0]
    index = new_var("$index", types.BaseTuple.from_types([typemap[v.name] for v in items]))
    return [*making, ir.Assign(ir.Expr.build_tuple(items, loc), index, loc)], index
