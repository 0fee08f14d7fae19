"""Emit rules into the arith dialect: casts, Python/NumPy arithmetic with
Python's semantics, comparisons, bitwise and logical ops, min/max."""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence

import numpy as np
from numba.core import types as nbtypes
from numba.parfors.array_analysis import wrap_index

from ..errors import UnsupportedError
from .builder import Builder, Value
from .registry import rule
from .types import BOOL, I64, ScalarType


def cast(b: Builder, value: Value, to: ScalarType) -> Value:
    """Convert ``value`` to type ``to`` as Numba's implicit conversions do."""
    src = value.type
    if src == to:
        return value
    if to.kind == "b":
        zero = b.constant(0, src)
        if src.is_float:
            return b.op(f"arith.cmpf une, {value.name}, {zero.name} : {src.mlir}", BOOL)
        return b.op(f"arith.cmpi ne, {value.name}, {zero.name} : {src.mlir}", BOOL)
    if src.kind == "index" or to.kind == "index":
        if src.is_float or to.is_float:  # no direct cast between index and floats
            return cast(b, cast(b, value, I64), to)
        unsigned = src.kind in ("u", "b") or to.kind == "u"
        op = "arith.index_castui" if unsigned else "arith.index_cast"
        return b.op(f"{op} {value.name} : {src.mlir} to {to.mlir}", to)
    if src.is_float and to.is_float:
        op = "arith.extf" if to.bits > src.bits else "arith.truncf"
        return b.op(f"{op} {value.name} : {src.mlir} to {to.mlir}", to)
    if to.is_float:
        op = "arith.sitofp" if src.is_signed else "arith.uitofp"
        return b.op(f"{op} {value.name} : {src.mlir} to {to.mlir}", to)
    if src.is_float:
        op = "arith.fptosi" if to.is_signed else "arith.fptoui"
        return b.op(f"{op} {value.name} : {src.mlir} to {to.mlir}", to)
    if to.bits == src.bits:  # only the signedness changes: same bits
        return Value(value.name, to)
    if to.bits < src.bits:
        return b.op(f"arith.trunci {value.name} : {src.mlir} to {to.mlir}", to)
    op = "arith.extsi" if src.is_signed else "arith.extui"
    return b.op(f"{op} {value.name} : {src.mlir} to {to.mlir}", to)


def binary(b: Builder, op: str, lhs: Value, rhs: Value) -> Value:
    return b.op(f"{op} {lhs.name}, {rhs.name} : {lhs.type.mlir}", lhs.type)


def select(b: Builder, cond: Value, if_true: Value, if_false: Value) -> Value:
    return b.op(
        f"arith.select {cond.name}, {if_true.name}, {if_false.name} : {if_true.type.mlir}",
        if_true.type,
    )


def compare(b: Builder, predicate: str, lhs: Value, rhs: Value) -> Value:
    """``predicate`` in lt le gt ge eq ne; ordered for floats (NaN compares false)
    except ``ne``, as in Python."""
    t = lhs.type
    if t.is_float:
        pred = {"ne": "une"}.get(predicate, "o" + predicate)
        return b.op(f"arith.cmpf {pred}, {lhs.name}, {rhs.name} : {t.mlir}", BOOL)
    if predicate in ("eq", "ne"):
        pred = predicate
    else:
        pred = ("s" if t.is_signed else "u") + predicate
    return b.op(f"arith.cmpi {pred}, {lhs.name}, {rhs.name} : {t.mlir}", BOOL)


def _float_args(b: Builder, args: Sequence[Value], result: ScalarType) -> list[Value]:
    """Operands of an op that computes in floating point (true division of ints)."""
    to = result if result.is_float else args[0].type
    return [cast(b, a, to) for a in args]


def _by_kind(float_op: str, int_op: str, bool_op: str | None = None):
    """An op by its operands' kind. On bools (NumPy's ``??->?`` loops, as in
    ``a += b`` of bool arrays) add is logical or and multiply logical and."""
    def emit(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
        lhs, rhs = args
        if lhs.type == BOOL and bool_op is not None:
            return binary(b, bool_op, lhs, rhs)
        return binary(b, float_op if lhs.type.is_float else int_op, lhs, rhs)

    return emit


rule(operator.add, operator.iadd, np.add)(_by_kind("arith.addf", "arith.addi", "arith.ori"))
rule(operator.sub, operator.isub, np.subtract)(_by_kind("arith.subf", "arith.subi"))
rule(operator.mul, operator.imul, np.multiply)(_by_kind("arith.mulf", "arith.muli", "arith.andi"))


@rule(operator.truediv, operator.itruediv, np.true_divide)
def _truediv(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    lhs, rhs = _float_args(b, args, result)
    return binary(b, "arith.divf", lhs, rhs)


def _float_divmod(b: Builder, a: Value, d: Value) -> tuple[Value, Value]:
    """Python's float ``divmod``: floor quotient and a remainder with the sign of
    the divisor (CPython's float_divmod, which Numba follows)."""
    t = a.type
    zero = b.constant(0.0, t)
    one = b.constant(1.0, t)
    mod = binary(b, "arith.remf", a, d)
    div = binary(b, "arith.divf", binary(b, "arith.subf", a, mod), d)
    signs_differ = binary(
        b, "arith.xori", compare(b, "lt", d, zero), compare(b, "lt", mod, zero)
    )
    fix = binary(b, "arith.andi", compare(b, "ne", mod, zero), signs_differ)
    mod = select(b, fix, binary(b, "arith.addf", mod, d), mod)
    div = select(b, fix, binary(b, "arith.subf", div, one), div)
    floor = b.op(f"math.floor {div.name} : {t.mlir}", t)
    half = b.constant(0.5, t)
    round_up = compare(b, "gt", binary(b, "arith.subf", div, floor), half)
    floor = select(b, round_up, binary(b, "arith.addf", floor, one), floor)
    # a zero quotient takes the sign of the true quotient
    signed_zero = b.op(
        f"math.copysign {zero.name}, {binary(b, 'arith.divf', a, d).name} : {t.mlir}", t
    )
    quotient = select(b, compare(b, "ne", div, zero), floor, signed_zero)
    return quotient, mod


def _int_division(b: Builder, op: str, lhs: Value, rhs: Value) -> Value:
    """Integer ``op`` that gives 0 for a zero divisor, as NumPy does; a kernel
    cannot raise ZeroDivisionError, and dividing by zero is undefined in SPIR-V,
    so the division itself runs on a divisor of 1."""
    zero, one = b.constant(0, rhs.type), b.constant(1, rhs.type)
    by_zero = compare(b, "eq", rhs, zero)
    quotient = binary(b, op, lhs, select(b, by_zero, one, rhs))
    return select(b, by_zero, zero, quotient)


@rule(operator.floordiv, operator.ifloordiv, np.floor_divide)
def _floordiv(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    lhs, rhs = args
    if lhs.type.is_float:
        return _float_divmod(b, lhs, rhs)[0]
    return _int_division(b, "arith.floordivsi" if lhs.type.is_signed else "arith.divui", lhs, rhs)


def _signed_remainder(b: Builder, lhs: Value, rhs: Value) -> Value:
    """C's ``lhs % rhs`` (the sign of ``lhs``) on signed integers, 0 for a zero
    divisor as in NumPy. Not ``arith.remsi``: its SPIR-V lowering divides the
    magnitudes, and the smallest integer has none (the CPU's compiler gave
    ``-2**63 % 3`` as 2); ``lhs - (lhs / rhs) * rhs`` is exact for all but a
    divisor of -1, whose remainder is 0, and whose quotient would overflow."""
    zero, one = b.constant(0, rhs.type), b.constant(1, rhs.type)
    exact = binary(b, "arith.ori", compare(b, "eq", rhs, zero),
                   compare(b, "eq", rhs, b.constant(-1, rhs.type)))
    divisor = select(b, exact, one, rhs)
    quotient = binary(b, "arith.divsi", lhs, divisor)
    remainder = binary(b, "arith.subi", lhs, binary(b, "arith.muli", quotient, divisor))
    return select(b, exact, zero, remainder)


@rule(operator.mod, operator.imod, np.remainder)
def _mod(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    lhs, rhs = args
    if lhs.type.is_float:
        return _float_divmod(b, lhs, rhs)[1]
    if not lhs.type.is_signed:
        return _int_division(b, "arith.remui", lhs, rhs)
    # Python's remainder takes the divisor's sign
    rem = _signed_remainder(b, lhs, rhs)
    zero = b.constant(0, lhs.type)
    signs_differ = binary(
        b, "arith.xori", compare(b, "lt", rem, zero), compare(b, "lt", rhs, zero)
    )
    fix = binary(b, "arith.andi", compare(b, "ne", rem, zero), signs_differ)
    return select(b, fix, binary(b, "arith.addi", rem, rhs), rem)


@rule(np.fmod)
def _fmod(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    lhs, rhs = args
    if lhs.type.is_float:
        return binary(b, "arith.remf", lhs, rhs)
    if lhs.type.is_signed:
        return _signed_remainder(b, lhs, rhs)
    return _int_division(b, "arith.remui", lhs, rhs)


def _integer_power(b: Builder, base: Value, exponent: Value) -> Value:
    """``base ** exponent`` on integers, as Numba computes it: by squaring, with
    wrap-around; a negative exponent gives 0 unless the base is 1 or -1."""
    t = base.type.mlir
    zero, one = b.constant(0, base.type), b.constant(1, base.type)
    magnitude = b.op(f"math.absi {exponent.name} : {t}", exponent.type)
    loop = b.fresh()
    carried = [b.fresh() for _ in range(3)]  # result, power of the base, exponent bits
    looped = [b.fresh() for _ in range(3)]
    types = ", ".join([t] * 3)
    inits = ", ".join(f"{c} = {v.name}" for c, v in zip(carried, (one, base, magnitude)))
    b.emit(f"{loop}:3 = scf.while ({inits}) : ({types}) -> ({types}) {{")
    bits = Value(carried[2], exponent.type)
    more = b.op(f"arith.cmpi sgt, {bits.name}, {zero.name} : {t}", BOOL)
    b.emit(f"  scf.condition({more.name}) {', '.join(carried)} : {types}")
    b.emit("} do {")
    b.emit(f"^bb0({', '.join(f'{name}: {t}' for name in looped)}):")
    product, power, rest = (Value(name, base.type) for name in looped)
    odd = compare(b, "ne", binary(b, "arith.andi", rest, one), zero)
    product = select(b, odd, binary(b, "arith.muli", product, power), product)
    power = binary(b, "arith.muli", power, power)
    rest = binary(b, "arith.shrui", rest, one)
    b.emit(f"  scf.yield {product.name}, {power.name}, {rest.name} : {types}")
    b.emit("}")
    value = Value(f"{loop}#0", base.type)
    unit = binary(b, "arith.ori", compare(b, "eq", base, one),
                  compare(b, "eq", base, b.constant(-1, base.type)))
    keeps = binary(b, "arith.ori", compare(b, "ge", exponent, zero), unit)
    return select(b, keeps, value, zero)


@rule(operator.pow, operator.ipow, np.power, builtins.pow, math.pow)
def _pow(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    if not result.is_float:
        return _integer_power(b, *(cast(b, a, result) for a in args))
    base, exponent = (cast(b, a, result) for a in args)
    return b.op(f"math.powf {base.name}, {exponent.name} : {result.mlir}", result)


@rule(operator.neg, np.negative)
def _neg(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    (x,) = args
    if x.type.is_float:
        return b.op(f"arith.negf {x.name} : {x.type.mlir}", x.type)
    return binary(b, "arith.subi", b.constant(0, x.type), x)


# NumPy's and Numba's scalar types called as conversions: np.float32(x),
# np.int64(3), numba.int64(i), a.dtype.type(0)
_NUMPY_SCALARS = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                  np.uint32, np.uint64, np.float32, np.float64)
_NUMBA_SCALARS = (nbtypes.boolean, *sorted(nbtypes.integer_domain, key=str),
                  *sorted(nbtypes.real_domain, key=str))


@rule(operator.pos, np.positive, builtins.bool, builtins.int, builtins.float, *_NUMPY_SCALARS,
      *_NUMBA_SCALARS)
def _pos(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    # conversions (bool(x), np.float32(i)) happen as the caller casts to the result type
    return args[0]


@rule(operator.not_, np.logical_not)
def _not(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    x = cast(b, args[0], BOOL)
    return binary(b, "arith.xori", x, b.constant(True, BOOL))


@rule(operator.invert, np.invert)
def _invert(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    (x,) = args
    ones = b.constant(True, BOOL) if x.type.kind == "b" else b.constant(-1, x.type)
    return binary(b, "arith.xori", x, ones)


def _bitwise(op: str):
    def emit(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
        if any(a.type.is_float for a in args):
            raise UnsupportedError(f"{op} on floating-point values")
        return binary(b, op, *args)

    return emit


rule(operator.and_, operator.iand, np.bitwise_and)(_bitwise("arith.andi"))
rule(operator.or_, operator.ior, np.bitwise_or)(_bitwise("arith.ori"))
rule(operator.xor, operator.ixor, np.bitwise_xor)(_bitwise("arith.xori"))
rule(operator.lshift, operator.ilshift, np.left_shift)(_bitwise("arith.shli"))


@rule(operator.rshift, operator.irshift, np.right_shift)
def _rshift(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    return _bitwise("arith.shrsi" if args[0].type.is_signed else "arith.shrui")(b, args, result)


def _logical(op: str):
    def emit(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
        return binary(b, op, *(cast(b, a, BOOL) for a in args))

    return emit


rule(np.logical_and)(_logical("arith.andi"))
rule(np.logical_or)(_logical("arith.ori"))
rule(np.logical_xor)(_logical("arith.xori"))


def _comparison(predicate: str):
    def emit(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
        return compare(b, predicate, *args)

    return emit


for _pred, _keys in {
    "lt": (operator.lt, np.less),
    "le": (operator.le, np.less_equal),
    "gt": (operator.gt, np.greater),
    "ge": (operator.ge, np.greater_equal),
    "eq": (operator.eq, np.equal),
    "ne": (operator.ne, np.not_equal),
}.items():
    rule(*_keys)(_comparison(_pred))


@rule(builtins.min)
def _min(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    # Python's min keeps the first of equal (or unordered) arguments
    lhs, rhs = args
    return select(b, compare(b, "lt", rhs, lhs), rhs, lhs)


@rule(builtins.max)
def _max(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    lhs, rhs = args
    return select(b, compare(b, "gt", rhs, lhs), rhs, lhs)


def _min_max(float_op: str, signed_op: str, unsigned_op: str):
    def emit(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
        t = args[0].type
        if t.kind == "b":
            return binary(b, "arith.andi" if "min" in signed_op else "arith.ori", *args)
        op = float_op if t.is_float else signed_op if t.is_signed else unsigned_op
        return binary(b, op, *args)

    return emit


# np.minimum / np.maximum propagate NaN; np.fmin / np.fmax ignore it
rule(np.minimum)(_min_max("arith.minimumf", "arith.minsi", "arith.minui"))
rule(np.maximum)(_min_max("arith.maximumf", "arith.maxsi", "arith.maxui"))
rule(np.fmin)(_min_max("arith.minnumf", "arith.minsi", "arith.minui"))
rule(np.fmax)(_min_max("arith.maxnumf", "arith.maxsi", "arith.maxui"))


@rule(np.square)
def _square(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    (x,) = args
    return binary(b, "arith.mulf" if x.type.is_float else "arith.muli", x, x)



@rule(np.conjugate, np.real)
def _real_part(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    # a real number is its own conjugate and real part (np.var uses both)
    return args[0]


@rule(np.imag)
def _imaginary_part(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    return b.constant(0, result)


@rule(wrap_index)
def _wrap_index(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    """Numba's array analysis puts a slice bound in ``[0, size]``: a negative
    one counts from the end, and one past either end is clipped."""
    index, size = (cast(b, a, result) for a in args)
    zero = b.constant(0, result)
    from_end = select(b, compare(b, "le", index, binary(b, "arith.subi", zero, size)), zero,
                      binary(b, "arith.addi", index, size))
    clipped = select(b, compare(b, "ge", index, size), size, index)
    return select(b, compare(b, "lt", index, zero), from_end, clipped)


@rule(np.where)
def _where(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    if len(args) != 3:
        raise UnsupportedError("np.where with one argument")
    cond, if_true, if_false = args
    return select(b, cast(b, cond, BOOL), cast(b, if_true, result), cast(b, if_false, result))


__all__ = ["binary", "cast", "compare", "select"]
