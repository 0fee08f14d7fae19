"""The order of a loop that stores into a view of an array while it loads
another view of it (``x[i, 1:] = x[i, :-1]``, ``A[i, :] -= f * A[k, :]``):
NumPy reads the whole right side before it writes, and a forward loop would
read elements it has just written. Views indexed alike (``x[i, 1:] =
x[i, 1:]``, the store back of ``C[:i, j] += v``) are one view, each element
read before it is written. Of two 1-D views along one axis with one step,
the loop walks backwards where the stored one starts after the loaded one in
memory (decided at run time: Floyd–Warshall's ``path[i, :]`` and
``path[k, :]`` are one row where ``i == k``, apart otherwise); any other pair
of views is refused."""

from __future__ import annotations

from numba.core import ir

from ...dialects import Value, arith
from ...errors import UnsupportedError
from ..translation import ArrayValue, SliceValue, Translation, TupleValue, user_names, where
from .body_checks import same_value


def views_overlap(t: Translation, stored: ir.Var, loaded: ir.Var) -> bool:
    """Whether the views ``stored`` and ``loaded`` are of one array and not
    indexed alike."""
    written, read = t.lookup(stored), t.lookup(loaded)
    return read.var == written.var and \
        not same_value(t, _updated_view(t, stored), _updated_view(t, loaded))


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
