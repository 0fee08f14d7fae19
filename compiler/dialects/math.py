"""Emit rules into the math dialect: the floating-point functions of ``math``
and NumPy's ufuncs. Integer arguments arrive already converted to the float
type Numba typed the call with; a result Numba types as an integer
(``math.floor``) is converted back by the caller."""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence

import numpy as np

from .arith import binary, compare, select
from .builder import Builder, Value
from .registry import rule
from .types import BOOL, ScalarType

# math dialect op -> the Python and NumPy callables it implements
_UNARY = {
    "math.sin": (math.sin, np.sin),
    "math.cos": (math.cos, np.cos),
    "math.tan": (math.tan, np.tan),
    "math.asin": (math.asin, np.arcsin),
    "math.acos": (math.acos, np.arccos),
    "math.atan": (math.atan, np.arctan),
    "math.sinh": (math.sinh, np.sinh),
    "math.cosh": (math.cosh, np.cosh),
    "math.tanh": (math.tanh, np.tanh),
    "math.exp": (math.exp, np.exp),
    "math.exp2": (np.exp2,),
    "math.expm1": (math.expm1, np.expm1),
    "math.log": (np.log,),
    "math.log2": (math.log2, np.log2),
    "math.log10": (math.log10, np.log10),
    "math.log1p": (math.log1p, np.log1p),
    "math.sqrt": (math.sqrt, np.sqrt),
    "math.cbrt": (np.cbrt,),
    "math.floor": (math.floor, np.floor),
    "math.ceil": (math.ceil, np.ceil),
    "math.trunc": (math.trunc, np.trunc),
    "math.erf": (math.erf,),
    "math.asinh": (math.asinh, np.arcsinh),
    "math.acosh": (math.acosh, np.arccosh),
    "math.atanh": (math.atanh, np.arctanh),
}


_ROUNDING = ("math.floor", "math.ceil", "math.trunc")


def _unary(op: str):
    def emit(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
        (x,) = args
        if op in _ROUNDING and not x.type.is_float:
            return x  # NumPy 2's integer loops (np.floor of int64 is int64): the identity
        return b.op(f"{op} {x.name} : {x.type.mlir}", x.type)

    return emit


for _op, _keys in _UNARY.items():
    rule(*_keys)(_unary(_op))


@rule(math.log)
def _log(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    if len(args) == 2:  # math.log(x, base)
        x, base = args
        num = b.op(f"math.log {x.name} : {x.type.mlir}", x.type)
        den = b.op(f"math.log {base.name} : {base.type.mlir}", base.type)
        return binary(b, "arith.divf", num, den)
    return _unary("math.log")(b, args, result)


@rule(builtins.abs, np.abs, np.fabs, math.fabs)
def _abs(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    (x,) = args
    if x.type.is_float:
        return b.op(f"math.absf {x.name} : {x.type.mlir}", x.type)
    if x.type.is_signed:
        return b.op(f"math.absi {x.name} : {x.type.mlir}", x.type)
    return x


@rule(math.atan2, np.arctan2)
def _atan2(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    y, x = args
    return b.op(f"math.atan2 {y.name}, {x.name} : {y.type.mlir}", y.type)


@rule(math.copysign, np.copysign)
def _copysign(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    x, y = args
    return b.op(f"math.copysign {x.name}, {y.name} : {x.type.mlir}", x.type)


@rule(math.hypot, np.hypot)
def _hypot(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    # scaled by the larger magnitude so that squaring cannot overflow; an
    # infinite side makes it infinite, even beside a NaN (IEEE 754's hypot)
    x, y = (b.op(f"math.absf {a.name} : {a.type.mlir}", a.type) for a in args)
    inf = b.constant(math.inf, x.type)
    infinite = binary(b, "arith.ori", compare(b, "eq", x, inf), compare(b, "eq", y, inf))
    big = binary(b, "arith.maximumf", x, y)
    small = binary(b, "arith.minimumf", x, y)
    zero = b.constant(0.0, big.type)
    ratio = select(b, compare(b, "eq", big, zero), zero, binary(b, "arith.divf", small, big))
    one = b.constant(1.0, big.type)
    root = b.op(
        f"math.sqrt {binary(b, 'arith.addf', one, binary(b, 'arith.mulf', ratio, ratio)).name}"
        f" : {big.type.mlir}",
        big.type,
    )
    return select(b, infinite, inf, binary(b, "arith.mulf", big, root))


@rule(math.isnan, np.isnan)
def _isnan(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    (x,) = args
    if not x.type.is_float:
        return b.constant(False, BOOL)
    return b.op(f"arith.cmpf uno, {x.name}, {x.name} : {x.type.mlir}", BOOL)


def _magnitude_test(predicate: str, for_integers: bool):
    """``|x| <predicate> inf``: isinf and isfinite (integers are always finite)."""

    def emit(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
        (x,) = args
        if not x.type.is_float:
            return b.constant(for_integers, BOOL)
        magnitude = b.op(f"math.absf {x.name} : {x.type.mlir}", x.type)
        return compare(b, predicate, magnitude, b.constant(math.inf, x.type))

    return emit


rule(math.isinf, np.isinf)(_magnitude_test("eq", False))
rule(math.isfinite, np.isfinite)(_magnitude_test("lt", True))


@rule(np.sign)
def _sign(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    (x,) = args
    zero, one = b.constant(0, x.type), b.constant(1, x.type)
    minus_one = b.constant(-1, x.type)
    positive = select(b, compare(b, "gt", x, zero), one, zero)
    signed = select(b, compare(b, "lt", x, zero), minus_one, positive)
    if x.type.is_float:  # sign(nan) is nan
        return select(b, compare(b, "ne", x, x), x, signed)
    return signed


@rule(np.reciprocal)
def _reciprocal(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    (x,) = args
    return binary(b, "arith.divf" if x.type.is_float else "arith.divsi", b.constant(1, x.type), x)


@rule(np.deg2rad, np.radians, math.radians)
def _radians(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    (x,) = args
    return binary(b, "arith.mulf", x, b.constant(math.pi / 180.0, x.type))


@rule(np.rad2deg, np.degrees, math.degrees)
def _degrees(b: Builder, args: Sequence[Value], result: ScalarType) -> Value:
    (x,) = args
    return binary(b, "arith.mulf", x, b.constant(180.0 / math.pi, x.type))

