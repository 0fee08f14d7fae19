"""Rules of arrays a body makes of a size known only when running, as
dpbench's conv2d, lenet, symm and azimint_naive write them: each is an array
that no memory holds (a ComputedArray, as a product with a matrix is in
rules/products.py), its element computed where the body reads it (array
contraction).

- An array expression in a body (``alpha * B[i, j] * A[i, :i]``,
  ``np.reshape(x, s) * np.reshape(w, t)``, ``r1 <= radius``) is a nested
  parfor that Numba's parfor pass makes: ``np.empty`` of its shape, then a
  loop storing each element at its own index. Where that loop's body is one
  block of assignments and the arrays it reads are not written by the
  prange, its array is that block computed at the position read
  (``contract_parfor``). It may read, at its own index, views of arrays the
  prange writes where what follows stores it, element by element, into a
  view (the next loop, ``A[i, :] = A[i, :] - f * A[k, :]``, or an in-place
  operator, ``A[i, :] -= f * A[k, :]``): each element is then computed just
  before it is stored, and the store's loop orders itself against the views
  the expression reads as against those it reads itself (view_order.py).
- ``x.copy()`` of a view of an array the prange does not write is the view,
  read where used.
- ``np.reshape(x, shape)`` / ``x.reshape(shape)`` of such an array or a
  C-contiguous one maps each position through the flat index.
- ``np.sum(x, axis=k)`` / ``np.prod`` of one is a serial loop along ``k`` at
  each element read.
- ``v += x`` (any in-place operator) of a view ``v`` and such an array, what
  Numba leaves of ``C[:i, j] += x``: a loop over ``v``'s elements, ordered
  (view_order.py) where ``x`` is or reads another view of ``v``'s array.
- ``x[mask]`` of a vector and a vector of booleans is a MaskedArray: a loop
  over its elements (the reduction Numba makes of ``.mean()``, ``np.sum``)
  runs over the mask's, skipping where it is false, and its length is a
  count of the mask (``masked_iteration``).

A kernel cannot raise: the extents these combine are the ones Numba's array
analysis makes equal (its checks in the body go to rules/body_checks.py);
a reshape to another size is not compared in the kernel.
"""

from __future__ import annotations

import dataclasses
import operator

import numpy as np
from numba.core import ir, types
from numba.parfors.parfor import Parfor

from ...dialects import BOOL, INDEX, Complex, ScalarType, Value, arith, lookup_rule, memref, scf
from ...errors import UnsupportedError
from ..body_values import (
    ArrayMethod,
    ArrayValue,
    ComputedArray,
    MaskedArray,
    TupleValue,
    as_element,
    element_rule,
)
from ..parfor_dependences import array_written, written_arrays
from ..parfor_updates import body_statements
from ..translation import (
    Translation,
    call_rule,
    constant_value,
    index_of,
    nested_statements,
    scalar_type,
    translate_statement,
    user_names,
)
from ..user_locations import where
from ..usm import USMArray, empty_usm
from .arrays import (
    element_loops,
    element_offset,
    load_number,
    note_use,
    read_element,
    refuse_masked_use,
    write_element,
)
from .body_checks import size_origin
from .view_order import keep_apart, views_overlap, walk_backwards

Readable = ArrayValue | ComputedArray

_I64 = ScalarType("i", 64)


def element_at(t: Translation, array: Readable, position: list[Value],
               loc: ir.Loc) -> Value | Complex:
    """The element of ``array`` at ``position`` (index values): read from
    memory, or computed here."""
    if isinstance(array, ComputedArray):
        return array.element(position)
    return read_element(t, array, position, loc)


# ---- array expressions: nested parfors that store each element at its index ----------

def contract_parfor(t: Translation, inner: Parfor) -> bool:
    """Where ``inner`` (a parfor in the body) computes an array expression
    that the body only reads, bind its array to a ComputedArray whose
    element is ``inner``'s body at that position, and say so."""
    found = _array_expression(t, inner)
    if found is None:
        return False
    allocation, store, statements, views_read = found
    for stmt in inner.init_block.body:
        if stmt is not allocation:
            translate_statement(t, stmt)
    sizes = tuple(t.value(nest.stop) if isinstance(nest.stop, ir.Var)
                  else t.b.constant(nest.stop, _I64) for nest in inner.loop_nests)
    dims = tuple(arith.cast(t.b, size, INDEX) for size in sizes)
    array = allocation.target
    element_type = t.typemap[array.name].dtype
    is_complex = isinstance(element_type, types.Complex)
    dtype = scalar_type(element_type.underlying_float if is_complex else element_type,
                        f"the array of {user_names([array.name])}", allocation.loc)

    # what the loop body reads from the prange body, taken here: read in the
    # scf region of an element, a variable's slot would stay unpromoted
    defined = {stmt.target.name for stmt in statements} | \
        {nest.index_variable.name for nest in inner.loop_nests}
    outer = {var.name: t.lookup(var) for stmt in statements for var in stmt.list_vars()
             if var.name not in defined}

    def element(position: list[Value]) -> Value:
        # the loop body's variables are the element's own: none outlives it
        env, local, in_region = dict(t.env), set(t.local), t.in_region
        t.env.update(outer)
        t.local |= {name for name, held in outer.items() if held is not None}
        t.in_region = True
        try:
            for nest, index in zip(inner.loop_nests, position):
                t.define(nest.index_variable, index)
            for stmt in statements:
                translate_statement(t, stmt)
            return as_element(t.b, t.number(store.value), dtype, is_complex)
        finally:
            t.env, t.local, t.in_region = env, local, in_region

    # where each extent comes from (the arrays the expression reads), for size checks
    origins = tuple(size_origin(t, nest.stop) if isinstance(nest.stop, ir.Var) else None
                    for nest in inner.loop_nests)
    t.define(array, ComputedArray(dims, dtype, element, origins, sizes, is_complex,
                                  views_read, _arrays_read(t, inner, statements, outer)))
    return True


def _arrays_read(t: Translation, inner: Parfor, statements: list[ir.Stmt],
                 outer: dict[str, object]) -> tuple[tuple[str, ir.Var | None], ...]:
    """``ComputedArray.arrays_read`` of the array expression ``inner``
    computes with ``statements``, which read ``outer`` from the body."""
    index = inner.index_var.name if len(inner.loop_nests) == 1 else None
    found = []
    for stmt in statements:
        value = stmt.value
        own = value.value.name if isinstance(value, ir.Expr) and value.op == "getitem" and \
            getattr(value.index, "name", None) == index else None
        for var in stmt.list_vars():
            held = outer.get(var.name)
            if isinstance(held, ArrayValue) and held.var in t.arrays:
                found.append((held.var, var if var.name == own else None))
            elif isinstance(held, ComputedArray):
                found += [(name, view if var.name == own else None)
                          for name, view in held.arrays_read]
    return tuple(dict.fromkeys(found))


def arrays_read_by(t: Translation, *sources: object) -> tuple[tuple[str, None], ...]:
    """``ComputedArray.arrays_read`` of an array whose elements read
    ``sources`` at other positions than their own."""
    found = []
    for source in sources:
        if isinstance(source, ArrayValue) and source.var in t.arrays:
            found.append((source.var, None))
        elif isinstance(source, ComputedArray):
            found += [(name, None) for name, _ in source.arrays_read]
    return tuple(dict.fromkeys(found))


def _array_expression(t: Translation, inner: Parfor) -> tuple[
        ir.Assign, ir.SetItem, list[ir.Stmt], tuple[ir.Var, ...]] | None:
    """``(allocation, store, statements, views read)`` of ``inner`` when it is
    an array expression the body only reads: its init block allocates one
    array, its body is one block of assignments ending in the store of the
    element at the loop's index, it reads no array the prange writes (but
    views of them at its index, where what follows stores it where it is
    computed: ``_stored_where_computed``), and nothing else in the prange
    writes the array it makes."""
    allocations = [stmt for stmt in inner.init_block.body if isinstance(stmt, ir.Assign)
                   and isinstance(stmt.value, ir.Expr) and stmt.value.op == "call"
                   and getattr(t.typemap[stmt.value.func.name], "typing_key", None)
                   in (np.empty, empty_usm)]
    if len(allocations) != 1 or len(inner.loop_body) != 1 or any(
            nest.start != 0 or nest.step != 1 for nest in inner.loop_nests):
        return None
    allocation = allocations[0]
    array = allocation.target.name
    statements = [stmt for stmt in next(iter(inner.loop_body.values())).body
                  if not isinstance(stmt, (ir.Del, ir.Jump))]
    store = statements[-1] if statements else None
    if not (isinstance(store, (ir.SetItem, ir.StaticSetItem)) and store.target.name == array
            and getattr(index_of(store), "name", None) == inner.index_var.name):
        return None
    statements = statements[:-1]
    if not all(isinstance(stmt, ir.Assign) and array not in {v.name for v in stmt.list_vars()}
               for stmt in statements):
        return None
    written = written_arrays(t)
    found = body_statements(t.parfor)
    body = [stmt for stmt, _ in found]
    names = _names_of(array, body)
    if any(array_written(t, stmt) in names for stmt in body if stmt is not store):
        return None
    views_read = _views_read(t, inner, statements, written)
    if views_read is None or views_read and not _stored_where_computed(
            t, inner, names, found, {allocation, store}):
        return None
    return allocation, store, statements, views_read


def _views_read(t: Translation, inner: Parfor, statements: list[ir.Stmt],
                written: set[str]) -> tuple[ir.Var, ...] | None:
    """The views of arrays the prange writes that ``statements`` (the body of
    the 1-D loop ``inner``) read, each an element at the loop's index; None
    where they read such an array otherwise."""
    views = []
    for stmt in statements:
        for var in stmt.list_vars():
            if array_root(t, var) not in written:
                continue
            value = stmt.value
            if not (len(inner.loop_nests) == 1 and isinstance(value, ir.Expr)
                    and value.op == "getitem" and value.value.name == var.name
                    and getattr(value.index, "name", None) == inner.index_var.name):
                return None
            views.append(var)
    return tuple(views)


def _stored_where_computed(t: Translation, inner: Parfor, names: set[str],
                           found: list[tuple[ir.Stmt, ir.Block]],
                           own: set[ir.Stmt]) -> bool:
    """Whether the array ``inner`` makes (``names``) is read only by what
    follows ``inner`` in its block, with nothing written in between: an
    in-place operator on a view (``v -= array``, ``update_view``), or the
    loop storing ``view[j] = array[j]`` at its index (Numba's store of an
    array expression into a view); each element then read just before it is
    stored."""
    block = next(block for stmt, block in found if stmt is inner)
    after = block.body[block.body.index(inner) + 1:]
    inside = {id(stmt) for stmt, _ in nested_statements([inner.init_block,
                                                         *inner.loop_body.values()])}
    uses = [stmt for stmt, _ in found if not isinstance(stmt, (Parfor, ir.Del))
            and id(stmt) not in inside and stmt not in own
            and names & {var.name for var in stmt.list_vars()}]
    update = next((stmt for stmt in after if array_written(t, stmt) is not None), None)
    if isinstance(update, ir.Assign) and is_view_update(t, update.value) and \
            update.value.rhs.name in names:  # v -= array: update_view reads it where it stores
        return uses == [update]
    copy = next((stmt for stmt in after if isinstance(stmt, Parfor)), None)
    if copy is None or len(copy.loop_nests) != 1 or len(copy.loop_body) != 1 or any(
            array_written(t, stmt) is not None for stmt in after[:after.index(copy)]):
        return False
    index = copy.loop_nests[0].index_variable.name
    loop = [stmt for stmt in next(iter(copy.loop_body.values())).body
            if not isinstance(stmt, (ir.Del, ir.Jump))]
    if not (len(loop) == 2 and isinstance(loop[0], ir.Assign)
            and isinstance(loop[0].value, ir.Expr) and loop[0].value.op == "getitem"
            and loop[0].value.value.name in names
            and getattr(loop[0].value.index, "name", None) == index
            and isinstance(loop[1], ir.SetItem) and loop[1].value.name == loop[0].target.name
            and getattr(loop[1].index, "name", None) == index):
        return False
    return uses == [loop[0]]


def _names_of(array: str, body: list[ir.Stmt]) -> set[str]:
    """``array`` and the variables assigned it in ``body``, directly or through
    one another (``T.2 = T`` where a loop carries ``T``)."""
    names = {array}
    copies = [(stmt.value.name, stmt.target.name) for stmt in body
              if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var)]
    grown = True
    while grown:
        found = {target for source, target in copies if source in names} - names
        names |= found
        grown = bool(found)
    return names


def array_root(t: Translation, var: ir.Var) -> str | None:
    """The array from outside the body that ``var`` is or views, else None."""
    held = t.lookup(var)
    return held.var if isinstance(held, ArrayValue) and held.var in t.arrays else None


# ---- x.copy(), np.reshape ----------------------------------------------------------

# Numba's method, and xpuc's of USM arrays (numpy_functions.py: offloaded in
# host code, left a call in a body), whose key is the class and the name
@call_rule("array.copy", (USMArray, "copy"))
def _copy(t: Translation, expr: ir.Expr, target: ir.Var) -> ComputedArray:
    """``x.copy()`` of a view of an array from outside that the prange does
    not write: the view's elements, read where used."""
    source = _method_array(t, expr, "copy")
    if isinstance(source, ComputedArray):
        return source
    if source.var not in t.arrays or source.var in written_arrays(t) or source.is_complex:
        raise UnsupportedError(
            f"{where(expr.loc)}: .copy() of '{user_names([source.var])}' in a parfor body: "
            "xpuc copies only real arrays from outside the loop that it does not write")
    method = t.definition(expr.func)  # x.copy: the view copied, read where the copy is
    view = method.value if isinstance(method, ir.Expr) and method.op == "getattr" else None
    return ComputedArray(source.dims, source.dtype,
                         lambda position: element_at(t, source, position, expr.loc),
                         (None,) * len(source.dims), arrays_read=((source.var, view),))


def _method_array(t: Translation, expr: ir.Expr, name: str) -> Readable:
    method = t.lookup(expr.func)
    assert isinstance(method, ArrayMethod) and method.name == name
    return method.array


@call_rule("array.reshape")
def _reshape_method(t: Translation, expr: ir.Expr, target: ir.Var) -> ComputedArray:
    shape = expr.args[0] if len(expr.args) == 1 else expr.args
    return _reshaped(t, _method_array(t, expr, "reshape"), shape, expr.loc)


@call_rule(np.reshape)
def _reshape(t: Translation, expr: ir.Expr, target: ir.Var) -> ComputedArray:
    source = t.lookup(expr.args[0])
    if not isinstance(source, (ArrayValue, ComputedArray)):
        raise UnsupportedError(f"{where(expr.loc)}: np.reshape of anything but an array in a "
                               "parfor body")
    return _reshaped(t, source, expr.args[1], expr.loc)


def _reshaped(t: Translation, source: Readable, shape: ir.Var | list[ir.Var],
              loc: ir.Loc) -> ComputedArray | ArrayValue:
    """``source`` in ``shape``: the element at a position is ``source``'s at
    the same flat index (row-major, as reshaping a C-contiguous array). Of an
    array the work-item made, a view of its memory, which stores reach
    (dpnp.zeros' fill, ``a.reshape(a.size)[:] = 0``)."""
    if isinstance(source, ArrayValue) and (source.strides is not None
                                           or source.gather is not None):
        raise UnsupportedError(
            f"{where(loc)}: reshape of a view of '{user_names([source.var])}' that is not "
            "contiguous in a parfor body (reshape its .copy())")
    items = [t.lookup(var) for var in shape] if isinstance(shape, list) else [t.lookup(shape)]
    if len(items) == 1 and isinstance(items[0], TupleValue):
        items = list(items[0].items)
    constants = [constant_value(t, var) for var in shape] if isinstance(shape, list) else \
        constant_value(t, shape)
    constants = constants if isinstance(constants, (list, tuple)) else [constants]
    if not all(isinstance(v, Value) and v.type.kind in "iu" for v in items) or any(
            isinstance(c, int) and c < 0 for c in constants):
        raise UnsupportedError(f"{where(loc)}: reshape in a parfor body to anything but a "
                               "shape of integers that are not negative")
    b = t.b
    dims = tuple(arith.cast(b, v, INDEX) for v in items)
    if isinstance(source, ArrayValue) and source.var not in t.arrays:
        return dataclasses.replace(source, dims=dims)

    def element(position: list[Value]) -> Value | Complex:
        flat = memref.linear_index(b, position, dims)
        source_position = []
        for dim in reversed(source.dims):
            source_position.insert(0, arith.binary(b, "arith.remui", flat, dim))
            flat = arith.binary(b, "arith.divui", flat, dim)
        return element_at(t, source, source_position, loc)

    return ComputedArray(dims, source.dtype, element, (None,) * len(dims), tuple(items),
                         source.is_complex, arrays_read=arrays_read_by(t, source))


# ---- reductions along an axis -----------------------------------------------------

# each reduction along an axis: its start, its step
_ALONG_AXIS: dict[object, tuple[int, object]] = {np.sum: (0, operator.add),
                                                 np.prod: (1, operator.mul)}


@call_rule(*_ALONG_AXIS)
def _along_axis(t: Translation, expr: ir.Expr, target: ir.Var) -> Value | ComputedArray:
    """``np.sum(x, axis=k)`` (``np.prod``) of an array in the body: each
    element of the result a serial loop along ``k`` where it is read."""
    key = t.typemap[expr.func.name].typing_key
    source = t.lookup(expr.args[0]) if expr.args else None
    axis = constant_value(t, expr.args[1]) if len(expr.args) == 2 else None
    if not isinstance(source, (ArrayValue, ComputedArray)) or not isinstance(axis, int) or \
            not -len(source.dims) <= axis < len(source.dims) or source.is_complex:
        raise UnsupportedError(f"{where(expr.loc)}: np.{key.__name__} in a parfor body of "
                               "anything but a real array along a constant axis")
    axis %= len(source.dims)
    result_type = t.calltypes[expr].return_type
    dtype = scalar_type(getattr(result_type, "dtype", result_type), f"np.{key.__name__}",
                        expr.loc)
    start, step = _ALONG_AXIS[key]
    combine = lookup_rule(step)

    def element(position: list[Value]) -> Value:
        def advance(k: Value, total: Value) -> Value:
            term = element_at(t, source, [*position[:axis], k, *position[axis:]], expr.loc)
            return combine(t.b, [total, arith.cast(t.b, term, dtype)], dtype)

        return scf.fold(t.b, source.dims[axis], t.b.constant(start, dtype), advance)

    dims = source.dims[:axis] + source.dims[axis + 1:]
    if not dims:
        return element([])
    sizes = None if isinstance(source, ArrayValue) or source.sizes is None else \
        source.sizes[:axis] + source.sizes[axis + 1:]
    return ComputedArray(dims, dtype, element, (None,) * len(dims), sizes,
                         arrays_read=arrays_read_by(t, source))


# ---- in-place operators on a view --------------------------------------------------

def is_view_update(t: Translation, expr: ir.Expr) -> bool:
    """Whether ``expr`` is an in-place operator on an array (``v += x``)."""
    return expr.op == "inplace_binop" and isinstance(t.typemap[expr.lhs.name], types.Array)


def update_view(t: Translation, expr: ir.Expr, target: ir.Var) -> ArrayValue:
    """``v op= x`` of a view ``v`` and an array of its rank or a number: a
    loop over ``v``'s elements, each combined with ``x``'s at its position."""
    view, operand = t.lookup(expr.lhs), t.lookup(expr.rhs)
    operand_is_complex = isinstance(operand, Complex) or \
        isinstance(operand, (ArrayValue, ComputedArray)) and operand.is_complex
    if not isinstance(view, ArrayValue) or view.gather is not None or \
            isinstance(operand, (ArrayValue, ComputedArray)) and \
            len(operand.dims) != len(view.dims) or operand_is_complex and not view.is_complex or \
            not isinstance(operand, (ArrayValue, ComputedArray, Value, Complex)):
        raise UnsupportedError(
            f"{where(expr.loc)}: in-place operator on an array in a parfor body of anything "
            "but a view and a number or an array of its rank (complex only into a complex "
            "view)")
    # NumPy reads all of x before it writes v: where x is another view of v's
    # array, or an array expression computed here reads one (A[k, :]), the
    # loop walks so as to read each element before it writes it
    reads = [expr.rhs] if isinstance(operand, ArrayValue) else \
        list(getattr(operand, "views_read", ()))
    keep_apart(t, expr, expr.lhs, expr.rhs)
    overlaps = [(expr, expr.lhs, read) for read in reads if views_overlap(t, expr.lhs, read)]
    backwards = walk_backwards(t, overlaps, len(view.dims) == 1) if overlaps else None
    rule = element_rule(expr.immutable_fn, view.is_complex)
    if rule is None:
        raise UnsupportedError(f"{where(expr.loc)}: in-place operator {expr.fn.__name__} on an "
                               "array in a parfor body")
    b = t.b
    note_use(t, view, reads=True, writes=True)
    with element_loops(t, view, backwards) as position:
        offset = element_offset(t, view, position, expr.loc)
        term = operand if isinstance(operand, (Value, Complex)) else \
            element_at(t, operand, position, expr.loc)
        old = load_number(b, view, offset)
        new = rule(b, [as_element(b, v, view.dtype, view.is_complex) for v in (old, term)],
                   view.dtype)
        write_element(t, view, offset, new, expr.loc)
    return view


# ---- boolean masks -----------------------------------------------------------------

def masked_length(t: Translation, array: MaskedArray, loc: ir.Loc) -> Value:
    """How many elements ``array`` has: the mask's true elements, counted."""
    b = t.b

    def count(k: Value, total: Value) -> Value:
        held = arith.cast(b, element_at(t, array.mask, [k], loc), _I64)
        return arith.binary(b, "arith.addi", total, held)

    return scf.fold(b, array.mask.dims[0], b.constant(0, _I64), count)


def masked_iteration(t: Translation, inner: Parfor) -> tuple[ir.Var, MaskedArray] | None:
    """``(x, x's MaskedArray)`` when ``inner`` loops over the elements of a
    masked array ``x`` (``for k in prange(x.shape[0])``) and reads ``x``
    only at ``k``, so that it can loop over the mask instead."""
    if len(inner.loop_nests) != 1:
        return None
    nest = inner.loop_nests[0]
    stop = t.definition(nest.stop) if isinstance(nest.stop, ir.Var) else None
    if not (isinstance(stop, ir.Expr) and stop.op == "static_getitem" and stop.index == 0):
        return None
    shape = t.definition(stop.value)
    if not (isinstance(shape, ir.Expr) and shape.op == "getattr" and shape.attr == "shape"):
        return None
    array = shape.value
    held = t.lookup(array)
    if not isinstance(held, MaskedArray):
        return None
    for block in inner.loop_body.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Del) or array.name not in {v.name for v in stmt.list_vars()}:
                continue
            value = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(value, ir.Expr) and value.op == "getitem"
                    and value.value.name == array.name
                    and value.index.name == nest.index_variable.name):
                refuse_masked_use(t, array, stmt.loc)
    return array, held


def mask_holds(t: Translation, array: MaskedArray, position: Value, loc: ir.Loc) -> Value:
    """Whether ``array``'s mask holds at ``position`` (an index value)."""
    return arith.cast(t.b, element_at(t, array.mask, [position], loc), BOOL)
