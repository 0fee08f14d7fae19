"""Rules of arrays and tuples in a body: reading and writing elements
(getitem, setitem), views and slices (``a[i]``, ``a[1:-1, :]``), arrays a body
makes (``np.empty``), and tuples built, unpacked and indexed.

An array is one flat memref (two floats per element for complex numbers), or
for a kernel's local array a SPIR-V Workgroup variable; ``element_offset``
turns indices into a position in it, from the array's
dimensions, or a view's strides and offset."""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import math
import operator
from collections.abc import Iterator
from typing import NoReturn

import numpy as np
from numba.core import ir, types
from numba.np import numpy_support

from ...dialects import INDEX, Builder, Complex, ScalarType, Value, arith, memref, spirv
from ...dialects.builder import located
from ...errors import UnsupportedError
from ..body_values import (
    ArrayValue,
    ComputedArray,
    MaskedArray,
    SliceValue,
    TupleValue,
    as_complex,
    slice_of,
)
from ..inplace_operators import stores_where_read
from ..literal_arguments import request_literal_arguments
from ..slice_assignments import broadcast_view
from ..translation import (
    SharedUpdate,
    Translation,
    call_rule,
    constant_value,
    expression_rule,
    index_of,
    literal,
    scalar_type,
    statement_rule,
    translate_expression,
    user_names,
)
from ..user_locations import where
from ..usm import empty_usm
from .body_checks import check_broadcast, checked_by_the_host


@expression_rule("getitem", "static_getitem")
def _getitem(t: Translation, expr: ir.Expr, target: ir.Var) -> object:
    base = t.lookup(expr.value)
    if isinstance(base, TupleValue) and expr.op == "static_getitem" \
            and isinstance(expr.index, int):
        return base.items[expr.index]
    if isinstance(base, TupleValue) and expr.op == "getitem":
        return _tuple_item(t, base, t.lookup(expr.index), expr.loc)
    if isinstance(base, ComputedArray):
        return _computed_element(t, base, _indices(t, expr), expr.loc)
    if isinstance(base, MaskedArray):
        refuse_masked_use(t, expr.value, expr.loc)
    if not isinstance(base, ArrayValue):
        raise UnsupportedError(f"{where(expr.loc)}: indexing a non-array in {t.body}")
    array, indices = base, _indices(t, expr)
    if any(isinstance(i, (ArrayValue, ComputedArray)) for i in indices):
        return _gather(t, array, indices, expr)
    if len(indices) < len(array.dims) or any(isinstance(i, SliceValue) for i in indices):
        return _view(t, array, indices, expr.loc)
    return read_element(t, array, indices, expr.loc)


def read_element(t: Translation, array: ArrayValue, indices: list[Value],
                 loc: ir.Loc) -> Value | Complex:
    """``array``'s element at ``indices`` (one per dimension): a number, or
    of a complex array a Complex."""
    note_use(t, array, reads=True)
    return load_number(t.b, array, element_offset(t, array, indices, loc))


def load_number(b: Builder, array: ArrayValue, offset: Value) -> Value | Complex:
    """``array``'s element at flat ``offset``: a number, or a Complex."""
    loaded = [load_element(b, array, at) for at in _float_offsets(b, array, offset)]
    return Complex(*loaded) if array.is_complex else loaded[0]


def _computed_element(t: Translation, array: ComputedArray, indices: list,
                      loc: ir.Loc) -> Value:
    """An element of an array the body computes where used (a product with a
    matrix, an array expression), at one integer index per dimension:
    computed here."""
    if len(indices) != len(array.dims) or not all(isinstance(i, Value) for i in indices):
        raise UnsupportedError(
            f"{where(loc)}: an array computed in a parfor body where it is read (a product "
            "with a matrix, an array expression, a copy) indexed with anything but one integer "
            "per dimension")
    return array.element([_position(t.b, i, dim, loc) for i, dim in zip(indices, array.dims)])


def _float_offsets(b: Builder, array: ArrayValue, offset: Value) -> list[Value]:
    """Where element ``offset`` is in the memref: one offset, or for complex
    numbers those of its real and imaginary parts."""
    if not array.is_complex:
        return [offset]
    real = arith.binary(b, "arith.muli", offset, b.index_constant(2))
    return [real, arith.binary(b, "arith.addi", real, b.index_constant(1))]


def _tuple_item(t: Translation, held: TupleValue, index: object, loc: ir.Loc) -> Value:
    """``tup[i]`` of a tuple of scalars of one type, for a variable ``i``: a
    select among the items (negative ``i`` counts from the end; like array
    indexing in a kernel, there is no bounds check)."""
    items = held.items
    if not (items and isinstance(index, Value) and all(isinstance(v, Value) for v in items)
            and len({v.type for v in items}) == 1):
        raise UnsupportedError(
            f"{where(loc)}: indexing a tuple with a variable unless its items are scalars "
            "of one type")
    b = t.b
    position = _position(b, index, b.index_constant(len(items)), loc)
    chosen = items[0]
    for k, item in enumerate(items[1:], start=1):
        chosen = arith.select(b, arith.compare(b, "eq", position, b.index_constant(k)), item,
                              chosen)
    return chosen


@expression_rule("build_tuple")
def _build_tuple(t: Translation, expr: ir.Expr, target: ir.Var) -> TupleValue:
    return TupleValue(tuple(t.lookup(item) for item in expr.items))


@expression_rule("exhaust_iter")
def _exhaust_iter(t: Translation, expr: ir.Expr, target: ir.Var) -> TupleValue:
    held = t.lookup(expr.value)
    if not isinstance(held, TupleValue) or len(held.items) != expr.count:
        raise UnsupportedError(f"{where(expr.loc)}: unpacking anything but a tuple")
    return held


@call_rule(np.empty, empty_usm)
def _private_array(t: Translation, expr: ir.Expr, target: ir.Var) -> ArrayValue:
    """``np.empty`` in a body (what np.zeros / np.ones in a parfor body become;
    dpnp's constructors inline to ``empty_usm``), of a shape known when
    compiling: an array of the work-item's own, made afresh in each
    iteration."""
    return allocate_array(t, target, _constant_shape(t, expr.args[0], expr.loc), _PRIVATE,
                          expr.loc)


@call_rule(np.zeros, np.ones)
def _filled_private_array(t: Translation, expr: ir.Expr, target: ir.Var) -> ArrayValue:
    """``np.zeros`` / ``np.ones`` in a kernel (Numba's parfor pass has made those
    of a parfor body into np.empty and a loop): a private array, filled."""
    shape = _constant_shape(t, expr.args[0], expr.loc)
    array = allocate_array(t, target, shape, _PRIVATE, expr.loc)
    filler = 0 if t.typemap[expr.func.name].typing_key is np.zeros else 1
    fill(t, array, math.prod(shape), filler, expr.loc)
    return array


_PRIVATE = "array made in a parfor body or kernel"


def _constant_shape(t: Translation, shape: ir.Var, loc: ir.Loc) -> tuple[int, ...]:
    found = constant_value(t, shape)
    found = found if isinstance(found, tuple) else (found,)
    if not all(isinstance(n, int) and n >= 0 for n in found):
        request_literal_arguments(t, shape)
        raise UnsupportedError(f"{where(loc)}: an {_PRIVATE} with a shape that is not a "
                               "constant or integer arguments of the function")
    return found


def fill(t: Translation, array: ArrayValue, elements: int, value: int, loc: ir.Loc) -> None:
    """Store ``value`` in each of the ``elements`` of ``array``'s flat memory."""
    b = t.b
    element = b.constant(value, array.dtype)
    first, end, one = b.index_constant(0), b.index_constant(elements), b.index_constant(1)
    position = Value(b.fresh(), INDEX)
    with b.region(f"scf.for {position.name} = {first.name} to {end.name} step {one.name}"):
        write_element(t, array, position, element, loc)
        b.emit("scf.yield")  # explicit: an implicit one has no location of the user's


def allocate_array(t: Translation, target: ir.Var, shape: tuple[int, ...], what: str,
                   loc: ir.Loc, storage: str = "Function") -> ArrayValue:
    """The array ``target`` of a constant ``shape`` that the kernel makes itself:
    the work-item's own (``Function`` storage, a memref.alloca in the entry
    block), or the work-group's (``Workgroup``: a SPIR-V variable of the
    module, which the atomics of kernel_atomics.py need a pointer to). Of
    complex numbers, each element is two floats."""
    element_type = t.typemap[target.name].dtype
    is_complex = isinstance(element_type, types.Complex)
    dtype = scalar_type(element_type.underlying_float if is_complex else element_type, what, loc)
    elements = max(math.prod(shape), 1) * (2 if is_complex else 1)
    name = t.b.fresh()
    # made in the entry block, at the line that makes the array (a refusal names it)
    if storage == "Workgroup":
        array_type = spirv.array_pointer_type(dtype, elements, storage)
        symbol = f"@local{len(t.variables)}"
        t.variables.append(f"spirv.GlobalVariable {symbol} : {array_type}")
        t.allocas.append(located(f"{name} = spirv.mlir.addressof {symbol} : {array_type}",
                                 t.b.location))
    else:
        array_type = f"memref<{elements}x{dtype.storage}, #spirv.storage_class<{storage}>>"
        t.allocas.append(located(f"{name} = memref.alloca() : {array_type}", t.b.location))
    dims = tuple(t.b.index_constant(n) for n in shape)
    return ArrayValue(target.name, name, dtype, dims, memref_type=array_type, is_complex=is_complex,
                      storage=storage if storage == "Workgroup" else None)


def load_element(b: Builder, array: ArrayValue, offset: Value) -> Value:
    """``array``'s element at flat ``offset`` (of a complex array, one part)."""
    if array.storage is not None:
        pointer = spirv.element_pointer(b, array.memref, array.memref_type, offset,
                                        array.dtype, array.storage)
        return spirv.load(b, pointer, array.dtype, array.storage)
    return memref.load(b, array.memref, array.dtype, offset, array.memref_type)


def store_element(b: Builder, value: Value, array: ArrayValue, offset: Value) -> None:
    if array.storage is not None:
        pointer = spirv.element_pointer(b, array.memref, array.memref_type, offset,
                                        array.dtype, array.storage)
        spirv.store(b, pointer, value, array.dtype, array.storage)
    else:
        memref.store(b, value, array.memref, array.dtype, offset, array.memref_type)


@call_rule(slice)
def _slice(t: Translation, expr: ir.Expr, target: ir.Var) -> SliceValue:
    """``slice(stop)``, ``slice(start, stop)``, ``slice(start, stop, step)``
    (what ``a[i:j]`` and ``a[:, i]`` build); the step must be a constant."""
    parts = [t.lookup(a) for a in expr.args]
    if len(parts) == 1:
        parts = [None] + parts
    step = None
    if len(parts) == 3:
        step_type = t.typemap[expr.args[2].name]
        if not isinstance(step_type, (types.NoneType, types.IntegerLiteral)):
            raise UnsupportedError(f"{where(expr.loc)}: slice with a variable step")
        step = getattr(step_type, "literal_value", None)
    return slice_of(parts[0], parts[1], step, expr.loc)


def _view(t: Translation, array: ArrayValue, indices: list, loc: ir.Loc) -> ArrayValue:
    """The view ``array[indices]``: an integer index drops its dimension, a
    slice keeps it with the slice's bounds, dimensions past the indices stay
    whole. The view shares the array's memref (and its use record)."""
    if array.gather is not None:
        raise UnsupportedError(f"{where(loc)}: a view of 'x[...]', the gather of array "
                               f"'{user_names([array.var])}', in a parfor body")
    if len(indices) > len(array.dims) or not all(isinstance(i, (Value, SliceValue))
                                                 for i in indices):
        raise UnsupportedError(
            f"{where(loc)}: array '{array.var}' indexed with anything but integers and "
            "slices in a parfor body")
    b = t.b
    offset = array.offset or b.index_constant(0)
    dims, strides = [], []
    for axis, (dim, stride) in enumerate(zip(array.dims,
                                             array.strides or _contiguous_strides(b, array.dims))):
        index = indices[axis] if axis < len(indices) else SliceValue(None, None, None)
        if isinstance(index, SliceValue):
            start, length = _slice_bounds(b, index, dim)
            dims.append(length)
            strides.append(arith.binary(b, "arith.muli", stride,
                                        b.index_constant(index.step or 1)))
        else:
            start = _position(b, index, dim, loc)
        offset = arith.binary(b, "arith.addi", offset, arith.binary(b, "arith.muli", start, stride))
    return dataclasses.replace(array, dims=tuple(dims), strides=tuple(strides), offset=offset)


@call_rule(broadcast_view)
def _broadcast_view(t: Translation, expr: ir.Expr, target: ir.Var) -> ArrayValue:
    """A view stored into a view of its rank, broadcast to it as NumPy stores
    it (slice_assignments.py): of the stored view's extents, a dimension of
    one element read at 0 (a stride of 0). The host checks the lengths
    before the launch (body_checks.py). Read at each element, it is read as
    if once before the store: an element that the store writes as well is
    of the same array, stored its own value."""
    value, view = (t.lookup(var) for var in expr.args)
    if not (isinstance(value, ArrayValue) and value.gather is None
            and isinstance(view, ArrayValue)):
        raise UnsupportedError(f"{where(expr.loc)}: a store into a view of anything but a view "
                               "of an array from a parfor body")
    check_broadcast(t, expr.args[0], expr.args[1], expr.loc)
    b = t.b
    zero, one = b.index_constant(0), b.index_constant(1)
    strides = value.strides or _contiguous_strides(b, value.dims)
    return dataclasses.replace(value, dims=view.dims, strides=tuple(
        arith.select(b, arith.compare(b, "eq", dim, one), zero, stride)
        for dim, stride in zip(value.dims, strides)))


def _gather(t: Translation, array: ArrayValue, indices: list,
            expr: ir.Expr) -> ArrayValue | MaskedArray:
    """``x[cols]`` of a vector ``x`` and a vector of integers ``cols``: the
    elements of ``x`` at ``cols``, read where they are used (spmv's
    ``vals @ x[cols]``), not copied into an array of the body's."""
    index_type = t.typemap[index_of(expr).name]
    if isinstance(index_type, types.Array) and isinstance(index_type.dtype, types.Boolean):
        return _masked(t, array, indices, expr.loc)
    if isinstance(indices[0], ComputedArray):
        raise UnsupportedError(f"{where(expr.loc)}: array '{user_names([array.var])}' indexed "
                               "with an array computed in the parfor body")
    if not (len(array.dims) == 1 and len(indices) == 1 and array.gather is None
            and isinstance(index_type, types.Array) and index_type.ndim == 1
            and isinstance(index_type.dtype, types.Integer)):
        raise UnsupportedError(
            f"{where(expr.loc)}: array '{user_names([array.var])}' indexed with an array in a "
            "parfor body: xpuc reads a vector at a vector of integers (x[cols]), nothing else")
    index = indices[0]
    return dataclasses.replace(array, dims=index.dims, gather=(array, index))


def _masked(t: Translation, array: ArrayValue, indices: list, loc: ir.Loc) -> MaskedArray:
    """``x[mask]`` of a vector ``x`` and a vector of booleans ``mask``: its
    elements where the mask holds, read by the loops over them
    (rules/computed_arrays.py). The lengths, which NumPy requires equal, are
    compared by the host before the launch."""
    mask = indices[0]
    name = user_names([array.var])
    if not (len(array.dims) == 1 and len(indices) == 1 and len(mask.dims) == 1
            and array.gather is None and not array.is_complex):
        raise UnsupportedError(
            f"{where(loc)}: array '{name}' indexed with a boolean array in a parfor body: xpuc "
            "reads a real vector at a vector of booleans, nothing else")
    length = mask.sizes[0] if isinstance(mask, ComputedArray) and mask.sizes else mask.dims[0]
    if not checked_by_the_host(t, array.dims[0], length, "boolean index did not match indexed "
                               "array along axis 0", loc, IndexError):
        raise UnsupportedError(
            f"{where(loc)}: array '{name}' indexed with a boolean array in a parfor body whose "
            "length xpuc cannot compare with the array's before the launch (a kernel cannot "
            "raise NumPy's IndexError)")
    return MaskedArray(array, mask)


def refuse_masked_use(t: Translation, array: ir.Var, loc: ir.Loc) -> NoReturn:
    """Refuse a use of ``x[mask]`` but a loop over its elements, which
    reads it in order (the element at a position is the mask's how-manyth
    true element: no kernel finds it cheaply)."""
    raise UnsupportedError(
        f"{where(loc)}: {t.operand(array)}, an array indexed with a boolean array, "
        "used in a parfor body otherwise than by a loop over its elements (np.sum, .mean(), "
        ".size, a prange)")


def _contiguous_strides(b: Builder, dims: tuple[Value, ...]) -> tuple[Value, ...]:
    strides = [b.index_constant(1)]
    for dim in reversed(dims[1:]):
        strides.insert(0, arith.binary(b, "arith.muli", strides[0], dim))
    return tuple(strides)


def _slice_bounds(b: Builder, s: SliceValue, dim: Value) -> tuple[Value, Value]:
    """The first position and the length of slice ``s`` of a dimension of
    ``dim`` elements, as Python's ``slice.indices`` computes them: negative
    bounds count from the end, then bounds are clipped to the dimension."""
    step = s.step or 1
    if s.start is None and s.stop is None and step == 1:  # the whole dimension, as it is
        return b.index_constant(0), dim
    one = b.index_constant(1)
    last = arith.binary(b, "arith.subi", dim, one)
    low, high = (b.index_constant(0), dim) if step > 0 else (b.index_constant(-1), last)

    def clipped(bound: Value | None, default: Value) -> Value:
        if bound is None:
            return default
        position = _wrapped(b, bound, dim)
        return arith.binary(b, "arith.maxsi", low, arith.binary(b, "arith.minsi", position, high))

    start = clipped(s.start, low if step > 0 else last)
    stop = clipped(s.stop, high if step > 0 else low)
    span = (arith.binary(b, "arith.subi", stop, start) if step > 0
            else arith.binary(b, "arith.subi", start, stop))
    count = arith.binary(b, "arith.ceildivsi", span, b.index_constant(abs(step)))
    return start, arith.binary(b, "arith.maxsi", count, b.index_constant(0))


def _wrapped(b: Builder, i: Value, dim: Value) -> Value:
    """Index ``i`` as a position: a negative one counts from the end, as in Python."""
    position = arith.cast(b, i, INDEX)
    if not i.type.is_signed:
        return position
    negative = arith.compare(b, "lt", position, b.index_constant(0))
    return arith.select(b, negative, arith.binary(b, "arith.addi", position, dim), position)


def _position(b: Builder, i: Value, dim: Value, loc: ir.Loc) -> Value:
    if i.type.is_float:
        raise UnsupportedError(f"{where(loc)}: float used as an index")
    return _wrapped(b, i, dim)


def _indices(t: Translation, node: ir.Expr | ir.Stmt) -> list:
    """The index items of a getitem/setitem node: integer values, slices."""
    static = isinstance(node, ir.StaticSetItem) or (
        isinstance(node, ir.Expr) and node.op == "static_getitem"
    )
    index = node.index
    index_var = node.index_var if static else index
    if index_var is not None:
        held = t.lookup(index_var)
        return list(held.items) if isinstance(held, TupleValue) else [held]
    # a constant index of a static_getitem / static_setitem
    return [literal(t, c, None, node.loc) if isinstance(c, slice)
            else t.b.constant(c, ScalarType("i", 64)) if isinstance(c, int) else c
            for c in (index if isinstance(index, tuple) else (index,))]


def element_offset(t: Translation, array: ArrayValue, indices: list, loc: ir.Loc) -> Value:
    """Offset of the element at ``indices`` (one integer value per dimension)."""
    if len(indices) != len(array.dims) or not all(isinstance(i, Value) for i in indices):
        raise UnsupportedError(
            f"{where(loc)}: array '{array.var}' indexed with anything but one "
            f"integer per dimension (slices or partial indexing) in a parfor body"
        )
    b = t.b
    if array.gather is not None:  # the source's element at the index vector's element
        source, index = array.gather
        note_use(t, index, reads=True)
        at = load_element(b, index, element_offset(t, index, indices, loc))
        return element_offset(t, source, [at], loc)
    positions = [_position(b, i, dim, loc) for i, dim in zip(indices, array.dims)]
    if array.strides is not None:
        offset = memref.strided_offset(b, positions, array.strides)
    else:
        offset = memref.linear_index(b, positions, array.dims)
    return offset if array.offset is None else arith.binary(b, "arith.addi", array.offset, offset)


def note_use(t: Translation, array: ArrayValue, reads: bool = False, writes: bool = False) -> None:
    """Record how the kernel uses an argument array (local arrays are its own)."""
    use = t.arrays.get(array.var)
    if use is not None:
        use.reads |= reads
        use.writes |= writes


def stores_own_update(t: Translation, stmt: ir.SetItem | ir.StaticSetItem) -> bool:
    """Whether ``stmt`` is the store that ends ``a[i] op= x`` of a view
    ``a[i]``: Python's ``a[i] = a[i].__iop__(x)``, the view stored over itself."""
    update = t.definition(stmt.value)
    return isinstance(update, ir.Expr) and update.op == "inplace_binop" and isinstance(
        t.typemap[update.lhs.name], types.Array) and stores_where_read(
        stmt, t.definition(update.lhs), t.typemap)


@statement_rule(ir.SetItem, ir.StaticSetItem)
def _setitem(t: Translation, stmt: ir.SetItem | ir.StaticSetItem) -> None:
    array = t.lookup(stmt.target)
    if not isinstance(array, ArrayValue):
        raise UnsupportedError(f"{where(stmt.loc)}: item assignment to a non-array")
    if array.gather is not None:
        raise UnsupportedError(f"{where(stmt.loc)}: assignment to an element of a gather of "
                               f"array '{user_names([array.var])}' (a copy) in a parfor body")
    note_use(t, array, writes=True)
    if stores_own_update(t, stmt):
        return  # ``a[i] op= x`` of a view: the operator wrote its elements
    indices = _indices(t, stmt)
    update = t.shared_updates.get(stmt)
    if update is not None:
        note_use(t, array, reads=True)
        _update_atomically(t, array, element_offset(t, array, indices, stmt.loc), update,
                           stmt.loc)
        return
    held = t.lookup(stmt.value)
    if isinstance(held, ArrayValue) and not held.dims:
        # a 0-d array stores its one element, as NumPy broadcasts it (``out[:] = z``)
        held = read_element(t, held, [], stmt.loc)
    if len(indices) < len(array.dims) or any(isinstance(i, SliceValue) for i in indices):
        _fill(t, _view(t, array, indices, stmt.loc), held, stmt.loc)
    else:
        write_element(t, array, element_offset(t, array, indices, stmt.loc), held, stmt.loc)


# element types SPIR-V has atomics of (as kind, bits): floats through their bits
ATOMIC_ELEMENTS = {("i", 32), ("i", 64), ("u", 32), ("u", 64), ("f", 32), ("f", 64)}

# SPIR-V's atomic of an update whose combining is one (signed, unsigned), used
# where it computes what the body's expression would: on integers, with an
# integer operand (the expression's callee -> the atomics)
_INTEGER_ATOMICS = {
    operator.add: ("AtomicIAdd",) * 2,
    operator.sub: ("AtomicISub",) * 2,
    builtins.min: ("AtomicSMin", "AtomicUMin"),
    builtins.max: ("AtomicSMax", "AtomicUMax"),
    np.minimum: ("AtomicSMin", "AtomicUMin"),
    np.maximum: ("AtomicSMax", "AtomicUMax"),
}


def global_element_pointer(t: Translation, array: ArrayValue, offset: Value) -> Value:
    """The pointer to element ``offset`` of argument array ``array``, through
    the array passed again as a SPIR-V pointer (atomics need one)."""
    pointer_type = f"!spirv.ptr<{array.dtype.mlir}, CrossWorkgroup>"
    return spirv.pointer_element(t.b, t.pointer_param(array.var, pointer_type), offset,
                                 array.dtype, "CrossWorkgroup")


def _update_atomically(t: Translation, array: ArrayValue, offset: Value, update: SharedUpdate,
                       loc: ir.Loc) -> None:
    """``a[k] = f(a[k], x)`` as one atomic update of the element: SPIR-V's
    integer atomic where one computes f, else a compare-exchange loop that
    computes f by the body's own expression, as the plain store would have."""
    dtype = array.dtype
    if array.is_complex or array.storage is not None \
            or (dtype.kind, dtype.bits) not in ATOMIC_ELEMENTS:
        element_type = "complex" if array.is_complex else dtype.mlir
        raise UnsupportedError(
            f"{where(loc)}: array '{array.var}' of {element_type} elements updated at an index "
            "that several iterations may share: only int32, int64, float32 and float64 "
            "elements can be updated atomically")
    b, combine = t.b, update.combine
    # the other operands' values, taken once, outside the compare-exchange loop
    operands = [v for v in combine.list_vars() if v.name != update.read.name]
    for var in operands:
        t.lookup(var)
    element = global_element_pointer(t, array, offset)
    integer_op = _integer_atomic(t, update, t.typemap[array.var].dtype)
    if integer_op is not None:
        operand = next(v for v in _combined_values(combine) if v.name != update.read.name)
        spirv.atomic(b, integer_op, element, dtype, "CrossWorkgroup", "Device",
                     [arith.cast(b, t.value(operand), dtype)])
        return

    def combined(old: Value) -> Value:
        held, was_local = t.env.get(update.read.name), update.read.name in t.local
        t.env[update.read.name] = old
        t.local.add(update.read.name)
        try:
            new = translate_expression(t, combine, update.result)
        finally:
            t.env[update.read.name] = held
            if not was_local:
                t.local.discard(update.read.name)
        return arith.cast(b, new, dtype)

    spirv.atomic_update_loop(b, element, dtype, "CrossWorkgroup", "Device", combined)


def _combined_values(combine: ir.Expr) -> list[ir.Var]:
    """The values an update's expression combines: a binop's operands, a call's arguments."""
    return [combine.lhs, combine.rhs] if combine.op in ("binop", "inplace_binop") \
        else list(combine.args)


def _integer_atomic(t: Translation, update: SharedUpdate, element: types.Type) -> str | None:
    """SPIR-V's integer atomic that computes the update exactly, or None: the
    element and the expression's result are integers, the other operand an
    integer that the element type holds (min and max compare it unconverted),
    and a subtraction takes it from the element, not the element from it."""
    combine = update.combine
    key = combine.fn if combine.op != "call" else t.typemap[combine.func.name].typing_key
    key = {operator.iadd: operator.add, operator.isub: operator.sub}.get(key, key)
    values = _combined_values(combine)
    if key not in _INTEGER_ATOMICS or not isinstance(element, types.Integer) or len(values) != 2:
        return None
    other = values[1] if values[0].name == update.read.name else values[0]
    other_type = types.unliteral(t.typemap[other.name])
    result_type = t.calltypes[combine].return_type
    if not (isinstance(other_type, types.Integer) and isinstance(result_type, types.Integer)):
        return None
    if key is operator.sub and values[0].name != update.read.name:
        return None
    if key not in (operator.add, operator.sub) and not np.can_cast(
            numpy_support.as_dtype(other_type), numpy_support.as_dtype(element), "safe"):
        return None
    return _INTEGER_ATOMICS[key][0 if element.signed else 1]


def write_element(t: Translation, array: ArrayValue, offset: Value, held: object,
                  loc: ir.Loc) -> None:
    """Store number ``held`` (a Complex into a complex array) at flat ``offset``."""
    if not isinstance(held, (Value, Complex)) or isinstance(held, Complex) and \
            not array.is_complex:
        raise UnsupportedError(f"{where(loc)}: assigning anything but a number to an array "
                               "element or slice in a parfor body")
    if array.is_complex:
        complex_value = as_complex(t.b, held, array.dtype)
        values = [complex_value.real, complex_value.imag]
    else:
        values = [arith.cast(t.b, held, array.dtype)]
    for value, at in zip(values, _float_offsets(t.b, array, offset)):
        store_element(t.b, value, array, at)


@contextlib.contextmanager
def element_loops(t: Translation, view: ArrayValue,
                  backwards: Value | None = None) -> Iterator[list[Value]]:
    """A serial loop nest over every element of ``view``, inside the
    work-item: its body is the ``with`` block, given the element's position;
    the loop over a 1-D view walks from its end where ``backwards`` holds."""
    b = t.b
    zero, one = b.index_constant(0), b.index_constant(1)
    with contextlib.ExitStack() as loops:
        positions = []
        for dim in view.dims:
            position = Value(b.fresh(), INDEX)
            loops.enter_context(b.region(
                f"scf.for {position.name} = {zero.name} to {dim.name} step {one.name}"))
            positions.append(position)
        if backwards is not None:
            last = arith.binary(b, "arith.subi", view.dims[0], one)
            positions[0] = arith.select(b, backwards, arith.binary(
                b, "arith.subi", last, positions[0]), positions[0])
        yield positions


def _fill(t: Translation, view: ArrayValue, held: object, loc: ir.Loc) -> None:
    """``a[i] = x`` / ``a[i, 1:] = x`` of a number ``x`` that Numba left in the
    body."""
    with element_loops(t, view) as positions:
        write_element(t, view, element_offset(t, view, positions, loc), held, loc)
