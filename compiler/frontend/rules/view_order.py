"""The order of a loop that stores into a view of an array while it loads
another view of it (``x[i, 1:] = x[i, :-1]``, ``A[i, :] -= f * A[k, :]``):
NumPy reads the whole right side before it writes, and a forward loop would
read elements it has just written. Views indexed alike (``x[i, 1:] =
x[i, 1:]``, the store back of ``C[:i, j] += v``) are one view, each element
read before it is written. Of two 1-D views along one axis with one step,
the loop walks backwards where the stored one starts after the loaded one in
memory (decided at run time: Floyd–Warshall's ``path[i, :]`` and
``path[k, :]`` are one row where ``i == k``, apart otherwise); any other pair
of views is refused.

Views of two arrays from outside the body may be of one array too, where
the caller passed views of one array as both (``f(s[:, :-1], s[:, ::-1])``):
the host checks them before the launch (``keep_apart``)."""

from __future__ import annotations

from numba.core import ir

from ...dialects import Value, arith
from ...errors import UnsupportedError
from ..body_values import ArrayValue, SliceValue, TupleValue
from ..shared_operands import is_whole_index
from ..slice_assignments import broadcast_view
from ..translation import SeparateArrays, Translation, user_names
from ..user_locations import where
from .body_checks import same_value


def views_overlap(t: Translation, stored: ir.Var, loaded: ir.Var) -> bool:
    """Whether the views ``stored`` and ``loaded`` are of one array and not
    indexed alike."""
    written, read = t.lookup(stored), t.lookup(loaded)
    return read.var == written.var and \
        not same_value(t, _updated_view(t, stored), _updated_view(t, loaded))


def keep_apart(t: Translation, store: ir.Stmt | ir.Expr, stored: ir.Var, loaded: ir.Var) -> None:
    """Where ``store`` writes the view ``stored`` of an array from outside
    the body and reads ``loaded``, a view of another such array or an array
    the body computes from some (``ComputedArray.arrays_read``), have the host
    check before the launch that the two share no memory."""
    written, read = t.lookup(stored), t.lookup(loaded)
    if not isinstance(written, ArrayValue) or written.var not in t.arrays or \
            t.arrays[written.var].fresh:
        return
    if isinstance(read, ArrayValue):
        reads = ((read.var, loaded),) if read.var in t.arrays else ()
    else:
        reads = getattr(read, "arrays_read", ())
    for array, view in reads:
        if array == written.var or t.arrays[array].fresh:
            continue
        alike = view is not None and _made_alike(t, _updated_view(t, stored),
                                                 _updated_view(t, view))
        names = user_names([written.var]), user_names([array])
        t.keep_separate(SeparateArrays(written.var, array, alike, (
            f"{where(store.loc)}: '{names[0]}' and '{names[1]}' share memory in this call, and "
            f"this store into a view of '{names[0]}' reads '{names[1]}' (NumPy would read it "
            "whole first; the loop reads it as it writes): pass arrays that do not overlap, "
            f"such as '{names[1]}.copy()' made before the call")))


def _made_alike(t: Translation, first: ir.Var, second: ir.Var, depth: int = 0) -> bool:
    """Whether the views ``first`` and ``second`` are made alike from their
    arrays (``x[i, :]`` and ``y[i, :]``, or the arrays themselves)."""
    if depth > 8:
        return False
    first, second = _all_of(t, first), _all_of(t, second)
    ones, others = t.lookup(first), t.lookup(second)
    if ones.var == first.name or others.var == second.name:
        return ones.var == first.name and others.var == second.name
    made, made_too = t.definition(first), t.definition(second)
    if isinstance(made, ir.Var) or isinstance(made_too, ir.Var):  # a copy of a name
        return _made_alike(t, made if isinstance(made, ir.Var) else first,
                           made_too if isinstance(made_too, ir.Var) else second, depth + 1)
    if not (isinstance(made, ir.Expr) and isinstance(made_too, ir.Expr)
            and made.op == made_too.op and made.op in ("getitem", "static_getitem")):
        return False
    same_index = made.index == made_too.index if made.op == "static_getitem" else \
        same_value(t, made.index, made_too.index)
    return same_index and _made_alike(t, made.value, made_too.value, depth + 1)


def _all_of(t: Translation, view: ir.Var) -> ir.Var:
    """The array or view that ``view`` is all of (``row`` for ``row[:]``), or
    ``view``."""
    made = t.definition(view)
    if isinstance(made, ir.Expr) and made.op in ("getitem", "static_getitem") \
            and is_whole_index(made.index, t.definition, t.typemap):
        return _all_of(t, made.value)
    if _is_broadcast(t, made):  # its value's elements, a length of 1 read again
        return _all_of(t, made.args[0])
    return view


def _is_broadcast(t: Translation, made: object) -> bool:
    """Whether ``made`` is ``broadcast_view(value, view)`` (slice_assignments)."""
    return isinstance(made, ir.Expr) and made.op == "call" and getattr(
        t.typemap[made.func.name], "typing_key", None) is broadcast_view


def walk_backwards(t: Translation, overlaps: list[tuple[ir.Stmt | ir.Expr, ir.Var, ir.Var]],
                   one_loop: bool) -> Value:
    """Whether a loop (``one_loop``: of one dimension) making the stores of
    ``overlaps``, each ``(store, stored view, loaded view)`` of views that
    overlap, must walk backwards; refused unless they are one store from
    one view, 1-D along one axis with one step."""
    store, target, source = overlaps[0]
    axes = _view_axes(t, target)
    if not one_loop or axes is None or len(axes) != 1 \
            or axes != _view_axes(t, source) or any(
                other is not store or not same_value(t, read, source)
                for other, _, read in overlaps):
        raise UnsupportedError(
            f"{where(store.loc)}: store to a view of '{user_names([t.lookup(target).var])}' "
            "from another view of it in a parfor body (xpuc orders the loop only of two 1-D "
            "views along one axis with one step)")
    b, written, read = t.b, t.lookup(target), t.lookup(source)
    zero = b.index_constant(0)
    apart = arith.binary(b, "arith.subi", written.offset or zero, read.offset or zero)
    stride = written.strides[0] if written.strides else b.index_constant(1)
    return arith.compare(b, "gt", arith.binary(b, "arith.muli", apart, stride), zero)


def _view_axes(t: Translation, var: ir.Var, depth: int = 0) -> tuple[tuple[int, int], ...] | None:
    """Per dimension of the view ``var``: the axis of the array it views and
    its step along that axis (views of one array with equal ones have equal
    strides); None where the view is not made of integers and slices."""
    array = t.lookup(var)
    if not isinstance(array, ArrayValue) or depth > 8:
        return None
    if array.var == var.name:
        return tuple((axis, 1) for axis in range(len(array.dims)))
    definition = t.definition(var)
    if isinstance(definition, ir.Var):
        return _view_axes(t, definition, depth + 1)
    if _is_broadcast(t, definition):
        # its value's axes: a dimension of one element read at 0 is read
        # alike whichever way the loop walks
        return _view_axes(t, definition.args[0], depth + 1)
    if not (isinstance(definition, ir.Expr) and definition.op in ("getitem", "static_getitem")):
        return None
    outer = _view_axes(t, definition.value, depth + 1)
    if definition.op == "getitem" or definition.index_var is not None:
        held = t.lookup(definition.index if definition.op == "getitem" else definition.index_var)
        items = held.items if isinstance(held, TupleValue) else (held,)
        steps = [item.step or 1 if isinstance(item, SliceValue) else
                 None if isinstance(item, Value) else 0 for item in items]
    else:  # a constant index
        items = definition.index if isinstance(definition.index, tuple) else (definition.index,)
        steps = [item.step or 1 if isinstance(item, slice) else
                 None if isinstance(item, int) else 0 for item in items]
    if outer is None or 0 in steps or len(steps) > len(outer):
        return None
    steps += [1] * (len(outer) - len(steps))  # dimensions past the index, whole
    return tuple((axis, step * outer_step) for (axis, outer_step), step in zip(outer, steps)
                 if step is not None)


def _updated_view(t: Translation, var: ir.Var) -> ir.Var:
    """The view ``var`` is: an in-place operator's result is its left operand
    (``C[:i, j] += v`` stores that result back to ``C[:i, j]``)."""
    definition = t.definition(var)
    return definition.lhs if isinstance(definition, ir.Expr) and \
        definition.op == "inplace_binop" else var
