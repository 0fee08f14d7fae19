"""``xpuc.atomic``: atomic read-modify-writes of array elements in explicit
kernels, each returning the value the element held before (as SYCL's
``fetch_*``): the Python stubs, their Numba typing and their translation.

Upstream MLIR lowers no atomics on OpenCL global (CrossWorkgroup) memory and
only some integer ones on local memory: the kernel uses SPIR-V's atomics on a
pointer to the element, that of an argument array passed a second time as a
SPIR-V pointer, or that of a local array's Workgroup variable. An operation
SPIR-V has only for integers is a compare-exchange loop on the float's bits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numba.core import ir, types
from numba.core.errors import TypingError
from numba.core.typing.templates import signature
from numba.np import numpy_support

from ..dialects import Builder, ScalarType, Value, arith, spirv
from ..errors import UnsupportedError
from .body_values import ArrayValue, TupleValue
from .kernel_intrinsics import kernel_call_rule, kernel_template, outside_kernel, shape_rank
from .rules.arrays import ATOMIC_ELEMENTS, element_offset, global_element_pointer, note_use
from .user_locations import where

if TYPE_CHECKING:
    from .kernel_to_mlir import KernelTranslation


def add(array: object, index: int | tuple[int, ...], value: object) -> object:
    """``array[index] += value``; returns the old value."""
    raise outside_kernel("atomic.add")


def sub(array: object, index: int | tuple[int, ...], value: object) -> object:
    """``array[index] -= value``; returns the old value."""
    raise outside_kernel("atomic.sub")


def min(array: object, index: int | tuple[int, ...], value: object) -> object:  # noqa: A001
    """``array[index] = min(array[index], value)``; returns the old value."""
    raise outside_kernel("atomic.min")


def max(array: object, index: int | tuple[int, ...], value: object) -> object:  # noqa: A001
    """``array[index] = max(array[index], value)``; returns the old value."""
    raise outside_kernel("atomic.max")


def and_(array: object, index: int | tuple[int, ...], value: object) -> object:
    """``array[index] &= value`` (integers); returns the old value."""
    raise outside_kernel("atomic.and_")


def or_(array: object, index: int | tuple[int, ...], value: object) -> object:
    """``array[index] |= value`` (integers); returns the old value."""
    raise outside_kernel("atomic.or_")


def xor(array: object, index: int | tuple[int, ...], value: object) -> object:
    """``array[index] ^= value`` (integers); returns the old value."""
    raise outside_kernel("atomic.xor")


def exchange(array: object, index: int | tuple[int, ...], value: object) -> object:
    """``array[index] = value``; returns the old value."""
    raise outside_kernel("atomic.exchange")


def store(array: object, index: int | tuple[int, ...], value: object) -> object:
    """``array[index] = value`` atomically; returns the old value."""
    raise outside_kernel("atomic.store")


def load(array: object, index: int | tuple[int, ...]) -> object:
    """``array[index]``, read atomically."""
    raise outside_kernel("atomic.load")


def compare_exchange(array: object, index: int | tuple[int, ...], expected: object,
                     desired: object) -> object:
    """``array[index] = desired`` if it holds ``expected`` (floats compared by
    their bits); returns the old value either way."""
    raise outside_kernel("atomic.compare_exchange")


# Each read-modify-write: the SPIR-V op on integers (signed, unsigned), and
# the arith op that combines floats in a compare-exchange loop (None: integers
# only; "": the value replaces the element, bits as they are)
_RMW: dict[Callable, tuple[tuple[str, str], str | None]] = {
    add: (("AtomicIAdd",) * 2, "arith.addf"),
    sub: (("AtomicISub",) * 2, "arith.subf"),
    min: (("AtomicSMin", "AtomicUMin"), "arith.minimumf"),
    max: (("AtomicSMax", "AtomicUMax"), "arith.maximumf"),
    and_: (("AtomicAnd",) * 2, None),
    or_: (("AtomicOr",) * 2, None),
    xor: (("AtomicXor",) * 2, None),
    exchange: (("AtomicExchange",) * 2, ""),
    store: (("AtomicExchange",) * 2, ""),
}


# ---- typing ------------------------------------------------------------------

def _check_value(name: str, element: types.Type, value: types.Type) -> None:
    """An atomic converts its value to the array's element type only within a
    kind, as NumPy's same-kind casting does (an int64 into int32 elements, a
    float64 into float32 ones); anything else would silently change the value."""
    value = types.unliteral(value)
    if not np.can_cast(numpy_support.as_dtype(value), numpy_support.as_dtype(element),
                       "same_kind"):
        raise TypingError(f"xpuc.atomic.{name}: a {value} value on an array of {element} "
                          f"(convert the value to {element} first)")


def _typing(stub: Callable, values: int):
    def generic(self, args, kws):
        if len(args) != 2 + values:
            return None
        array, index, *operands = args
        if not (isinstance(array, types.Array) and shape_rank(index) == array.ndim
                and all(isinstance(v, (types.Number, types.Boolean)) for v in operands)):
            return None
        if isinstance(array.dtype, types.Float) and _RMW.get(stub, ((), ""))[1] is None:
            raise TypingError(f"xpuc.atomic.{stub.__name__}: a bitwise atomic on an array "
                              f"of {array.dtype}, which is not an integer")
        for value in operands:
            _check_value(stub.__name__, array.dtype, value)
        return signature(array.dtype, *args)

    return generic


for _stub in _RMW:
    kernel_template(_stub, _typing(_stub, 1))
kernel_template(load, _typing(load, 0))
kernel_template(compare_exchange, _typing(compare_exchange, 2))


# ---- translation -------------------------------------------------------------

@kernel_call_rule(*_RMW, load, compare_exchange)
def _atomic(t: KernelTranslation, expr: ir.Expr, target: ir.Var) -> Value:
    stub = t.typemap[expr.func.name].typing_key
    name = stub.__name__
    array = t.lookup(expr.args[0])
    if not isinstance(array, ArrayValue):
        raise UnsupportedError(f"{where(expr.loc)}: atomic.{name} on a non-array")
    dtype = array.dtype
    if (dtype.kind, dtype.bits) not in ATOMIC_ELEMENTS:
        raise UnsupportedError(f"{where(expr.loc)}: atomic.{name} on {dtype.mlir} elements "
                               "(int32, int64, float32 and float64 are supported)")
    held = t.lookup(expr.args[1])
    indices = list(held.items) if isinstance(held, TupleValue) else [held]
    offset = element_offset(t, array, indices, expr.loc)
    operands = [arith.cast(t.b, t.value(v), dtype) for v in expr.args[2:]]
    if array.storage is not None:  # a local array: its work-group variable, shared by the group
        element = spirv.element_pointer(t.b, array.memref, array.memref_type, offset, dtype,
                                        array.storage)
        return _atomic_on(t.b, stub, element, dtype, array.storage, "Workgroup", operands)
    note_use(t, array, reads=True, writes=stub is not load)
    element = global_element_pointer(t, array, offset)
    return _atomic_on(t.b, stub, element, dtype, "CrossWorkgroup", "Device", operands)


def _atomic_on(b: Builder, stub: Callable, element: Value, dtype: ScalarType, storage: str,
               scope: str, operands: list[Value]) -> Value:
    """The atomic ``stub`` on the element ``element`` points to (in ``storage``,
    atomic among the work-items of ``scope``); the value it held before."""
    if stub is load:  # or-ing 0 reads the element atomically and changes nothing
        return spirv.atomic(b, "AtomicOr", element, dtype, storage, scope,
                            [b.constant(0, ScalarType("i", dtype.bits))])
    if stub is compare_exchange:
        return spirv.compare_exchange(b, element, dtype, storage, scope, *operands)
    integer_ops, float_op = _RMW[stub]
    if not dtype.is_float or float_op == "":
        return spirv.atomic(b, integer_ops[0 if dtype.is_signed else 1], element, dtype,
                            storage, scope, operands)
    return spirv.atomic_update_loop(b, element, dtype, storage, scope,
                                    lambda old: arith.binary(b, float_op, old, operands[0]))
