"""Emit rules for complex numbers, each held as its real and imaginary parts
(two floats of the part type), as Numba computes them (numba/cpython/numbers.py):
a table of its own, keyed by operator or callee like the scalar one, whose
rules take complex operands (real ones arrive with a zero imaginary part) and
return a complex or a scalar value."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba.core import types as nbtypes

from .arith import binary, compare, select
from .builder import Builder, Value
from .registry import RuleTable, lookup_rule


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


def _equality(predicate: str, combine: str):
    def emit(b: Builder, args: Sequence[Complex]) -> Value:
        x, y = args
        return binary(b, combine, compare(b, predicate, x.real, y.real),
                      compare(b, predicate, x.imag, y.imag))

    return emit


complex_rule(operator.eq, np.equal)(_equality("eq", "arith.andi"))
complex_rule(operator.ne, np.not_equal)(_equality("ne", "arith.ori"))

__all__ = ["Complex", "complex_rule", "lookup_complex_rule"]
