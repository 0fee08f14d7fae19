"""A slice assignment of an array expression as one loop: ``other[1:-1, 1:-1]
= 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1] + ...)`` computes each element
and stores it into the view's, with no temporary.

Numba's parfor pass makes two parfors of such a store (the expression into a
new array, then that array into the view) and fuses them only where its array
analysis finds their extents equal. It finds them so while it checks the
store's sizes (the slices' relative sizes, ``n - 2`` both), but the fusion's
second analysis no longer sees the store's slice, which became the parfor:
Jacobi's step stayed two kernels, twice the bytes. And where it does fuse, it
does not ask whether the view shares memory with an array the expression
reads at other elements: ``f(a, a)`` of a stencil stored into its own
argument read elements it had written. NumPy evaluates the right side first.

So, before the parfor pass, ``target[index] = <expression>`` becomes::

    view = target[index]
    <each array read that may share the view's memory at other elements,
     copied first where it does: shared_operands.stage_operands>
    <each array read has the view's extents, else ValueError>
    for index in pndindex(view.shape):               # one parfor
        view[index] = <the expression of the elements at index>

where an array of lower rank is read at the view's last indices, as NumPy
aligns it. (Through an integer index, ``m[2, 1:4] = v * 2``, Numba's store
broadcasts a value of one element: there other extents make the value whole
first, then broadcast it.) An array an expression of the function made shares
no memory with an argument or with another such array, and two names a loop
swaps (Jacobi's ``grid, other = other, grid``) stay apart where they enter
the loop apart (``distinct_arrays``): those are never checked, nor the view's
own elements (``a[:] = a * 2``).
"""

from __future__ import annotations

import functools
import operator

import numpy as np
from numba.core import ir, types, utils
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.extending import register_jitable
from numba.core.inline_closurecall import inline_closure_call
from numba.core.ir_utils import get_definition, guard, mk_unique_var
from numba.core.typing import npydecl

from .shared_operands import stage_operands, whole_view
from .slice_assignments import (
    GLOBALS,
    STEP,
    STORE,
    assigned_view_ndim,
    indented,
    parallel_loop,
    rewrite_host_stores,
)
from .usm import empty_usm

# the operators Numba's array expressions compute element by element, as Python writes them
_BINARY = {op: symbol for symbol, op in utils.BINOPS_TO_OPERATORS.items()
           if op in npydecl.supported_array_operators}
_UNARY = {op: symbol for symbol, op in utils.UNARY_BUITINS_TO_OPERATORS.items()
          if op in npydecl.supported_array_operators}

_FUSED_STORE = '''
def fused_store(view, {leaves}):
    shape = view.shape
{checks}
{store}
'''
_CHECK = '''
    check_extent({length}, {extent})'''
_FUSED_LOOP = '''
    numba.parfors.parfor.init_prange()
    for index in {loop}:
        view[index] = {element}'''
# Where the store broadcasts and an array read has other extents: the value
# whole first, then stored, read at its indices times 0 or 1.
_STAGED = '''
    if {fits}:{fused_loop}
    else:
        value = {whole}{steps}{store}'''


@register_jitable
def check_extent(length: int, extent: int) -> None:
    if length != extent:
        raise ValueError("could not broadcast an operand of the array expression into the "
                         "shape of the slice it is assigned to")


_GLOBALS = {**GLOBALS, "check_extent": check_extent}


# An expression tree: a leaf's position among the function's arguments, or
# (operator or ufunc, operands).
Tree = int | tuple


def _render(tree: Tree, leaf: list[str], ufuncs: dict) -> str:
    """``tree`` as Python, each leaf written as ``leaf`` says. As Numba's
    array expressions compute it: ``/`` as ``np.divide`` (infinities, not
    ZeroDivisionError), the other operators as themselves."""
    if isinstance(tree, int):
        return leaf[tree]
    op, operands = tree
    args = [_render(operand, leaf, ufuncs) for operand in operands]
    if op is operator.truediv:
        return f"np.divide({args[0]}, {args[1]})"
    if isinstance(op, np.ufunc):
        name = ufuncs.setdefault(op, f"ufunc{len(ufuncs)}")
        return f"{name}({', '.join(args)})"
    if len(args) == 1:
        return f"({_UNARY[op]}{args[0]})"
    return f"({args[0]} {_BINARY[op]} {args[1]})"


@functools.cache
def _fused_store(view_ndim: int, ranks: tuple, tree: Tree, broadcasts: bool,
                 dtype: types.Type):
    """The function storing ``tree`` of leaves of ``ranks`` (None: a scalar)
    into a view of ``view_ndim`` dimensions as one loop, each element made
    the expression's ``dtype`` first, as Numba's array expression makes it
    (``int8 * int8`` is computed on int64 scalars, then wraps to int8, before
    a store into an int64 view). Leaves of other extents than the view's
    raise ``ValueError`` (as Numba's slice assignments of slices alone
    require), or where the store ``broadcasts`` (an integer in its index)
    make the value whole, then broadcast it."""
    loop, at = parallel_loop(view_ndim, "shape")
    names = [f"x{k}" for k in range(len(ranks))]
    elements, extents = [], []
    for name, rank in zip(names, ranks):
        if rank is None:
            elements.append(name)
            continue
        offset = view_ndim - rank
        elements.append(f"{name}[index]" if rank == view_ndim else
                        f"{name}[{', '.join(at.format(d + offset) for d in range(rank))}]")
        extents += [(f"{name}.shape[{d}]", f"shape[{d + offset}]") for d in range(rank)]
    ufuncs: dict = {}
    fused_loop = _FUSED_LOOP.format(
        loop=loop, element=f"expression_dtype({_render(tree, elements, ufuncs)})")
    checks = ""
    if broadcasts and extents:
        store = STORE.format(loop=loop, source="value",
                             element="".join(f"{at.format(d)} * step{d}, "
                                             for d in range(view_ndim)))
        store = _STAGED.format(
            fits=" and ".join(f"{length} == {extent}" for length, extent in extents),
            fused_loop=indented(fused_loop), whole=_render(tree, names, ufuncs),
            steps=indented("".join(STEP.format(d=d, offset=0) for d in range(view_ndim))),
            store=indented(store))
    else:
        checks = "".join(_CHECK.format(length=length, extent=extent)
                         for length, extent in extents)
        store = fused_loop
    source = _FUSED_STORE.format(leaves=", ".join(names), checks=checks, store=store)
    namespace = {**_GLOBALS, **{name: ufunc for ufunc, name in ufuncs.items()},
                 "expression_dtype": dtype}
    # compiled under this file's name: Numba's locations in it are library code's
    exec(compile(source, __file__, "exec"), namespace)
    return namespace["fused_store"]


@register_pass(mutates_CFG=False, analysis_only=True)
class RecordPhis(FunctionPass):
    """Keep the phis of the typed IR (``state.xpuc_phis``: each one's block and
    its incoming values by predecessor), which Numba strips into copies before
    ``FuseExpressionStores`` runs: two arrays a loop swaps are told apart by
    their phis (``distinct_arrays``)."""

    _name = "xpuc_record_phis"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        state.xpuc_phis = {
            stmt.target.name: (label, dict(zip(
                stmt.value.incoming_blocks,
                # a value undefined along an edge: None, where nothing is known
                (v.name if isinstance(v, ir.Var) else None for v in stmt.value.incoming_values))))
            for label, block in state.func_ir.blocks.items()
            for stmt in block.find_insts(ir.Assign)
            if isinstance(stmt.value, ir.Expr) and stmt.value.op == "phi"}
        return False


# where an array comes from: ("phi", name), ("argument", position) or
# ("made", id of the expression that made it)
Root = tuple


def _root(state, name: str) -> Root | None:
    """Where the array ``name`` comes from, through copies and views (basic
    indexing); None where that is not known."""
    phis = getattr(state, "xpuc_phis", {})
    definitions = state.func_ir._definitions
    seen = set()
    while name not in phis:
        if name in seen or len(definitions.get(name, ())) != 1:
            return None
        seen.add(name)
        definition = definitions[name][0]
        if isinstance(definition, ir.Arg):
            return ("argument", definition.index)
        if isinstance(definition, ir.Var):
            name = definition.name
        elif isinstance(definition, ir.Expr) and definition.op in ("getitem", "static_getitem") \
                and _basic_index(state, definition):
            name = definition.value.name
        elif isinstance(definition, ir.Expr) and (_elementwise(state, definition) is not None
                                                  or _allocates(state, definition)):
            return ("made", id(definition))
        else:
            return None
    return ("phi", name)


# calls that return a new array
_ALLOCATIONS = (np.empty, np.zeros, np.ones, np.full, np.empty_like, np.zeros_like,
                np.ones_like, np.full_like, np.copy, np.arange, np.linspace, empty_usm)


def _allocates(state, expr: ir.Expr) -> bool:
    """Whether ``expr`` makes a new array: a NumPy constructor, ``a.copy()``,
    or the runtime's allocation that xpuc's inlined code makes (a USM
    array's ``copy``)."""
    if expr.op != "call":
        return False
    key = getattr(state.typemap.get(expr.func.name), "typing_key", None)
    return key == "array.copy" or any(key is allocation for allocation in _ALLOCATIONS)


def _basic_index(state, getitem: ir.Expr) -> bool:
    """Whether ``getitem`` indexes with slices and integers: a view."""
    if getitem.op == "static_getitem":
        return True  # a constant index: slices and integers
    index = state.typemap[getitem.index.name]
    indices = index.types if isinstance(index, types.BaseTuple) else (index,)
    return all(isinstance(i, (types.SliceType, types.Integer)) for i in indices)


def _possible_roots(state, name: str, seen: set) -> set | None:
    """Every argument and made array that ``name`` may be, through phis."""
    root = _root(state, name)
    if root is None:
        return None
    if root[0] != "phi":
        return {root}
    roots: set = set()
    if root[1] in seen:
        return roots
    seen.add(root[1])
    for incoming in state.xpuc_phis[root[1]][1].values():
        more = _possible_roots(state, incoming, seen)
        if more is None:
            return None
        roots |= more
    return roots


def distinct_arrays(state, a: str, b: str, assumed: set | None = None) -> bool:
    """Whether the arrays ``a`` and ``b`` never share memory: proved where
    every array each may be is made by its own expression, or one is made
    and the other an argument; and for two phis of one block, where the
    values entering them along each edge are distinct, assuming they are
    distinct (the loop that swaps ``grid`` and ``other``)."""
    assumed = set() if assumed is None else assumed
    root_a, root_b = _root(state, a), _root(state, b)
    if root_a is None or root_b is None:
        return False
    if root_a[0] == root_b[0] == "phi":
        (block_a, edges_a), (block_b, edges_b) = (state.xpuc_phis[root_a[1]],
                                                  state.xpuc_phis[root_b[1]])
        if block_a == block_b and edges_a.keys() == edges_b.keys() and root_a != root_b:
            pair = frozenset((root_a[1], root_b[1]))
            if pair in assumed:
                return True
            assumed.add(pair)
            return all(distinct_arrays(state, edges_a[p], edges_b[p], assumed) for p in edges_a)
    roots_a, roots_b = _possible_roots(state, a, set()), _possible_roots(state, b, set())
    if roots_a is None or roots_b is None:
        return False
    return all(x != y and "made" in (x[0], y[0]) for x in roots_a for y in roots_b)


def _elementwise(state, expr: ir.Expr) -> tuple[object, list[ir.Var]] | None:
    """The operator or ufunc and operands of ``expr`` where it is one step of
    an array expression (``b * 2``, ``-b``, ``np.sin(b)``), which Numba
    computes element by element into a new array; else None."""
    if expr.op == "binop" and expr.fn in _BINARY:
        return expr.fn, [expr.lhs, expr.rhs]
    if expr.op == "unary" and expr.fn in _UNARY:
        return expr.fn, [expr.value]
    if expr.op == "call" and not (expr.kws or expr.vararg or expr.varkwarg):
        ufunc = getattr(state.typemap.get(expr.func.name), "typing_key", None)
        if isinstance(ufunc, np.ufunc) and len(expr.args) == ufunc.nin:
            return ufunc, list(expr.args)
    return None


# statements an expression's evaluation may move past: they read no memory a
# store could change, and write none (views, constants, slices, tuples)
_PURE_EXPRESSIONS = ("getitem", "static_getitem", "build_tuple", "getattr", "cast")


@register_pass(mutates_CFG=True, analysis_only=False)
class FuseExpressionStores(FunctionPass):
    """Rewrite each host ``a[index] = <array expression>`` as one loop where
    it may (the module's docstring)."""

    _name = "xpuc_fuse_expression_stores"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        return rewrite_host_stores(state, _fuse)


def _uses(func_ir: ir.FunctionIR) -> dict[str, int]:
    """How many times each variable is read."""
    counts: dict[str, int] = {}
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                value = stmt.value
                reads = [value] if isinstance(value, ir.Var) else \
                    value.list_vars() if isinstance(value, ir.Expr) else []
            else:
                reads = stmt.list_vars()
            for var in reads:
                counts[var.name] = counts.get(var.name, 0) + 1
    return counts


def _expression(state, block: ir.Block, i: int, value: ir.Var
                ) -> tuple[Tree, list[ir.Var], list[int]] | None:
    """The array expression that ``block.body[i]`` stores, ``value``: its
    tree, its leaves (the arrays and scalars it reads) and the positions of
    the statements computing it, which the fused loop replaces; None where
    ``value`` is not an expression only this store reads, or the statements
    cannot move to the store."""
    typemap, uses = state.typemap, _uses(state.func_ir)
    defined_at = {s.target.name: k for k, s in enumerate(block.body[:i])
                  if isinstance(s, ir.Assign)}
    leaves: list[ir.Var] = []
    steps: list[int] = []

    def tree(var: ir.Var) -> Tree:
        k = defined_at.get(var.name)
        if k is not None and var.is_temp and uses.get(var.name) == 1 and \
                len(state.func_ir._definitions.get(var.name, ())) == 1 and \
                isinstance(typemap[var.name], types.Array) and \
                isinstance(block.body[k].value, ir.Expr):
            step = _elementwise(state, block.body[k].value)
            if step is not None:
                steps.append(k)
                return step[0], tuple(tree(operand) for operand in step[1])
        names = [leaf.name for leaf in leaves]
        if var.name in names:
            return names.index(var.name)
        leaves.append(var)
        return len(leaves) - 1

    expression = tree(value)
    if isinstance(expression, int):
        return None
    for leaf in leaves:
        leaf_type = typemap[leaf.name]
        if not (isinstance(leaf_type, (types.Number, types.Boolean))
                or isinstance(leaf_type, types.Array) and leaf_type.ndim > 0):
            return None
    # evaluated at the store, the expression must read what it read where it was
    kept = [s for k, s in enumerate(block.body[min(steps):i]) if k + min(steps) not in steps]
    # (a leaf assigned more than once, the copy a phi became, would change)
    reassigned = {leaf.name for leaf in leaves
                  if len(state.func_ir._definitions.get(leaf.name, ())) > 1}
    for stmt in kept:
        if not isinstance(stmt, ir.Assign) or stmt.target.name in reassigned or not (
                isinstance(stmt.value, (ir.Const, ir.Global, ir.FreeVar, ir.Var))
                or isinstance(stmt.value, ir.Expr) and (
                    stmt.value.op in _PURE_EXPRESSIONS or _is_slice_call(state, stmt.value)
                    or _elementwise(state, stmt.value) is not None)):
            return None
    return expression, leaves, sorted(steps)


def _is_slice_call(state, expr: ir.Expr) -> bool:
    """Whether ``expr`` is ``slice(...)``, the object ``a[1:-1]`` indexes with."""
    return expr.op == "call" and isinstance(state.typemap.get(expr.func.name), types.Function) \
        and state.typemap[expr.func.name].typing_key is slice


def _fuse(state, block: ir.Block, i: int, stmt: ir.SetItem | ir.StaticSetItem,
          work_list: list) -> bool:
    """Replace ``stmt``, the store at ``block.body[i]`` of an array expression
    of the view's rank, with ``$view = a[index]`` and the inlined fused store;
    whether it was."""
    index = stmt.index_var if isinstance(stmt, ir.StaticSetItem) else stmt.index
    typemap, typingctx = state.typemap, state.typingctx
    target_type, value_type = typemap[stmt.target.name], typemap[stmt.value.name]
    if index is None or not isinstance(value_type, types.Array):
        return False
    ndim = assigned_view_ndim(target_type, typemap[index.name], value_type, numbas_too=True)
    if ndim != value_type.ndim:
        return False
    found = _expression(state, block, i, stmt.value)
    if found is None:
        return False
    expression, leaves, steps = found
    indices = typemap[index.name]
    if isinstance(indices, types.BaseTuple) and len(indices) == 1:
        # a[(s,)] as a[s]: Numba's array analysis replaces the index of a view
        # of a 1-tuple by its slice alone, which the view's lowering cannot cast
        items = guard(get_definition, state.func_ir, index)
        if not (isinstance(items, ir.Expr) and items.op == "build_tuple"):
            return False
        index, indices = items.items[0], indices.types[0]
    broadcasts = any(isinstance(item, types.Integer)
                     for item in getattr(indices, "types", (indices,)))
    ranks = tuple(getattr(typemap[leaf.name], "ndim", None) for leaf in leaves)
    in_place = whole_view(state, stmt)  # the target read where it is written
    shared = [leaf for rank, leaf in zip(ranks, leaves) if rank is not None and
              leaf.name != in_place and not distinct_arrays(state, stmt.target.name, leaf.name)]
    for k in reversed(steps):
        del block.body[k]
    i -= len(steps)
    scope, loc = stmt.target.scope, stmt.loc
    view_signature = typingctx.resolve_function_type(operator.getitem,
                                                     (target_type, typemap[index.name]), {})
    view = ir.Var(scope, mk_unique_var("$assigned_view"), loc)
    typemap[view.name] = view_signature.return_type
    getitem = ir.Expr.getitem(stmt.target, index, loc)
    state.calltypes[getitem] = view_signature
    callee = ir.Var(scope, mk_unique_var("$fused_store"), loc)
    typemap[callee.name] = types.none  # never read: the call is inlined at once
    done = ir.Var(scope, mk_unique_var("$stored"), loc)
    typemap[done.name] = types.none
    call = ir.Assign(ir.Expr.call(callee, (view, *leaves), (), loc), done, loc)
    block.body[i:i + 1] = [ir.Assign(getitem, view, loc),
                           ir.Assign(ir.Const(None, loc), callee, loc), call]
    if shared:
        # copied first where they share the view's memory at other elements
        staged = stage_operands(state, block, i + 1, view, shared, work_list)
        call.value.args = [view, *(staged.get(leaf.name, leaf) for leaf in leaves)]
        block = next(b for b in state.func_ir.blocks.values() if any(s is call for s in b.body))
    inline_closure_call(state.func_ir, _GLOBALS, block,
                        next(k for k, s in enumerate(block.body) if s is call),
                        _fused_store(ndim, ranks, expression, broadcasts, value_type.dtype),
                        typingctx,
                        state.targetctx, tuple(typemap[v.name] for v in call.value.args),
                        typemap, state.calltypes, work_list)
    return True
