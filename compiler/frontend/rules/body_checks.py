"""Rules of the checks that NumPy functions and Numba's array analysis put
in a parfor body, and of where a reduction of a body's view starts
(``np.max(x[i])``, ``np.dot(a[j, :], b[j, :])``, ``acc += x[i]``): the parfor
pass inlines a NumPy function as a serial loop in the body, starting from the
type's smallest or largest value (``get_type_min_value``), after a call that
raises NumPy's ValueError on shapes it cannot reduce; array analysis asserts
that arrays an operation combines have equal sizes (``assert_equiv``). A
kernel cannot raise, so:

- the empty-array checks of ``np.min`` / ``np.max`` (Numba's) emit nothing:
  an empty array's minimum or maximum in a body is the reduction's start
  value (the type's largest or smallest value, infinities for floats), as an
  index out of bounds goes unchecked in a kernel;
- a size check (``np.dot``'s lengths, array analysis's sizes) passes where
  the sizes are computed alike in the body (``a[j, :]`` twice, equal
  constants); where they are dimensions of arrays from outside the body
  (``acc`` and ``a[i]``'s, ``a.shape[1]``), or lengths of slices of such
  dimensions with bounds the same in every iteration (``row[2:5]`` and
  ``row[0:3]``), the host computes and compares them before the launch and
  raises AssertionError, as Numba's check would; anything else is refused,
  since the body would read past the shorter array.
"""

from __future__ import annotations

import builtins
import operator
import re

from numba.core import ir, types
from numba.parfors import array_analysis, parfor

from ...dialects import Value
from ...errors import UnsupportedError
from ..body_values import ArrayValue, ComputedArray, TupleValue
from ..numpy_functions import check_matrix_sizes, check_vector_sizes
from ..parfor_updates import IterationOwnership
from ..slice_assignments import broadcast_view
from ..translation import (
    FrozenPolynomial,
    KernelParam,
    SizeCheck,
    SliceLength,
    Translation,
    call_rule,
    constant_value,
    scalar_type,
    user_names,
)
from ..user_locations import where


@call_rule(parfor.get_type_min_value, parfor.get_type_max_value)
def _extreme_value(t: Translation, expr: ir.Expr, target: ir.Var) -> Value:
    """The smallest or largest value of a number type (infinities for floats),
    where a min or max reduction starts."""
    nbtype = t.calltypes[expr].return_type
    smallest = t.typemap[expr.func.name].typing_key is parfor.get_type_min_value
    if isinstance(nbtype, types.Float):
        value = -float("inf") if smallest else float("inf")
    else:
        value = nbtype.minval if smallest else nbtype.maxval
    return t.b.constant(value, scalar_type(nbtype, "a reduction's start", expr.loc))


@call_rule(parfor.min_checker, parfor.max_checker)
def _empty_reduction_check(t: Translation, expr: ir.Expr, target: ir.Var) -> None:
    return None


# NumPy's messages of np.dot's size checks, by the check xpuc's np.dot calls
_DOT_SIZES = {
    check_vector_sizes: "incompatible array sizes for np.dot(a, b) (vector * vector)",
    check_matrix_sizes: "incompatible array sizes for np.dot(a, b) (matrix * matrix)",
}


@call_rule(check_vector_sizes, check_matrix_sizes)
def _dot_sizes_check(t: Translation, expr: ir.Expr, target: ir.Var) -> None:
    """``np.dot``'s check of the lengths it pairs (a vector's, a matrix's
    columns and the other's rows)."""
    first, second = expr.args
    message = _DOT_SIZES[t.typemap[expr.func.name].typing_key]
    dimensions = _dimension_of(t, _defined(t, first)), _dimension_of(t, _defined(t, second))
    if not (same_value(t, first, second) or checked_by_the_host(
            t, _size(t, first), _size(t, second), message, expr.loc, ValueError)
            or None not in dimensions and equal_extents(t, *dimensions, message, expr.loc,
                                                        ValueError)):
        raise UnsupportedError(
            f"{where(expr.loc)}: np.dot of arrays in a parfor body whose lengths xpuc "
            "cannot compare before the launch (a kernel cannot raise NumPy's error for "
            "arrays of different lengths)")
    return None


@call_rule(array_analysis.assert_equiv)
def _equal_sizes(t: Translation, expr: ir.Expr, target: ir.Var) -> None:
    """Array analysis's ``assert_equiv(message, x, y, ...)``: the shapes (or
    sizes) of ``x``, ``y``, ... are equal."""
    # a dimension of a view broadcast to the view it is stored into is that
    # view's (checked where it is made: check_broadcast)
    operands = [var for var in expr.args[1:] if not _broadcast_dimension(t, var)]
    if len(operands) < 2:
        return None
    shapes = [_shape(t, var) for var in operands]
    first = operands[0]
    if None in shapes or len({len(shape) for shape in shapes}) != 1:
        raise UnsupportedError(f"{where(expr.loc)}: sizes of {_named(t, first)} and others "
                               "compared in a parfor body")
    for var, shape in zip(operands[1:], shapes[1:]):
        message = f"sizes of {_named(t, first)} and {_named(t, var)} do not match"
        for size, other in zip(shapes[0], shape):
            if not (size.name == other.name or checked_by_the_host(t, size, other, message,
                                                                     expr.loc)
                    or len(shape) == 1 and (equal_origins(t, size_origin(t, first),
                                                          size_origin(t, var), message,
                                                          expr.loc, AssertionError)
                                            or _lengths_checked_by_the_host(t, first, var,
                                                                            message, expr.loc))):
                raise UnsupportedError(
                    f"{where(expr.loc)}: the sizes of {_named(t, first)} and "
                    f"{_named(t, var)} in a parfor body, which xpuc cannot compare before "
                    "the launch (a kernel cannot raise Numba's error when they differ)")
    return None


def _view_text(t: Translation, var: ir.Var) -> str:
    """A view of slices of an array of the user's as the user could write it
    (``'row[:1]'``, ``'row[-3:]'``), else as ``Translation.operand`` names it."""
    view = _view_of(t, var)
    if view is None or view[0].name.startswith("$") or len(view[1]) != 1:
        return t.operand(var)
    base, (cut,) = view
    bounds = _slice_bounds(t, cut, base, 0)
    extent = t.lookup(base).dims[0].name if isinstance(t.lookup(base), ArrayValue) else None
    if bounds is None or bounds[2][0] is not None or extent is None:
        return t.operand(var)
    # the variable holding the extent, which array analysis adds a negative bound to
    held = [operand for bound, _ in bounds[:2] if bound is not None
            for operand in [bound, *getattr(_defined(t, bound), "list_vars", list)()]
            if _dimension_of(t, _defined(t, operand)) is not None
            and _size(t, operand).name == extent]
    size = held[0] if held else base
    (start, _), (stop, to_end) = bounds[:2]
    texts = ["" if start is None else _bound_text(t, start, size),
             "" if to_end else _bound_text(t, stop, size)]
    return t.operand(var) if None in texts else \
        f"'{user_names([base.name])}[{texts[0]}:{texts[1]}]'"


def _broadcast_dimension(t: Translation, var: ir.Var) -> bool:
    """Whether ``var`` is a dimension of ``broadcast_view(v, view)``."""
    dimension = _dimension_of(t, _defined(t, var))
    call = None if dimension is None else _defined(t, dimension[0])
    return isinstance(call, ir.Expr) and call.op == "call" and getattr(
        t.typemap[call.func.name], "typing_key", None) is broadcast_view


def _named(t: Translation, var: ir.Var) -> str:
    """An ``assert_equiv`` operand as a message names it: array analysis
    passes the arrays, or its own variables of their sizes."""
    if _slice_length(t, _defined(t, var)) is not None:
        return _slice_text(t, var) or "a slice"
    if not isinstance(t.typemap[var.name], types.Array):
        # array analysis's own size variables: ``x_size1`` (x.shape[1]), ``var``
        size = _ANALYSIS_SIZE.match(var.name)
        if size is not None and not size["array"].startswith("$"):
            return f"'{user_names([size['array']])}'.shape[{size['axis']}]"
        dimension = _dimension_of(t, _defined(t, var))
        array = None if dimension is None else _indexed_text(t, dimension[0])
        if array is not None and array.startswith("'"):  # 'y[i]'.shape[0]
            return f"{array}.shape[{dimension[1]}]"
        if var.name.split(".")[0] in _ANALYSIS_LENGTHS:
            return "a length computed in the body"
    named = t.operand(var)
    return "an array" if named == "a value" else named


def _indexed_text(t: Translation, array: ir.Var) -> str:
    """An array as a message names it; one the body indexes out of a user's
    array by the user's variables and constants, as written (``'y[i]'``)."""
    definition = _defined(t, array)
    if isinstance(definition, ir.Expr) and definition.op in ("getitem", "static_getitem") \
            and not definition.value.name.startswith("$"):
        index = definition.index if definition.op == "getitem" else definition.index_var
        items = _defined(t, index) if isinstance(index, ir.Var) else None
        items = items.items if isinstance(items, ir.Expr) and items.op == "build_tuple" \
            else [index]
        texts = [_index_text(t, item) for item in items]
        if None not in texts:
            return f"'{user_names([definition.value.name])}[{', '.join(texts)}]'"
    return t.operand(array)


def _index_text(t: Translation, item: object) -> str | None:
    """An index as the user wrote it: a variable of theirs (the prange's
    index by the name the body gives it, ``i = parfor_index``) or an integer."""
    if not isinstance(item, ir.Var):
        return None
    value = _constant(t, item)
    if isinstance(value, int):
        return str(value)
    if item.name in {nest.index_variable.name for nest in t.parfor.loop_nests}:
        names = [stmt.target.name for block in t.parfor.loop_body.values()
                 for stmt in block.find_insts(ir.Assign)
                 if isinstance(stmt.value, ir.Var) and stmt.value.name == item.name
                 and not stmt.target.name.startswith("$")]
        return user_names(names[:1]) if names else None
    return None if item.name.startswith("$") else user_names([item.name])


_ANALYSIS_SIZE = re.compile(r"(?P<array>.+)_size(?P<axis>\d+)\.\d+$")
_ANALYSIS_LENGTHS = {"var", "wrap", "post_wrap_slice_size", "size", "nonnegative_slice_size"}


def _shape(t: Translation, var: ir.Var) -> tuple[Value, ...] | None:
    """The sizes an ``assert_equiv`` operand stands for: an array's
    dimensions, a tuple's items, an integer."""
    held = t.lookup(var)
    if isinstance(held, (ArrayValue, ComputedArray)):
        return held.dims
    if isinstance(held, TupleValue) and all(isinstance(v, Value) for v in held.items):
        return tuple(_size(t, item) if isinstance(item, ir.Var) else item
                     for item in held.items)
    return (_size(t, var),) if isinstance(held, Value) else None


def _size(t: Translation, var: ir.Var) -> Value:
    """The value of a size ``var``; of ``x.shape[k]``, the array's dimension
    itself (a kernel parameter where ``x`` is an array from outside or a
    view of it keeping that dimension whole); of the length array analysis
    computes of a slice keeping a dimension whole, that dimension."""
    definition = t.definition(var)
    length = _slice_length(t, _defined(t, var))
    if length is not None and length[0] == ((None, False), (length[0][1][0], True),
                                            (None, False)):
        return length[1]
    if isinstance(definition, ir.Expr) and definition.op in ("getitem", "static_getitem"):
        index = definition.index if definition.op == "static_getitem" else \
            constant_value(t, definition.index)
        shape = t.definition(definition.value)
        if isinstance(index, int) and isinstance(shape, ir.Expr) and shape.op == "getattr" \
                and shape.attr == "shape":
            array = t.lookup(shape.value)
            if isinstance(array, (ArrayValue, ComputedArray)) and \
                    -len(array.dims) <= index < len(array.dims):
                if isinstance(array, ComputedArray) and array.sizes is not None:
                    return array.sizes[index]  # as the body's variables hold them
                return array.dims[index]
    return t.value(var)


# a slice's bound: its variable (None where left out), and whether it is the
# size of the dimension it cuts
Bound = tuple[ir.Var | None, bool]
# A length in a body as a slice of an extent: the slice's start, stop and step,
# and the extent it cuts (an index value)
Origin = tuple[tuple[Bound, Bound, Bound], Value]
_WHOLE = ((None, False), (None, True), (None, False))  # no slice


def equal_extents(t: Translation, first: tuple[ir.Var, int], second: tuple[ir.Var, int],
                  message: str, loc: ir.Loc, exception: type[Exception]) -> bool:
    """Whether dimension ``first[1]`` of array ``first[0]`` and dimension
    ``second[1]`` of ``second[0]`` are equal in every iteration: computed
    alike, or the same slice (or none) of dimensions of arrays from outside
    the body (``A[i + 1:, i]`` and ``B[i + 1:, j]``), which the host then
    compares before the launch, raising ``exception`` with ``message``."""
    if first[1] == second[1] and _same_dimension(t, first[0], second[0], first[1], 0):
        return True
    return equal_origins(t, dimension_origin(t, *first), dimension_origin(t, *second),
                         message, loc, exception)


def equal_origins(t: Translation, origin: Origin | None, other: Origin | None, message: str,
                  loc: ir.Loc, exception: type[Exception]) -> bool:
    """Whether lengths of these origins are equal in every iteration: the same
    slice (or none) of extents the host then compares before the launch,
    raising ``exception`` with ``message``."""
    if origin is None or other is None or \
            not all(_same_bound(t, *pair) for pair in zip(origin[0], other[0])):
        return False
    return checked_by_the_host(t, origin[1], other[1], message, loc, exception)


def dimension_origin(t: Translation, var: ir.Var, axis: int, depth: int = 0) -> Origin | None:
    """Where dimension ``axis`` of array ``var`` comes from, if known: a
    gather (``x[cols]``) has its index vector's dimension, a view the slice
    of its array's dimension that makes it, an array the body computes
    (a product) the origin it records."""
    view = _view_of(t, var)
    if view is None:
        held = t.lookup(var)
        if isinstance(held, ComputedArray):
            return held.origins[axis] if 0 <= axis < len(held.origins) else None
        return (_WHOLE, held.dims[axis]) if isinstance(held, ArrayValue) and \
            0 <= axis < len(held.dims) else None
    base, indices = view
    kinds = [t.typemap[item.name] for item in indices]
    if depth > 8:
        return None
    if len(indices) == 1 and isinstance(kinds[0], types.Array):
        return dimension_origin(t, indices[0], axis, depth + 1)
    sliced = [k for k, kind in enumerate(kinds) if isinstance(kind, types.SliceType)]
    if axis >= len(sliced):  # a dimension of the array past the indices, whole
        return dimension_origin(t, base, len(indices) + axis - len(sliced), depth + 1)
    held = t.lookup(base)
    # of a view, a dimension it keeps whole of an array from outside (``row = x[i]``)
    if not isinstance(held, ArrayValue) or _view_of(t, base) is not None and \
            t.size_param(held.dims[sliced[axis]]) is None:
        return None
    bounds = _slice_bounds(t, indices[sliced[axis]], base, sliced[axis])
    return None if bounds is None else (bounds, held.dims[sliced[axis]])


def size_origin(t: Translation, var: ir.Var) -> Origin | None:
    """Where the size ``var`` comes from: ``x.shape[k]`` of an array or of a
    product (rules/products.py), the length of a vector ``var``, or the
    length Numba's array analysis computes of a slice, ``wrap_index(stop, n)
    - wrap_index(start, n)``."""
    definition = _defined(t, var)
    dimension = (var, 0) if isinstance(t.typemap[var.name], types.Array) else \
        _dimension_of(t, definition)
    if dimension is not None:
        held = t.lookup(dimension[0])
        if isinstance(held, ComputedArray):
            return held.origins[dimension[1]] if dimension[1] < len(held.origins) else None
        return dimension_origin(t, *dimension)
    return _slice_length(t, definition)


def _slice_length(t: Translation, definition: object) -> Origin | None:
    """The slice and extent of ``wrap_index(stop, n) - wrap_index(start, n)``
    (or ``- 0``, of a start of 0), the length Numba's array analysis computes
    of a slice, or of that length clipped at 0 (empty_slices.py), else None."""
    parts = _slice_parts(t, definition)
    if parts is None:
        return None
    start, stop, size = parts
    is_extent = same_value(t, stop, size)
    first = None if start is None or _constant(t, start) == 0 else start  # 0 is the default
    return ((first, False), (stop, is_extent), (None, False)), _size(t, size)


def _slice_parts(t: Translation, definition: object
                 ) -> tuple[ir.Var | None, ir.Var, ir.Var] | None:
    """``(start, stop, n)`` of a slice length as ``_slice_length`` reads it
    (start None where array analysis subtracts 0), else None."""
    if (isinstance(definition, ir.Expr) and definition.op == "call" and len(definition.args) == 2
            and getattr(t.typemap[definition.func.name], "typing_key", None) is builtins.max
            and _constant(t, definition.args[1]) == 0):
        definition = _defined(t, definition.args[0])
    if not (isinstance(definition, ir.Expr) and definition.op == "binop"
            and definition.fn is operator.sub):
        return None
    wraps = [_wrapped_index(t, v) for v in (definition.lhs, definition.rhs)]
    from_zero = wraps[1] is None and _constant(t, definition.rhs) == 0
    if wraps[0] is None or wraps[1] is None and not from_zero:
        return None
    (stop, size), (start, other_size) = wraps[0], wraps[1] or (None, None)
    if not (from_zero or same_value(t, size, other_size)):
        return None
    return start, stop, size


def _slice_text(t: Translation, length: ir.Var) -> str | None:
    """The slice whose length array analysis computes in ``length`` as the
    user could write it, cutting the dimension it cuts: ``'row[2:5]'``,
    ``'x[:, 1:]'`` (of ``x[i, 1:]``), ``'row[-3:]'``; None where its array or
    a bound has no name in the user's code."""
    parts = _slice_parts(t, _defined(t, length))
    if parts is None:
        return None
    start, stop, size = parts
    of_array = _dimension_of(t, _defined(t, size))
    # else the size of an array from outside the body: ``x_size1``
    named = _ANALYSIS_SIZE.match(size.name) if of_array is None else None
    array, axis = (of_array[0].name, of_array[1]) if of_array else \
        (named["array"], int(named["axis"])) if named else ("$", 0)
    if array.startswith("$"):
        return None
    bounds = ["" if start is None else _bound_text(t, start, size),
              "" if same_value(t, stop, size) else _bound_text(t, stop, size)]
    if None in bounds:
        return None
    return f"'{user_names([array])}[{':, ' * axis}{bounds[0]}:{bounds[1]}]'"


_OPERATORS = {operator.add: "+", operator.sub: "-", operator.mul: "*"}


def _bound_text(t: Translation, bound: ir.Var, size: ir.Var, depth: int = 0) -> str | None:
    """A slice's bound as the user wrote it: a constant, a variable, ``+``,
    ``-``, ``*`` of those; a negative constant ``c`` that array analysis
    writes as ``n + c`` of the dimension ``n``, as ``c``; else None."""
    value = _constant(t, bound)
    if isinstance(value, int):
        return str(value)
    definition = _defined(t, bound)
    if isinstance(definition, ir.Expr) and definition.op == "binop" and \
            definition.fn is operator.add and same_value(t, definition.lhs, size):
        return _bound_text(t, definition.rhs, size, depth + 1)
    if not bound.name.startswith("$"):
        return user_names([bound.name])
    if depth > 4 or not (isinstance(definition, ir.Expr) and definition.op == "binop"
                         and definition.fn in _OPERATORS):
        return None
    operands = [_bound_text(t, var, size, depth + 1) for var in (definition.lhs, definition.rhs)]
    if None in operands:
        return None
    right = operands[1]
    if isinstance(_defined(t, definition.rhs), ir.Expr) and definition.rhs.name.startswith("$"):
        right = f"({right})"  # a - (b + c)
    return f"{operands[0]} {_OPERATORS[definition.fn]} {right}"


def _wrapped_index(t: Translation, var: ir.Var) -> tuple[ir.Var, ir.Var] | None:
    """``(index, n)`` of ``var = wrap_index(index, n)``, else None."""
    call = _defined(t, var)
    if isinstance(call, ir.Expr) and call.op == "call" and len(call.args) == 2 and getattr(
            t.typemap[call.func.name], "typing_key", None) is array_analysis.wrap_index:
        return call.args[0], call.args[1]
    return None


def _slice_bounds(t: Translation, cut: ir.Var | None, array: ir.Var,
                  axis: int) -> tuple[Bound, Bound, Bound] | None:
    """Start, stop and step of ``slice(...)`` ``cut`` of dimension ``axis``
    of ``array`` (all left out where it does not cut), or None for anything
    but a slice call. Numba's array analysis writes a left-out stop as the
    dimension's own size (``A[i + 1:]`` cuts ``slice(i + 1, A_size0)``), which
    its equivalence classes know."""
    if cut is None:
        return _WHOLE
    call = _defined(t, cut)
    if not (isinstance(call, ir.Expr) and call.op == "call" and not call.kws
            and getattr(t.typemap[call.func.name], "typing_key", None) is slice):
        return None
    equivalences = t.parfor.equiv_set
    classes = equivalences.get_shape_classes(array.name) if equivalences else ()
    extent = classes[axis] if axis < len(classes) else -1
    args = [None, *call.args] if len(call.args) == 1 else list(call.args)
    args += [None] * (3 - len(args))
    # a start of 0 and a step of 1 are the slice's defaults (Numba's array
    # analysis writes ``data[:, i]`` as ``slice(zero, data_size0)``)
    bounds = [None if var is None or isinstance(t.typemap[var.name], types.NoneType)
              or k != 1 and _constant(t, var) == (0, None, 1)[k] else var
              for k, var in enumerate(args)]
    stop = bounds[1]
    is_extent = stop is None or extent != -1 and \
        equivalences.obj_to_ind.get(stop.name) == extent or \
        _dimension_of(t, _defined(t, stop)) is not None and \
        _size(t, stop).name == t.lookup(array).dims[axis].name
    return (bounds[0], False), (stop, is_extent), (bounds[2], False)


def _constant(t: Translation, var: ir.Var) -> object:
    """The value of ``var`` when compiling, from the body or from Numba's
    equivalence classes (which know the constants of the function)."""
    value = constant_value(t, var)
    if value is None and t.parfor.equiv_set is not None:
        value = t.parfor.equiv_set.get_equiv_const(var.name)
    return value


def _same_bound(t: Translation, bound: Bound, other: Bound) -> bool:
    """Whether two slices' bounds are equal: both left out, computed alike,
    or each the size of the dimension it cuts (which the host compares)."""
    (var, is_extent), (other_var, other_is_extent) = bound, other
    if var is None or other_var is None:
        return var is other_var or is_extent and other_is_extent
    return same_value(t, var, other_var) or is_extent and other_is_extent


def _defined(t: Translation, var: ir.Var) -> object:
    """What ``var`` is assigned, through variables assigned each other."""
    definition = t.definition(var)
    while isinstance(definition, ir.Var):
        definition = t.definition(definition)
    return definition


def checked_by_the_host(t: Translation, size: Value, other: Value, message: str,
                         loc: ir.Loc, exception: type[Exception] = AssertionError) -> bool:
    """Whether ``size`` and ``other`` are dimensions of arrays from outside
    the body or integers from there, which the host then checks equal before
    the launch."""
    if size.name == other.name:
        return True
    params = t.size_param(size), t.size_param(other)
    if None in params:
        return False
    t.size_checks.append(SizeCheck(*params, f"{where(loc)}: {message}", exception))
    return True


def _lengths_checked_by_the_host(t: Translation, size: ir.Var, other: ir.Var, message: str,
                                 loc: ir.Loc) -> bool:
    """Whether the sizes ``size`` and ``other`` are each a dimension of an
    array from outside the body, an integer from there, or the length of a
    slice of such a dimension whose bounds are the same in every iteration
    (``row[2:5]`` and ``row[0:3]`` of ``row = x[i]``): the host then computes
    and compares them before the launch, raising AssertionError."""
    lengths = _host_length(t, size), _host_length(t, other)
    if None in lengths:
        return False
    t.size_checks.append(SizeCheck(*lengths, f"{where(loc)}: {message}", AssertionError))
    return True


def _host_length(t: Translation, var: ir.Var) -> KernelParam | SliceLength | None:
    """The size ``var`` as the host can compute it (see above), else None."""
    param = t.size_param(_size(t, var))
    if param is not None:
        return param
    origin = _slice_length(t, _defined(t, var))
    return None if origin is None else _origin_length(t, origin)


def _origin_length(t: Translation, origin: Origin) -> SliceLength | None:
    """The length of a slice without a step of an extent from outside the
    body whose bounds are the same in every iteration, as the host computes
    it, else None."""
    (start, _), (stop, stop_is_extent), (step, _) = origin[0]
    if step is not None:
        return None
    if stop_is_extent:  # to the end
        stop = None
    extent = t.size_param(origin[1])
    ownership = IterationOwnership(t)
    bounds = [(None, False) if bound is None else _host_bound(t, ownership, bound, origin[1])
              for bound in (start, stop)]
    if extent is None or any(bound is not None and polynomial is None
                             for bound, (polynomial, _) in zip((start, stop), bounds)):
        return None
    return SliceLength(extent, bounds[0][0], bounds[1][0], (bounds[0][1], bounds[1][1]))


def _view_length(t: Translation, var: ir.Var, axis: int,
                 depth: int = 0) -> KernelParam | SliceLength | None:
    """Dimension ``axis`` of the view ``var`` as the host can compute it: a
    dimension of an array from outside the body, or a slice of one (of
    ``row = x[i]``, ``row[1:]``, see ``_origin_length``), else None."""
    held = t.lookup(var)
    if not isinstance(held, ArrayValue) or not 0 <= axis < len(held.dims) or depth > 8:
        return None
    param = t.size_param(held.dims[axis])
    view = _view_of(t, var)
    if param is not None or view is None:
        return param
    base, indices = view
    sliced = [k for k, item in enumerate(indices)
              if isinstance(t.typemap[item.name], types.SliceType)]
    if len(sliced) + sum(isinstance(t.typemap[item.name], types.Integer)
                         for item in indices) != len(indices):
        return None
    if axis >= len(sliced):  # a dimension of the array past the indices, whole
        return _view_length(t, base, len(indices) + axis - len(sliced), depth + 1)
    position = sliced[axis]
    bounds = _slice_bounds(t, indices[position], base, position)
    base_held = t.lookup(base)
    if bounds is None or not isinstance(base_held, ArrayValue):
        return None
    return _origin_length(t, (bounds, base_held.dims[position]))


def check_broadcast(t: Translation, value: ir.Var, view: ir.Var, loc: ir.Loc) -> None:
    """Have the host check, before the launch, that each length of the
    view ``value`` stored into the view ``view`` is the view's or 1 (NumPy
    broadcasts it), raising AssertionError as Numba's check of equal sizes
    would; where the host cannot compute a length, that the two are equal
    (``equal_extents``); refused where it cannot do either."""
    for axis, (length, extent) in enumerate(zip(t.lookup(value).dims, t.lookup(view).dims)):
        if length.name == extent.name:
            continue
        message = f"sizes of {_view_text(t, view)} and {_view_text(t, value)} do not match"
        lengths = _view_length(t, view, axis), _view_length(t, value, axis)
        if None in lengths:
            # lengths equal in every iteration (the same slice of extents the
            # host compares) need no stretching: a length of 1 NumPy would
            # stretch raises the size error, as before broadcasting
            if equal_extents(t, (view, axis), (value, axis), message, loc, AssertionError):
                continue
            raise UnsupportedError(
                f"{where(loc)}: the sizes of {_view_text(t, view)} and {_view_text(t, value)} "
                "in a parfor body, which xpuc cannot compare before the launch (a kernel "
                "cannot raise Numba's error when they differ)")
        t.size_checks.append(SizeCheck(*lengths, f"{where(loc)}: {message}", AssertionError,
                                       stretches=True))


def _host_bound(t: Translation, ownership: IterationOwnership, bound: ir.Var,
                extent: Value) -> tuple[FrozenPolynomial | None, bool]:
    """A slice's bound as a polynomial the same in every iteration (None if
    it is not), and whether it counts from ``extent``: Numba's array analysis
    writes a negative constant ``c`` as ``n + c`` of the extent ``n``
    (``row[-3:]``)."""
    definition = _defined(t, bound)
    if isinstance(definition, ir.Expr) and definition.op == "binop" and \
            definition.fn is operator.add and \
            isinstance(t.typemap[definition.lhs.name], types.Integer) and \
            _size(t, definition.lhs).name == extent.name:
        return ownership.invariant(definition.rhs), True
    return ownership.invariant(bound), False


# what two variables of the body may be computed by, and still be equal when
# computed from equal operands
_PURE_EXPRESSIONS = ("getattr", "getitem", "static_getitem", "build_tuple", "call", "binop",
                     "unary")
_CONSTANTS = (ir.Const, ir.Global, ir.FreeVar)


def same_value(t: Translation, first: ir.Var, second: ir.Var, depth: int = 0) -> bool:
    """Whether ``first`` and ``second`` are computed alike in the body from
    the same values (``a[j, :].shape[0]`` twice), so hold the same value."""
    if first.name == second.name:
        return True
    ones, others = t.definition(first), t.definition(second)
    if depth > 8:
        return False
    # a copy of a loop's index (which nothing assigns) is that index
    if isinstance(ones, ir.Var) or isinstance(others, ir.Var):
        return same_value(t, ones if isinstance(ones, ir.Var) else first,
                           others if isinstance(others, ir.Var) else second, depth + 1)
    if ones is None or others is None:
        return False
    if isinstance(ones, _CONSTANTS) and isinstance(others, _CONSTANTS):
        return type(ones.value) is type(others.value) and ones.value == others.value
    dimensions = _dimension_of(t, ones), _dimension_of(t, others)
    if None not in dimensions and dimensions[0][1] == dimensions[1][1] and \
            _same_dimension(t, dimensions[0][0], dimensions[1][0], dimensions[0][1], depth + 1):
        return True
    if not (isinstance(ones, ir.Expr) and isinstance(others, ir.Expr)
            and ones.op == others.op and ones.op in _PURE_EXPRESSIONS):
        return False
    if ones.op == "call" and not (
            getattr(t.typemap[ones.func.name], "typing_key", None) is slice
            and not ones.kws and not others.kws):
        return False
    # the static parts (an attribute's name, a constant index) equal, and
    # the operands computed alike
    statics = [(e.attr if e.op == "getattr" else None,
                e.index if e.op == "static_getitem" else None,
                e.fn if e.op in ("binop", "unary") else None) for e in (ones, others)]
    operands = [e.list_vars() for e in (ones, others)]
    return statics[0] == statics[1] and len(operands[0]) == len(operands[1]) and all(
        same_value(t, a, b, depth + 1) for a, b in zip(*operands))


def _dimension_of(t: Translation, definition: object) -> tuple[ir.Var, int] | None:
    """``(x, k)`` where ``definition`` is ``x.shape[k]``, else None."""
    if not (isinstance(definition, ir.Expr) and definition.op in ("getitem", "static_getitem")):
        return None
    axis = definition.index if definition.op == "static_getitem" else \
        constant_value(t, definition.index)
    shape = t.definition(definition.value)
    if isinstance(axis, int) and axis >= 0 and isinstance(shape, ir.Expr) and \
            shape.op == "getattr" and shape.attr == "shape":
        return shape.value, axis
    return None


def _same_dimension(t: Translation, first: ir.Var, second: ir.Var, axis: int,
                    depth: int) -> bool:
    """Whether dimension ``axis`` of the arrays ``first`` and ``second`` is
    equal: one array, or views of one array that slice alike where that
    dimension comes from (``A[i, :j]`` and ``A[j, :j]``: the integer indices
    may differ)."""
    if same_value(t, first, second, depth):
        return True
    views = _view_of(t, first), _view_of(t, second)
    if None in views or not same_value(t, views[0][0], views[1][0], depth + 1):
        return False
    (_, indices), (_, other_indices) = views
    sliced = [[k for k, item in enumerate(items)
               if isinstance(t.typemap[item.name], types.SliceType)]
              for items in (indices, other_indices)]
    if len(indices) != len(other_indices) or sliced[0] != sliced[1]:
        return False
    if axis >= len(sliced[0]):  # a dimension of the array past the indices
        return True
    position = sliced[0][axis]
    return same_value(t, indices[position], other_indices[position], depth + 1)


def _view_of(t: Translation, var: ir.Var) -> tuple[ir.Var, list[ir.Var]] | None:
    """The array and the index variables of the view ``var`` is
    (``x[i, :j]``), else None."""
    definition = _defined(t, var)
    if not (isinstance(definition, ir.Expr) and definition.op in ("getitem", "static_getitem")):
        return None
    # a constant index (``row[:1]``) as array analysis writes it too, in a variable
    index_var = definition.index if definition.op == "getitem" else definition.index_var
    if index_var is None:
        return None
    index = t.definition(index_var)
    items = index.items if isinstance(index, ir.Expr) and index.op == "build_tuple" else \
        [index_var]
    return definition.value, list(items)
