"""Emit rules for complex numbers, each held as its real and imaginary parts
(two floats of the part type), as Numba computes them (numba/cpython/numbers.py):
a table of its own, keyed by operator or callee like the scalar one, whose
rules take complex operands (real ones arrive with a zero imaginary part) and
return a complex or a scalar value."""

from __future__ import annotations

import builtins
import cmath
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba.core import types as nbtypes

from .arith import binary, compare, select
from .builder import Builder, Value
from .registry import RuleTable, lookup_rule
from .types import BOOL


@dataclass(frozen=True)
class Complex:
    real: Value
    imag: Value
    PARTS: ClassVar[tuple[str, str]] = ("real", "imag")


ComplexRule = Callable[[Builder, Sequence[Complex]], "Complex | Value"]
_RULES: RuleTable[object, ComplexRule] = RuleTable("complex emit")
complex_rule = _RULES.rule
lookup_complex_rule = _RULES.lookup


def _parts(op: str):
    def emit(b: Builder, args: Sequence[Complex]) -> Complex:
        x, y = args
        return Complex(binary(b, op, x.real, y.real), binary(b, op, x.imag, y.imag))

    return emit


complex_rule(operator.add, operator.iadd, np.add)(_parts("arith.addf"))
complex_rule(operator.sub, operator.isub, np.subtract)(_parts("arith.subf"))


@complex_rule(operator.mul, operator.imul, np.multiply)
def _mul(b: Builder, args: Sequence[Complex]) -> Complex:
    x, y = args
    real = binary(b, "arith.subf", binary(b, "arith.mulf", x.real, y.real),
                  binary(b, "arith.mulf", x.imag, y.imag))
    imag = binary(b, "arith.addf", binary(b, "arith.mulf", x.real, y.imag),
                  binary(b, "arith.mulf", x.imag, y.real))
    return Complex(real, imag)


@complex_rule(operator.truediv, operator.itruediv, np.true_divide)
def _truediv(b: Builder, args: Sequence[Complex]) -> Complex:
    """CPython's (and Numba's) division, scaled by the divisor's larger part;
    a zero divisor gives NaNs (a kernel cannot raise ZeroDivisionError)."""
    x, y = args
    t = y.real.type
    wide = compare(b, "ge", b.op(f"math.absf {y.real.name} : {t.mlir}", t),
                   b.op(f"math.absf {y.imag.name} : {t.mlir}", t))
    # wide: ratio = d / c, denominator c + d * ratio; else ratio = c / d, c * ratio + d
    big, small = select(b, wide, y.real, y.imag), select(b, wide, y.imag, y.real)
    ratio = binary(b, "arith.divf", small, big)
    denominator = binary(b, "arith.addf", big, binary(b, "arith.mulf", small, ratio))
    # wide: (a + b r, b - a r); else (a r + b, b r - a)
    first = select(b, wide, x.real, x.imag)
    second = select(b, wide, x.imag, x.real)
    real = binary(b, "arith.addf", first, binary(b, "arith.mulf", second, ratio))
    imag_wide = binary(b, "arith.subf", x.imag, binary(b, "arith.mulf", x.real, ratio))
    imag_tall = binary(b, "arith.subf", binary(b, "arith.mulf", x.imag, ratio), x.real)
    imag = select(b, wide, imag_wide, imag_tall)
    return Complex(binary(b, "arith.divf", real, denominator),
                   binary(b, "arith.divf", imag, denominator))


@complex_rule(operator.neg, np.negative)
def _neg(b: Builder, args: Sequence[Complex]) -> Complex:
    (x,) = args
    return Complex(*(b.op(f"arith.negf {p.name} : {p.type.mlir}", p.type)
                     for p in (x.real, x.imag)))


@complex_rule(operator.pos, np.positive, np.complex64, np.complex128, nbtypes.complex64,
              nbtypes.complex128)
def _identity(b: Builder, args: Sequence[Complex]) -> Complex:
    # conversions happen as the caller casts the parts to the result type
    return args[0]


@complex_rule(builtins.complex)
def _complex(b: Builder, args: Sequence[Complex]) -> Complex:
    """``complex(x)``, ``complex(x, y)`` = x + y * 1j."""
    if len(args) == 1:
        return args[0]
    x, y = args
    return Complex(binary(b, "arith.subf", x.real, y.imag), binary(b, "arith.addf", x.imag, y.real))


@complex_rule(np.conjugate)  # also np.conj
def _conjugate(b: Builder, args: Sequence[Complex]) -> Complex:
    (x,) = args
    return Complex(x.real, b.op(f"arith.negf {x.imag.name} : {x.imag.type.mlir}", x.imag.type))


@complex_rule(np.real)
def _real(b: Builder, args: Sequence[Complex]) -> Value:
    return args[0].real


@complex_rule(np.imag)
def _imag(b: Builder, args: Sequence[Complex]) -> Value:
    return args[0].imag


@complex_rule(builtins.abs, np.abs)
def _abs(b: Builder, args: Sequence[Complex]) -> Value:
    (x,) = args
    return lookup_rule(np.hypot)(b, [x.real, x.imag], x.real.type)


def _scalar(b: Builder, key: object, *args: Value) -> Value:
    """A real function of the parts, by its scalar emit rule."""
    return lookup_rule(key)(b, list(args), args[0].type)


@complex_rule(cmath.exp, np.exp)
def _exp(b: Builder, args: Sequence[Complex]) -> Complex:
    """Numba's ``cmath.exp`` (numba/cpython/cmathimpl.py, CPython's special
    values): e**x (cos y, sin y), a zero cosine or sine kept as it is (so
    exp(inf + 0j) is inf + 0j); with y infinite or NaN, NaNs except
    (inf, NaN) for x = inf and 0 for x = -inf."""
    (z,) = args
    x, y, t = z.real, z.imag, z.real.type
    zero, inf = b.constant(0.0, t), b.constant(math.inf, t)
    magnitude = _scalar(b, math.exp, x)
    parts = []
    for trig in (math.cos, math.sin):
        value = _scalar(b, trig, y)
        parts.append(select(b, compare(b, "eq", value, zero), value,
                            binary(b, "arith.mulf", magnitude, value)))
    y_not_finite = binary(b, "arith.xori", _scalar(b, math.isfinite, y),
                          b.constant(True, BOOL))
    to_inf = binary(b, "arith.andi", y_not_finite, compare(b, "eq", x, inf))
    to_zero = binary(b, "arith.andi", y_not_finite,
                     compare(b, "eq", x, b.constant(-math.inf, t)))
    real = select(b, to_zero, zero, select(b, to_inf, x, parts[0]))
    return Complex(real, select(b, to_zero, zero, parts[1]))


@complex_rule(cmath.log, np.log)
def _log(b: Builder, args: Sequence[Complex]) -> Complex:
    """Numba's ``cmath.log``: log |z| + j atan2(y, x)."""
    (z,) = args
    return Complex(_scalar(b, math.log, _scalar(b, math.hypot, z.real, z.imag)),
                   _scalar(b, math.atan2, z.imag, z.real))


@complex_rule(operator.pow, operator.ipow, np.power, builtins.pow)
def _pow(b: Builder, args: Sequence[Complex]) -> Complex:
    """Numba's complex power: z * z for an exponent of 2, else CPython's
    ``_Py_c_pow`` in polar form; 1 for an exponent of 0, and for a zero base
    0, or NaNs where CPython raises ZeroDivisionError (an exponent with an
    imaginary part or a negative real one)."""
    z, w = args
    t = z.real.type
    zero, one = b.constant(0.0, t), b.constant(1.0, t)

    def both_zero(c: Complex) -> Value:
        return binary(b, "arith.andi", compare(b, "eq", c.real, zero),
                      compare(b, "eq", c.imag, zero))

    modulus = _scalar(b, math.hypot, z.real, z.imag)
    angle = _scalar(b, math.atan2, z.imag, z.real)
    length = _scalar(b, math.pow, modulus, w.real)
    phase = binary(b, "arith.mulf", angle, w.real)
    # with an imaginary exponent only (0 * log|z| would be NaN for |z| = inf)
    complex_exponent = compare(b, "ne", w.imag, zero)
    length = select(b, complex_exponent, binary(
        b, "arith.divf", length, _scalar(b, math.exp, binary(b, "arith.mulf", angle, w.imag))),
        length)
    phase = select(b, complex_exponent, binary(
        b, "arith.addf", phase, binary(b, "arith.mulf", w.imag, _scalar(b, math.log, modulus))),
        phase)
    polar = [binary(b, "arith.mulf", length, _scalar(b, trig, phase))
             for trig in (math.cos, math.sin)]
    # a zero base: 0, or NaN where CPython raises
    raises = binary(b, "arith.ori", complex_exponent, compare(b, "lt", w.real, zero))
    at_zero = select(b, raises, b.constant(math.nan, t), zero)
    base_zero, exponent_zero = both_zero(z), both_zero(w)
    square = _mul(b, [z, z])
    exponent_two = binary(b, "arith.andi", compare(b, "eq", w.real, b.constant(2.0, t)),
                          compare(b, "eq", w.imag, zero))
    parts = []
    for part, first, zero_part in zip(Complex.PARTS, (one, zero), (at_zero, at_zero)):
        value = select(b, base_zero, zero_part, polar[len(parts)])
        value = select(b, exponent_zero, first, value)
        parts.append(select(b, exponent_two, getattr(square, part), value))
    return Complex(*parts)


def _equality(predicate: str, combine: str):
    def emit(b: Builder, args: Sequence[Complex]) -> Value:
        x, y = args
        return binary(b, combine, compare(b, predicate, x.real, y.real),
                      compare(b, predicate, x.imag, y.imag))

    return emit


complex_rule(operator.eq, np.equal)(_equality("eq", "arith.andi"))
complex_rule(operator.ne, np.not_equal)(_equality("ne", "arith.ori"))

__all__ = ["Complex", "complex_rule", "lookup_complex_rule"]
