"""Slice assignments Numba leaves to host code (``m[:] = v`` of a matrix,
``mean[:] = np.sum(x, axis=0) / n``, ``m[0] = 1.0``), offloaded: Numba's
parfor pass makes a parfor of ``a[index] = b`` only when ``index`` is a slice
without a step of every dimension of ``a`` and ``b`` a scalar or an array of
``a``'s rank; it
leaves any other to host code, which cannot reach the elements of a
``usm_type="device"`` array. In an offload build:

- where ``index`` slices leading dimensions only and ``b`` is a scalar or an
  array of ``a``'s rank, ``:`` is added for the others, making the store
  Numba's parfor pass takes (and fuses with the loop that computes ``b``);
- any other store through slices and integers of a scalar or an array of
  lower rank becomes a loop over the assigned view, inlined in its place,
  that reads ``b`` as NumPy broadcasts it (its dimensions aligned with the
  view's last ones, a dimension of one read at 0): the parfor pass makes it a
  parfor. A ``b`` that does not broadcast to the view raises ``ValueError``
  as NumPy does;
- a store of an array the function did not compute (an argument, a view:
  ``m[1:] = m[:-1]``), whether Numba leaves it to host code or makes a
  parfor of it, is that loop too, the value copied first where its bytes
  meet the view's, as NumPy copies it: a parallel loop reading it as it
  writes would read elements already overwritten (Numba's ``parallel=True``
  gets ``a[1:] = a[:-1]`` wrong so). The copy is of the bytes the value
  spans (``usm.span_copy``): the runtime's, device to device, for USM, one
  ``memcpy`` on the host for NumPy; no kernel compiled for it.

Statements in a ``prange`` body are the body's own and left alone.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable

import numba
import numpy as np
from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.extending import register_jitable
from numba.core.inline_closurecall import inline_closure_call
from numba.core.ir_utils import build_definitions, get_definition, guard, mk_unique_var

from .inplace_operators import copied_by_indexing, prange_body_labels, slices_of_every_dimension
from .usm import span_copy

# One function per rank of the view and of the value: Numba inlines it as one
# function's IR, so the value's index is spelled out.
_BROADCAST_ASSIGNMENT = '''
def assign_broadcast(view, value):
    shape = view.shape
{steps}
{store}
'''
# Each of the value's dimensions d, aligned with the view's dimension d + offset:
# read at the view's index, or at 0 where its length is 1.
STEP = '''
    length{d} = value.shape[{d}]
    check_broadcast(length{d}, shape[{d} + {offset}])
    step{d} = 0 if length{d} == 1 else 1'''
STORE = '''
    numba.parfors.parfor.init_prange()
    for index in {loop}:
        view[index] = {source}[{element}]'''
# A value that may share the view's memory (a view of the same array, an
# argument) is copied first where it does, as NumPy does: a loop reading it
# while the view is written would read elements already overwritten. The copy
# is its byte span's (``span_copy``: the runtime's device to device for USM,
# one ``memcpy`` on the host for NumPy), no kernel compiled for a copy most
# calls never make, into an array of its own type: one store reads the value
# or its copy.
_STAGED_STORE = '''
    if spans_meet(view.ctypes.data, view.shape, view.strides, view.itemsize,
                  value.ctypes.data, value.shape, value.strides, value.itemsize):
        value = span_copy(value)
{value_store}'''


# a call (a raise in the inlined function would not type)
@register_jitable
def check_broadcast(length: int, extent: int) -> None:
    if length != 1 and length != extent:
        raise ValueError("could not broadcast the assigned array into the shape of the slice "
                         "it is assigned to")


@register_jitable
def _byte_span(address: int, shape: tuple, strides: tuple, itemsize: int) -> tuple[int, int]:
    """The bytes an array's elements lie in, ``[low, high)``; empty for no element."""
    low, high = _span_from(shape, strides, itemsize, -1)
    if low == high:
        return np.int64(0), np.int64(0)
    return np.int64(address) + low, np.int64(address) + high


@register_jitable
def spans_meet(address, shape, strides, itemsize, other, other_shape, other_strides,
               other_itemsize) -> bool:
    """Whether two arrays' elements may share bytes (NumPy's
    ``may_share_memory``): their spans meet. Host code reads only where the
    arrays are and their shapes, never an element."""
    low, high = _byte_span(address, shape, strides, itemsize)
    other_low, other_high = _byte_span(other, other_shape, other_strides, other_itemsize)
    return low < other_high and other_low < high


@register_jitable
def same_elements(address, shape, strides, itemsize, other, other_shape, other_strides,
                  other_itemsize) -> bool:
    """Whether two arrays are the very same elements: one place, shape,
    strides and item size."""
    if len(shape) != len(other_shape) or address != other or itemsize != other_itemsize:
        return False
    for d in range(len(shape)):
        if shape[d] != other_shape[d] or strides[d] != other_strides[d]:
            return False
    return True


@register_jitable
def _strides_gcd(g, shape, strides):
    """The greatest common divisor of ``g`` and the strides of the
    dimensions of more than one element."""
    for d in range(len(shape)):
        if shape[d] > 1:
            a, b = g, np.int64(abs(strides[d]))
            while b != 0:
                a, b = b, a % b
            g = a
    return g


@register_jitable
def elements_meet(address, shape, strides, itemsize, other, other_shape, other_strides,
                  other_itemsize) -> bool:
    """Whether two arrays' elements may share bytes: their spans meet, and
    neither their strides nor their rows keep them apart. Every element of
    each starts at its address modulo ``g``, the greatest common divisor of
    both arrays' strides, so interleaved views (``a[::2]`` and ``a[1::2]``)
    never meet; of arrays whose rows are one stride apart (``m[:, :k]`` and
    ``m[:, k:]``), rows meet only where a row of one meets a row of the
    other."""
    return _meet(address, shape, strides, itemsize, other, other_shape, other_strides,
                 other_itemsize, 0, True)


@register_jitable
def elements_meet_elsewhere(address, shape, strides, itemsize, other, other_shape,
                            other_strides, other_itemsize, axis) -> bool:
    """Whether two arrays' elements may share bytes other than at one index
    along ``axis`` (row r of one and row r of the other meeting, as the
    iteration owning index r touches both, is no meeting)."""
    return _meet(address, shape, strides, itemsize, other, other_shape, other_strides,
                 other_itemsize, axis, False)


@register_jitable
def _meet(address, shape, strides, itemsize, other, other_shape, other_strides, other_itemsize,
          axis, at_one_index):
    if not spans_meet(address, shape, strides, itemsize,
                      other, other_shape, other_strides, other_itemsize):
        return False
    g = _strides_gcd(_strides_gcd(np.int64(0), shape, strides), other_shape, other_strides)
    apart = np.int64(address) - np.int64(other)
    if g != 0 and apart % g >= other_itemsize and g - apart % g >= itemsize:
        return False  # Python's %: in [0, g)
    if not (axis < len(shape) and axis < len(other_shape)
            and strides[axis] == other_strides[axis] != 0):
        return at_one_index or not same_elements(address, shape, strides, itemsize, other,
                                                 other_shape, other_strides, other_itemsize)
    # row r (the elements at index r along axis) of this array meets row
    # r + k of the other where k * stride lies strictly between these bounds
    low, high = _span_from(shape, strides, itemsize, axis)
    other_low, other_high = _span_from(other_shape, other_strides, other_itemsize, axis)
    above, below = apart + high - other_low, apart + low - other_high
    step = np.int64(strides[axis])
    if step < 0:
        above, below, step = -below, -above, -step
    first = max(below // step + 1, 1 - np.int64(shape[axis]))
    last = min(-(-above // step) - 1, np.int64(other_shape[axis]) - 1)
    return first <= last and (at_one_index or first != 0 or last != 0)


@register_jitable
def _span_from(shape, strides, itemsize, axis) -> tuple[int, int]:
    """The bytes, from its first element, that one row along ``axis`` (or
    the whole array, for an axis of -1) lies in; empty for no element."""
    low = high = np.int64(0)
    for d in range(len(shape)):
        if d == axis:
            continue
        if shape[d] == 0:
            return np.int64(0), np.int64(0)
        reach = (shape[d] - 1) * strides[d]
        if reach < 0:
            low += reach
        else:
            high += reach
    return low, high + itemsize


@register_jitable
def read_as_if_copied(stored, value):
    """``value``, or a copy of it where its bytes meet those of ``stored``,
    an array a loop stores into while it reads ``value``."""
    if spans_meet(stored.ctypes.data, stored.shape, stored.strides, stored.itemsize,
                  value.ctypes.data, value.shape, value.strides, value.itemsize):
        return span_copy(value)
    return value


# what the loop's code reads: where it is compiled, and inlined
GLOBALS = {"numba": numba, "np": np, "check_broadcast": check_broadcast,
           "spans_meet": spans_meet, "span_copy": span_copy}


def parallel_loop(ndim: int, shape: str) -> tuple[str, str]:
    """The parallel loop over an array of ``ndim`` dimensions and ``shape``,
    and how its index's dimension ``d`` is written: a vector's loop has a
    number for its index, others a tuple."""
    return (f"numba.pndindex({shape})", "index[{}]") if ndim > 1 else \
        (f"numba.parfors.parfor.internal_prange({shape}[0])", "index")


def indented(text: str) -> str:
    return text.replace("\n    ", "\n        ")


@functools.cache
def _assign_broadcast(view_ndim: int, value_ndim: int, staged: bool):
    """The function storing a value of ``value_ndim`` dimensions (0: a
    scalar) into a view of ``view_ndim``, broadcast; ``staged``: copied first
    where it may share the view's memory."""
    offset = view_ndim - value_ndim
    steps = "".join(STEP.format(d=d, offset=offset) for d in range(value_ndim))
    loop, at = parallel_loop(view_ndim, "shape")
    element = "".join(f"{at.format(d + offset)} * step{d}, " for d in range(value_ndim))

    def store(source: str) -> str:
        text = STORE.format(loop=loop, source=source, element=element)
        return text if value_ndim else text.replace("value[]", "value")

    if staged and value_ndim:
        body = _STAGED_STORE.format(value_store=store("value"))
    else:
        body = store("value")
    namespace = dict(GLOBALS)
    # compiled under this file's name: Numba's locations in it are library code's
    exec(compile(_BROADCAST_ASSIGNMENT.format(steps=steps, store=body), __file__, "exec"),
         namespace)
    return namespace["assign_broadcast"]


def assigned_view_ndim(target: types.Type, index: types.Type, value: types.Type,
                       numbas_too: bool = False) -> int | None:
    """The rank of the view ``target[index]`` where storing ``value`` (an
    array or a scalar) into it is a slice assignment NumPy broadcasts and
    Numba leaves to host code (``numbas_too``: or makes a parfor of); None
    for any other store."""
    if not (isinstance(target, types.Array)
            and isinstance(value, (types.Array, types.Number, types.Boolean))):
        return None
    indices = index.types if isinstance(index, types.BaseTuple) else (index,)
    if not all(isinstance(i, (types.SliceType, types.Integer)) for i in indices) \
            or len(indices) > target.ndim:
        return None
    sliced = sum(isinstance(i, types.SliceType) for i in indices)
    view_ndim = target.ndim - (len(indices) - sliced)
    if view_ndim == 0:
        return None  # one element: host code's copy of it (SPEC rule 10)
    # Numba's parfor pass takes the stores through slices of every dimension
    # of a scalar, or of an array of the view's rank (with an integer in the
    # index, its array analysis compares the value's lengths with the wrong
    # dimensions of the array), unless a slice has a step: its array analysis
    # does not size ``x[::2]`` or ``x[::-1]``, and the store stays host code
    if not numbas_too and sliced == len(indices) == target.ndim and (
            not isinstance(value, types.Array) or value.ndim == sliced) \
            and not _has_step(indices):
        return None
    return view_ndim if getattr(value, "ndim", 0) <= view_ndim else None


def _has_step(indices: tuple[types.Type, ...]) -> bool:
    """Whether a slice among ``indices`` has a step (``x[::2]``, ``x[::-1]``)."""
    return any(isinstance(i, types.SliceType) and i.has_step for i in indices)


def broadcast_view(value, view):
    """``value`` broadcast to ``view``'s shape, as NumPy stores it into ``view``
    (a body's rule reads it in place; Numba's host copy of a loop, rule 13,
    runs this)."""
    return np.broadcast_to(value, view.shape)


register_jitable(broadcast_view)


@register_pass(mutates_CFG=False, analysis_only=False)
class BroadcastBodyViewStores(FunctionPass):
    """In each ``prange`` body, read the value of ``a[index] = v`` through
    ``broadcast_view(v, a[index])`` where ``v`` is a view of the assigned
    view's rank (see the module's docstring), both of arrays from outside
    the body (the host computes their lengths; a body's own arrays, of
    constant shapes, keep Numba's checks)."""

    _name = "xpuc_broadcast_body_view_stores"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        changed = False
        body = prange_body_labels(state.func_ir, state.typemap)
        made_in_body = {stmt.target.name for label in body
                        for stmt in state.func_ir.blocks[label].find_insts(ir.Assign)}
        for label in body:
            block = state.func_ir.blocks[label]
            new_body = []
            for stmt in block.body:
                if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and \
                        _stores_a_view(state, stmt) and all(
                            _viewed_array(state, var).name not in made_in_body
                            for var in (stmt.target, stmt.value)):
                    new_body += _read_broadcast(state, stmt)
                    changed = True
                new_body.append(stmt)
            block.body = new_body
        if changed:
            state.func_ir._definitions = build_definitions(state.func_ir.blocks)
        return changed


def _stores_a_view(state, stmt: ir.SetItem | ir.StaticSetItem) -> bool:
    """Whether ``stmt`` stores a view (``row[:1]``, ``y[i]``) into a view of
    its rank made of slices and integers."""
    index = _index_of(stmt)
    typemap = state.typemap
    value_type = typemap[stmt.value.name]
    if index is None or not isinstance(value_type, types.Array):
        return False
    definition = guard(get_definition, state.func_ir, stmt.value)
    return isinstance(definition, ir.Expr) and definition.op in ("getitem", "static_getitem") \
        and not copied_by_indexing(state, stmt.value) and assigned_view_ndim(
            typemap[stmt.target.name], typemap[index.name], value_type,
            numbas_too=True) == value_type.ndim


def _viewed_array(state, var: ir.Var) -> ir.Var:
    """The array the view ``var`` is of, through views of views."""
    definition = guard(get_definition, state.func_ir, var)
    while isinstance(definition, ir.Expr) and definition.op in ("getitem", "static_getitem"):
        var = definition.value
        definition = guard(get_definition, state.func_ir, var)
    return var


def _read_broadcast(state, stmt: ir.SetItem | ir.StaticSetItem) -> list[ir.Stmt]:
    """``$view = a[index]; $value = broadcast_view(v, $view)``, with ``stmt``
    then storing ``$value``."""
    typemap, typingctx = state.typemap, state.typingctx
    scope, loc = stmt.target.scope, stmt.loc
    index = _index_of(stmt)
    target_type, index_type = typemap[stmt.target.name], typemap[index.name]
    value_type = typemap[stmt.value.name]

    def new_var(prefix: str, var_type: types.Type) -> ir.Var:
        var = ir.Var(scope, mk_unique_var(prefix), loc)
        typemap[var.name] = var_type
        return var

    view_signature = typingctx.resolve_function_type(operator.getitem,
                                                     (target_type, index_type), {})
    view = new_var("$assigned_view", view_signature.return_type)
    getitem = ir.Expr.getitem(stmt.target, index, loc)
    state.calltypes[getitem] = view_signature
    function_type = typingctx.resolve_value_type(broadcast_view)
    callee = new_var("$broadcast_view", function_type)
    signature = typingctx.resolve_function_type(function_type,
                                                (value_type, typemap[view.name]), {})
    broadcast = new_var("$broadcast_value", signature.return_type)
    call = ir.Expr.call(callee, (stmt.value, view), (), loc)
    state.calltypes[call] = signature
    stmt.value = broadcast
    return [ir.Assign(getitem, view, loc),
            ir.Assign(ir.Global("broadcast_view", broadcast_view, loc), callee, loc),
            ir.Assign(call, broadcast, loc)]


@register_pass(mutates_CFG=True, analysis_only=False)
class BroadcastSliceAssignments(FunctionPass):
    """Rewrite each host ``a[index] = b`` that Numba leaves to host code."""

    _name = "xpuc_broadcast_slice_assignments"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        return rewrite_host_stores(state, _broadcast_or_slice)


def _broadcast_or_slice(state, block: ir.Block, i: int, stmt: ir.SetItem | ir.StaticSetItem,
                        work_list: list) -> bool:
    """Rewrite ``stmt`` (at ``block.body[i]``) as BroadcastSliceAssignments
    does; whether it was."""
    if not computed_here(state, stmt.value):
        # Numba's parfor of such a store would read what it wrote
        return _inline_broadcast(state, block, i, stmt, work_list, staged=True)
    if _slice_every_dimension(state, block, i, stmt):
        work_list.append((None, block))  # the rest of the block, again
        return True
    return _inline_broadcast(state, block, i, stmt, work_list, staged=False)


# rewrite(state, block, i, store, work_list) -> whether it rewrote the store
StoreRewrite = Callable[..., bool]


def rewrite_host_stores(state, rewrite: StoreRewrite) -> bool:
    """Offer ``rewrite`` each store into an array in host code (not in a
    prange body): ``rewrite(state, block, i, store, work_list)`` changes
    ``block`` around ``block.body[i]`` or returns False, and puts what is
    left to visit on ``work_list`` (``(label, block)`` pairs, as Numba's
    inline_closure_call adds them; the label is not read). Whether any store
    was rewritten; the function's definitions are rebuilt if so."""
    in_prange = prange_body_labels(state.func_ir, state.typemap)
    work_list = [(label, block) for label, block in state.func_ir.blocks.items()
                 if label not in in_prange]
    changed = False
    while work_list:
        _, block = work_list.pop()
        for i, stmt in enumerate(block.body):
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) \
                    and isinstance(state.typemap[stmt.target.name], types.Array) \
                    and rewrite(state, block, i, stmt, work_list):
                changed = True
                break  # the block changed: what is left of it is on the work list
    if changed:
        state.func_ir._definitions = build_definitions(state.func_ir.blocks)
    return changed


# what makes a new array: a value of one of these shares no memory with the
# array it is stored into
_NEW_ARRAYS = ("arrayexpr", "binop", "unary")


def computed_here(state, value: ir.Var) -> bool:
    """Whether ``value`` is a scalar or an array an expression of the function
    makes (``np.sum(x, axis=0) / n``, ``v * 2.0``). Any other array (an
    argument, a view) may share memory with the array stored into (``m[0, 1:]
    = m[0, :-1]``), which NumPy copies first and a parallel loop would read
    as it writes."""
    if not isinstance(state.typemap[value.name], types.Array):
        return True
    definition = guard(get_definition, state.func_ir, value)
    return isinstance(definition, ir.Expr) and (definition.op in _NEW_ARRAYS
                                                or is_ufunc_call(state, definition)
                                                or copied_by_indexing(state, value))


def is_ufunc_call(state, expr: ir.Expr) -> bool:
    """Whether ``expr`` calls a NumPy ufunc on its inputs alone (``np.sin(b)``):
    a new array, which Numba's array expressions compute element by element."""
    if expr.op != "call" or expr.kws or expr.vararg:
        return False
    ufunc = getattr(state.typemap.get(expr.func.name), "typing_key", None)
    return isinstance(ufunc, np.ufunc) and len(expr.args) == ufunc.nin


def _index_of(stmt: ir.SetItem | ir.StaticSetItem) -> ir.Var | None:
    return stmt.index_var if isinstance(stmt, ir.StaticSetItem) else stmt.index


def _slice_every_dimension(state, block: ir.Block, i: int,
                           stmt: ir.SetItem | ir.StaticSetItem) -> bool:
    """Where ``stmt`` (at ``block.body[i]``) stores a scalar or an array of the
    view's rank through slices of some leading dimensions (``m[:] = v``,
    ``m[1:] = 0.0``), add ``:`` for the others: the store Numba's parfor pass
    makes a parfor of, which fuses with the loop computing ``v``. Whether it
    did."""
    index = _index_of(stmt)
    if index is None:
        return False
    typemap = state.typemap
    target_type, index_type = typemap[stmt.target.name], typemap[index.name]
    value_type = typemap[stmt.value.name]
    view_ndim = assigned_view_ndim(target_type, index_type, value_type)
    if view_ndim != target_type.ndim or getattr(value_type, "ndim", view_ndim) != view_ndim:
        return False
    if _has_step(index_type.types if isinstance(index_type, types.BaseTuple) else (index_type,)):
        return False  # Numba's parfor pass leaves it to host code all the same
    if isinstance(index_type, types.SliceType):
        slices = [index]
    else:
        definition = guard(get_definition, state.func_ir, index)
        if not (isinstance(definition, ir.Expr) and definition.op == "build_tuple"):
            return False
        slices = list(definition.items)
    making_index, whole_index = slices_of_every_dimension(state, slices, view_ndim,
                                                          stmt.target.scope, stmt.loc)
    store = ir.SetItem(stmt.target, whole_index, stmt.value, stmt.loc)
    state.calltypes[store] = state.typingctx.resolve_function_type(
        operator.setitem, (target_type, typemap[whole_index.name], value_type), {})
    block.body[i:i + 1] = [*making_index, store]
    return True


def _inline_broadcast(state, block: ir.Block, i: int, stmt: ir.SetItem | ir.StaticSetItem,
                      work_list: list, staged: bool) -> bool:
    """Replace ``stmt``, the store at ``block.body[i]``, with ``$view =
    a[index]`` and the inlined loop that broadcasts its value into the view,
    where it is a store Numba leaves to host code, or (``staged``) any store
    of an array that may share the view's memory, copied first where it
    does; whether it was."""
    index = _index_of(stmt)
    if index is None:
        return False
    typemap, typingctx = state.typemap, state.typingctx
    target_type, index_type = typemap[stmt.target.name], typemap[index.name]
    value_type = typemap[stmt.value.name]
    view_ndim = assigned_view_ndim(target_type, index_type, value_type, numbas_too=staged)
    if view_ndim is None:
        return False
    scope, loc = stmt.target.scope, stmt.loc
    view_signature = typingctx.resolve_function_type(operator.getitem,
                                                     (target_type, index_type), {})
    view = ir.Var(scope, mk_unique_var("$assigned_view"), loc)
    typemap[view.name] = view_signature.return_type
    getitem = ir.Expr.getitem(stmt.target, index, loc)
    state.calltypes[getitem] = view_signature
    assign = _assign_broadcast(view_ndim, getattr(value_type, "ndim", 0), staged)
    callee = ir.Var(scope, mk_unique_var("$assign_broadcast"), loc)
    typemap[callee.name] = types.none  # never read: the call is inlined at once
    done = ir.Var(scope, mk_unique_var("$assigned"), loc)
    typemap[done.name] = types.none
    block.body[i:i + 1] = [ir.Assign(getitem, view, loc),
                           ir.Assign(ir.Const(None, loc), callee, loc),
                           ir.Assign(ir.Expr.call(callee, (view, stmt.value), (), loc), done, loc)]
    inline_closure_call(state.func_ir, GLOBALS, block, i + 2, assign, typingctx, state.targetctx,
                        (typemap[view.name], value_type), typemap, state.calltypes, work_list)
    return True
