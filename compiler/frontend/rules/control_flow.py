"""Rules of loops in a body: ``for`` over a ``range`` (Numba's getiter /
iternext / pair nodes), and a prange nested in a prange body, which runs as
serial loops inside the outer kernel's work-item.

Branches need no rule of their own: the body's blocks and the jumps between
them are emitted as they are (``translation.emit_blocks``), and the linalg
stage structures them into scf.if / scf.while."""

from __future__ import annotations

from dataclasses import dataclass

from numba.core import ir, types
from numba.parfors.parfor import Parfor, init_prange

from ...dialects import INDEX, ScalarType, Value, arith
from ...errors import UnsupportedError
from ..body_values import ArrayValue, ComputedArray, MaskedArray
from ..prange_steps import range_length
from ..translation import (
    Translation,
    call_rule,
    emit_blocks,
    expression_rule,
    nested_statements,
    statement_rule,
    translate_statement,
)
from ..user_locations import where
from .computed_arrays import contract_parfor, mask_holds, masked_iteration
from .view_order import keep_apart, views_overlap, walk_backwards


@dataclass(frozen=True)
class _Range:
    start: Value
    stop: Value
    step: Value


@dataclass(frozen=True)
class _RangeIterator:
    slot: str  # memref<i64> holding the next value
    range: _Range


@dataclass(frozen=True)
class _Pair:  # what iternext gives: the value and whether it is valid
    first: Value
    second: Value


@call_rule(range)
def _range(t: Translation, expr: ir.Expr, target: ir.Var) -> _Range:
    """``range(stop)``, ``range(start, stop)``, ``range(start, stop, step)``."""
    i64 = ScalarType("i", 64)
    bounds = [arith.cast(t.b, t.value(a), i64) for a in expr.args]
    if len(bounds) == 1:
        bounds = [t.b.constant(0, i64), bounds[0]]
    if len(bounds) == 2:
        bounds.append(t.b.constant(1, i64))
    return _Range(*bounds)


@call_rule(range_length)
def _range_length(t: Translation, expr: ir.Expr, target: ir.Var) -> Value:
    """The trip count of a prange of a step other than 1 nested in a prange
    body (prange_steps.py). A kernel cannot raise: a step of 0 runs no
    iteration."""
    i64 = ScalarType("i", 64)
    b = t.b
    start, stop, step = (arith.cast(b, t.value(a), i64) for a in expr.args)
    zero, one = b.constant(0, i64), b.constant(1, i64)
    upward = arith.compare(b, "gt", step, zero)
    span = arith.select(b, upward, arith.binary(b, "arith.subi", stop, start),
                        arith.binary(b, "arith.subi", start, stop))
    stride = arith.select(b, upward, step, arith.binary(b, "arith.subi", zero, step))
    divisor = arith.select(b, arith.compare(b, "eq", stride, zero), one, stride)
    trips = arith.binary(b, "arith.addi", arith.binary(
        b, "arith.divsi", arith.binary(b, "arith.subi", span, one), divisor), one)
    runs = arith.binary(b, "arith.andi", arith.compare(b, "gt", span, zero),
                        arith.compare(b, "ne", step, zero))
    return arith.select(b, runs, trips, zero)


@call_rule(init_prange)
def _library_prange(t: Translation, expr: ir.Expr, target: ir.Var) -> None:
    """The mark of a prange in library code that Numba inlined into a body
    (xpuc's own ``np.sum(a, axis=k)`` of a USM array is one): refused, as
    the library call that brought it (``user_locations``)."""
    raise UnsupportedError(
        f"{where(expr.loc)}: its implementation is a parallel loop (a prange), which a parfor "
        "body cannot run; write it as a serial loop in the body")


@expression_rule("getiter")
def _getiter(t: Translation, expr: ir.Expr, target: ir.Var) -> _RangeIterator:
    source = t.lookup(expr.value)
    if not isinstance(source, _Range):
        raise UnsupportedError(f"{where(expr.loc)}: iterating over anything but range()")
    slot = t.alloca(source.start.type)
    t.b.emit(f"memref.store {source.start.name}, {slot}[] : memref<i64>")
    return _RangeIterator(slot, source)


@expression_rule("iternext")
def _iternext(t: Translation, expr: ir.Expr, target: ir.Var) -> _Pair:
    iterator = t.lookup(expr.value)
    b, r = t.b, iterator.range
    current = b.op(f"memref.load {iterator.slot}[] : memref<i64>", r.start.type)
    upward = arith.compare(b, "gt", r.step, b.constant(0, r.step.type))
    valid = arith.select(b, upward, arith.compare(b, "lt", current, r.stop),
                         arith.compare(b, "gt", current, r.stop))
    following = arith.binary(b, "arith.addi", current, r.step)
    b.emit(f"memref.store {following.name}, {iterator.slot}[] : memref<i64>")
    return _Pair(current, valid)


@expression_rule("pair_first", "pair_second")
def _pair_item(t: Translation, expr: ir.Expr, target: ir.Var) -> Value:
    pair = t.lookup(expr.value)
    return pair.first if expr.op == "pair_first" else pair.second


@statement_rule(Parfor)
def _nested_parfor(t: Translation, inner: Parfor) -> None:
    """A prange inside a prange body runs as serial loops inside the outer
    kernel's work-item (the outer loop is the parallel one); one that
    computes an array expression is its array, computed where read, and one
    over the elements of ``x[mask]`` runs over the mask's
    (rules/computed_arrays.py)."""
    if contract_parfor(t, inner):
        return
    for stmt in inner.init_block.body:
        translate_statement(t, stmt)
    backwards = _overlap_direction(t, inner)
    _serial_nest(t, inner, 0, masked_iteration(t, inner), backwards)


def _overlap_direction(t: Translation, inner: Parfor) -> Value | None:
    """Whether ``inner``'s loop must walk backwards, as ``memmove`` does, or
    None where it stores to no view of an array that it loads from another
    view of: ``x[i, 1:] = x[i, :-1]``, where NumPy reads the whole right side
    before it writes and a forward loop would read elements it has just
    written (view_order.py)."""
    statements = [stmt for stmt, _ in nested_statements(inner.loop_body.values())]
    defined = {stmt.target.name for stmt in statements if isinstance(stmt, ir.Assign)}

    def outer_view(var: ir.Var) -> ArrayValue | None:  # a view from the prange body
        if var.name in defined or not isinstance(t.typemap[var.name], types.Array):
            return None
        array = t.lookup(var)
        return array if isinstance(array, ArrayValue) and array.var != var.name else None

    loaded = [stmt.value.value for stmt in statements if isinstance(stmt, ir.Assign)
              and isinstance(stmt.value, ir.Expr)
              and stmt.value.op in ("getitem", "static_getitem")]
    # an array expression computed where it is loaded reads its views there
    loaded += [view for var in loaded if isinstance(computed := t.lookup(var), ComputedArray)
               for view in computed.views_read]
    overlaps = []  # (store, stored view, loaded view) of views of one array
    for store in statements:
        if not isinstance(store, (ir.SetItem, ir.StaticSetItem)):
            continue
        written = outer_view(store.target)
        for source in loaded if written is not None else ():
            if source.name not in defined:
                keep_apart(t, store, store.target, source)
            if outer_view(source) is not None and views_overlap(t, store.target, source):
                overlaps.append((store, store.target, source))
    if not overlaps:
        return None
    return walk_backwards(t, overlaps, len(inner.loop_nests) == 1)


def _serial_nest(t: Translation, inner: Parfor, axis: int,
                 masked: tuple[ir.Var, MaskedArray] | None = None,
                 backwards: Value | None = None) -> None:
    """The loops of ``inner``'s nest from ``axis`` on, the last over the
    body; a 1-D loop walks from its stop down where ``backwards`` holds."""
    b, nest = t.b, inner.loop_nests[axis]
    if nest.step != 1:
        raise UnsupportedError(f"{where(inner.loc)}: prange with a step other than 1")
    start, stop = (b.index_constant(bound) if isinstance(bound, int)
                   else arith.cast(b, t.value(bound), INDEX) for bound in (nest.start, nest.stop))
    if masked is not None:  # the mask's positions; the body reads x's source there
        stop = masked[1].mask.dims[0]
    label = f"^loop{len(t.allocas)}"  # unique: every loop adds a slot
    position = t.alloca(INDEX)
    b.emit(f"memref.store {start.name}, {position}[] : memref<index>")
    b.emit(f"cf.br {label}_head")
    b.emit(f"{label}_head:", indent=-1)
    current = b.op(f"memref.load {position}[] : memref<index>", INDEX)
    more = arith.compare(b, "lt", current, stop)
    b.emit(f"cf.cond_br {more.name}, {label}_body, {label}_after")
    b.emit(f"{label}_body:", indent=-1)
    following = arith.binary(b, "arith.addi", current, b.index_constant(1))
    b.emit(f"memref.store {following.name}, {position}[] : memref<index>")
    t.local = set()
    if backwards is not None:
        last = arith.binary(b, "arith.subi", stop, b.index_constant(1))
        downward = arith.binary(b, "arith.subi", arith.binary(b, "arith.addi", start, last),
                                current)
        current = arith.select(b, backwards, downward, current)
    t.define(nest.index_variable, current)
    if axis + 1 < len(inner.loop_nests):
        _serial_nest(t, inner, axis + 1)
        b.emit(f"cf.br {label}_head")
    elif masked is not None:
        array, held = masked
        holds = mask_holds(t, held, current, inner.loc)
        b.emit(f"cf.cond_br {holds.name}, {label}_held, {label}_head")
        b.emit(f"{label}_held:", indent=-1)
        t.env[array.name] = held.source
        emit_blocks(t, inner.loop_body, f"{label}_head")
        t.env[array.name] = held
    else:
        emit_blocks(t, inner.loop_body, f"{label}_head")
    b.emit(f"{label}_after:", indent=-1)
    t.local = set()
