"""The values a body's variables hold besides scalar SSA values: arrays and
their views (``ArrayValue``), arrays computed element by element where they
are read (``ComputedArray``), masked arrays, tuples, slices, callees, an
array's bound method, ``np.argmin``'s index-value pairs; and how an element
becomes a number of an array's type (``as_element``, ``element_rule``).
``Translation.lookup`` gives them (translation.py); the rules of ``rules/``
make and read them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from numba.core import ir, types
from numba.core.typing.builtins import IndexValueType

from ..dialects import (
    Builder,
    Complex,
    ScalarType,
    Value,
    arith,
    lookup_complex_rule,
    lookup_rule,
)
from ..errors import UnsupportedError
from .user_locations import where


@dataclass(frozen=True)
class ArrayValue:
    var: str
    memref: str  # SSA name of the flat memref argument
    dtype: ScalarType
    dims: tuple[Value, ...]  # index values
    # element strides (index values) of a view; None for C-contiguous arrays,
    # whose strides follow from dims with a unit innermost stride the device
    # compiler can vectorize on
    strides: tuple[Value, ...] | None = None
    memref_type: str | None = None  # when not memref<?xT> (private or local memory)
    # element offset of a view's first element (``a[i]``, ``a[1:3]`` in a body)
    offset: Value | None = None
    # of complex numbers: element k is dtype's floats 2k (real) and 2k+1 (imag)
    is_complex: bool = False
    # a local array's SPIR-V storage class (Workgroup): ``memref`` is then the
    # pointer to its variable, ``memref_type`` that pointer's type
    storage: str | None = None
    # of a gather ``x[cols]``: element k is the element of ``gather[0]`` (x) at
    # the value of element k of the index vector ``gather[1]`` (cols); read
    # where it is used, no array made
    gather: tuple[ArrayValue, ArrayValue] | None = None


@dataclass(frozen=True)
class ComputedArray:
    """An array a body computes element by element where it is stored (a
    product with a matrix, ``v @ M[:, a:b]``), which no memory holds.
    ``element`` emits the element at a position; ``origins`` says, per
    dimension, where its extent comes from, for the size checks of a store
    (``body_checks.dimension_origin``)."""

    dims: tuple[Value, ...]
    dtype: ScalarType
    element: Callable[[list[Value]], Value | Complex]
    origins: tuple[object, ...]
    # the extents as the body's variables hold them (before their cast to
    # index values), which size checks compare; None where the body has none
    sizes: tuple[Value, ...] | None = None
    # of complex numbers: ``element`` gives a Complex of ``dtype`` parts
    is_complex: bool = False
    # the views of arrays the prange writes that ``element`` reads (an array
    # expression's, rules/computed_arrays.py), which a loop storing it orders
    # itself against
    views_read: tuple[ir.Var, ...] = ()
    # each array from outside the body that ``element`` reads, with the view
    # of it read at the element's own position (an array expression's), or
    # None where it reads others (a product, a reshape): a store of it into a
    # view of another such array has the host keep the two apart
    # (view_order.keep_apart)
    arrays_read: tuple[tuple[str, ir.Var | None], ...] = ()


@dataclass(frozen=True)
class MaskedArray:
    """``x[mask]`` of a vector ``x`` at a vector of booleans ``mask`` (an
    array or a ComputedArray): the elements of ``x`` where ``mask`` holds,
    which no memory holds either. A loop over its elements runs over the
    mask's, skipping those it does not hold (rules/computed_arrays.py)."""

    source: ArrayValue | ComputedArray
    mask: ArrayValue | ComputedArray


@dataclass(frozen=True)
class ArrayMethod:
    """``x.copy`` / ``x.reshape`` before its call: the array it is of."""

    array: ArrayValue | ComputedArray
    name: str


@dataclass(frozen=True)
class CalleeValue:
    obj: object  # a module or function, before or after attribute lookup


@dataclass(frozen=True)
class TupleValue:
    items: tuple[object, ...]


@dataclass(frozen=True)
class IndexValuePair:
    """Numba's ``IndexValue(index, value)``, what np.argmin / np.argmax reduce."""

    index: Value
    value: Value
    PARTS: ClassVar[tuple[str, str]] = ("index", "value")  # in the order of its struct


def composite_of(nbtype: types.Type | None) -> type | None:
    """The value class of a Numba type held as two scalars (IndexValue,
    complex), or None."""
    if isinstance(nbtype, IndexValueType):
        return IndexValuePair
    if isinstance(nbtype, types.Complex):
        return Complex
    return None


def scalar_items(nbtype: types.Type) -> tuple[types.Type, ...]:
    """The scalars a tuple, an IndexValue or a complex number is made of, in order."""
    if isinstance(nbtype, IndexValueType):
        return (types.intp, nbtype.val_typ)
    if isinstance(nbtype, types.Complex):
        return (nbtype.underlying_float,) * 2
    return tuple(nbtype)


@dataclass(frozen=True)
class SliceValue:
    """``slice(start, stop, step)``; None where the slice leaves a part out."""

    start: Value | None
    stop: Value | None
    step: int | None  # a constant: the view's shape depends on its sign


def slice_of(start: object, stop: object, step: int | None, loc: ir.Loc) -> SliceValue:
    """The slice of these bounds, which must be integers (or left out)."""
    if step == 0:
        raise UnsupportedError(f"{where(loc)}: slice step cannot be zero")
    for bound in (start, stop):
        if not (bound is None or isinstance(bound, Value)) or (
                isinstance(bound, Value) and bound.type.is_float):
            raise UnsupportedError(f"{where(loc)}: slice bound that is not an integer")
    return SliceValue(start, stop, step)


def as_complex(b: Builder, held: Value | Complex, part: ScalarType) -> Complex:
    """``held`` (a complex or real value) as a complex of ``part`` floats."""
    if isinstance(held, Complex):
        return Complex(*(arith.cast(b, getattr(held, p), part) for p in Complex.PARTS))
    return Complex(arith.cast(b, held, part), b.constant(0.0, part))


def as_element(b: Builder, held: Value | Complex, dtype: ScalarType,
               is_complex: bool) -> Value | Complex:
    """``held`` (a real value where not ``is_complex``) as an element of
    ``dtype``, or of complex numbers of ``dtype`` parts where ``is_complex``.
    Callers find a variable's number by ``Translation.number``, which refuses
    anything else at the user's line."""
    if is_complex:
        return as_complex(b, held, dtype)
    return arith.cast(b, held, dtype)


def element_rule(key: object, is_complex: bool) -> Callable[..., Value | Complex] | None:
    """``key``'s emit rule on elements of ``dtype``, called ``rule(b, operands,
    dtype)``; on complex numbers of ``dtype`` parts where ``is_complex``.
    None where there is none."""
    if not is_complex:
        return lookup_rule(key)
    rule = lookup_complex_rule(key)
    return None if rule is None else lambda b, operands, dtype: rule(b, operands)
