"""Math ops the SPIR-V conversion lacks or lowers inexactly, expanded into ops
it lowers well, before ``convert-math-to-spirv`` runs (the ``spirv`` stage).

OpenCL has exp2, trunc and cbrt, but ``convert-math-to-spirv`` does not lower
them; it lowers expm1 and log1p as ``exp(x) - 1`` and ``log(1 + x)``, which
lose every digit of a small ``x`` (expm1(1e-7) came out 19% off in float32).
Each expansion here matches NumPy within a few ulp over the whole range
(tests/test_math_accuracy.py).
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith
from mlir.dialects import math as mmath

from .ir_queries import gpu_modules, nested_ops


def _equal(x: ir.Value, y: ir.Value) -> ir.Value:
    return arith.cmpf(arith.CmpFPredicate.OEQ, x, y)


def _constant(like: ir.Value, value: float) -> ir.Value:
    return arith.constant(like.type, value)


def _exp2(x: ir.Value) -> ir.Value:
    return mmath.powf(_constant(x, 2.0), x)


def _trunc(x: ir.Value) -> ir.Value:
    return mmath.copysign(mmath.floor(mmath.absf(x)), x)


def _cbrt(x: ir.Value) -> ir.Value:
    magnitude = mmath.absf(x)
    root = mmath.powf(magnitude, _constant(x, 1 / 3))
    # 1/3 is rounded, so pow is off by up to tens of ulps for large x: one
    # Newton step on root**3 = magnitude, root -= (root - magnitude / root**2) / 3
    # (not cubing root, which would underflow for subnormal x), brings it to
    # about one ulp
    quotient = arith.divf(magnitude, arith.mulf(root, root))
    step = arith.divf(arith.subf(root, quotient), _constant(x, 3.0))
    refined = arith.subf(root, step)
    # at 0 and inf pow is exact, and the step would be 0/0 or inf/inf
    ordinary = arith.andi(
        arith.cmpf(arith.CmpFPredicate.ONE, root, _constant(x, 0.0)),
        arith.cmpf(arith.CmpFPredicate.ONE, root, _constant(x, float("inf"))))
    return mmath.copysign(arith.select(ordinary, refined, root), x)


def _expm1(x: ir.Value) -> ir.Value:
    """Kahan's expm1: with u = exp(x) rounded, (u - 1) * (x / log(u)) is
    within a few ulp of exp(x) - 1, because u's rounding error cancels
    between u - 1 and log(u). (x / log(u) is near 1: no overflow below
    exp's.) Where u is 1 the answer is x itself (tiny and subnormal x, -0.0);
    where u - 1 is -1 it is -1 (log(u) may be -inf there); where u overflows,
    inf."""
    one = _constant(x, 1.0)
    u = mmath.exp(x)
    u_minus_one = arith.subf(u, one)
    corrected = arith.mulf(u_minus_one, arith.divf(x, mmath.log(u)))
    saturated = arith.select(_equal(u_minus_one, _constant(x, -1.0)), u_minus_one,
                             arith.select(_equal(u, _constant(x, float("inf"))), u, corrected))
    return arith.select(_equal(u, one), x, saturated)


def _log1p(x: ir.Value) -> ir.Value:
    """log1p as log(u) * (x / (u - 1)) with u = 1 + x rounded: the factor
    corrects for the rounding of u (Goldberg, "What every computer scientist
    should know about floating-point arithmetic", theorem 4). Where u is 1
    the answer is x itself; where u is inf, inf (the factor would be nan)."""
    one = _constant(x, 1.0)
    u = arith.addf(one, x)
    corrected = arith.mulf(mmath.log(u), arith.divf(x, arith.subf(u, one)))
    unbounded = arith.select(_equal(u, _constant(x, float("inf"))), u, corrected)
    return arith.select(_equal(u, one), x, unbounded)


_EXPANSIONS: dict[str, Callable[[ir.Value], ir.Value]] = {
    "math.exp2": _exp2, "math.trunc": _trunc, "math.cbrt": _cbrt,
    "math.expm1": _expm1, "math.log1p": _log1p,
}


def expand_math(module: ir.Module) -> None:
    """Replace each of the kernels' math ops named in ``_EXPANSIONS``."""
    for gpu_module in gpu_modules(module):
        for op in nested_ops(gpu_module):
            expand = _EXPANSIONS.get(op.name)
            if expand is not None:
                with ir.InsertionPoint(op), op.location:
                    op.results[0].replace_all_uses_with(expand(op.operands[0]))
                op.erase()
