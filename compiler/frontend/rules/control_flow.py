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
from ..translation import (
    ArrayValue,
    MaskedArray,
    Translation,
    call_rule,
    emit_blocks,
    expression_rule,
    nested_statements,
    statement_rule,
    translate_statement,
    user_names,
    where,
)
from .body_checks import same_value
from .computed_arrays import contract_parfor, mask_holds, masked_iteration


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
    _refuse_overlapping_views(t, inner)
    _serial_nest(t, inner, 0, masked_iteration(t, inner))


def _refuse_overlapping_views(t: Translation, inner: Parfor) -> None:
    """Refuse ``inner`` where it stores to a view of an array and loads from
    another view of it (``x[i, 1:] = x[i, :-1]``): NumPy reads the whole
    right side before it writes, the serial loops would read elements they
    have just written. Views indexed alike (``x[i, 1:] = x[i, 1:]``, the
    store back of ``C[:i, j] += v``) are one view, each element read before
    it is written."""
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
    for store in statements:
        if not isinstance(store, (ir.SetItem, ir.StaticSetItem)):
            continue
        written = outer_view(store.target)
        for source in loaded if written is not None else ():
            read = outer_view(source)
            if read is not None and read.var == written.var and \
                    not same_value(t, _updated_view(t, store.target), _updated_view(t, source)):
                raise UnsupportedError(
                    f"{where(store.loc)}: store to a view of '{user_names([written.var])}' "
                    "from another view of it in a parfor body")


def _updated_view(t: Translation, var: ir.Var) -> ir.Var:
    """The view ``var`` is: an in-place operator's result is its left operand
    (``C[:i, j] += v`` stores that result back to ``C[:i, j]``)."""
    definition = t.definition(var)
    return definition.lhs if isinstance(definition, ir.Expr) and \
        definition.op == "inplace_binop" else var


def _serial_nest(t: Translation, inner: Parfor, axis: int,
                 masked: tuple[ir.Var, MaskedArray] | None = None) -> None:
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
