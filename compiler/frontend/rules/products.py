"""Rules of products of vectors and matrices in a body, as dpbench's programs
write them: ``a @ b``, and ``np.dot(a, b)`` where Numba leaves it a call, of
arrays from outside the body, their views and gathers (``x[cols]``).

- A product of two vectors is a number: a serial loop in the work-item
  (symm's ``B[:i, j] @ A[i, :i]``, spmv's ``vals @ x[cols]``, which reads
  ``x`` at ``cols`` in that loop).
- A product with a matrix is an array that no memory holds: it is computed
  where a slice assignment stores it, each element a serial loop
  (correlation's ``corr[i + 1:M, i] = data[:, i] @ data[:, i + 1:M]``).
- Elements may be complex (scattering_self_energies' ``G[k, e] @ dH[a, i]``
  of small blocks): the same loop, by the complex arithmetic of
  dialects/complex.py.
- A kernel cannot raise NumPy's error for lengths that differ: the lengths a
  product pairs, and the slice's against the product's, must be computed
  alike or be the same slice of dimensions the host compares before the
  launch (``body_checks.equal_extents``); others are refused naming the line.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
from numba.core import ir, types

from ...dialects import Complex, ScalarType, Value, scf
from ...errors import UnsupportedError
from ..body_values import ArrayValue, ComputedArray, as_element, element_rule
from ..translation import Translation, call_rule, scalar_type
from ..user_locations import where
from .body_checks import dimension_origin, equal_extents
from .computed_arrays import Readable, arrays_read_by, element_at

# NumPy's error for each pair of ranks, as Numba's np.dot raises it
_SIZE_ERRORS = {(1, 1): "vector * vector", (1, 2): "vector * matrix",
                (2, 1): "matrix * vector", (2, 2): "matrix * matrix"}


def is_product(t: Translation, expr: ir.Expr) -> bool:
    """Whether ``expr`` is ``a @ b`` of two arrays."""
    return expr.fn is operator.matmul and all(
        isinstance(t.typemap[v.name], types.Array) for v in (expr.lhs, expr.rhs))


def product(t: Translation, expr: ir.Expr, target: ir.Var) -> Value | ComputedArray:
    """``a @ b``: a number of two vectors, else an array computed where stored."""
    return _product(t, expr.lhs, expr.rhs, expr, "a product @")


@call_rule(np.dot)
def _dot(t: Translation, expr: ir.Expr, target: ir.Var) -> Value | ComputedArray:
    """``np.dot(a, b)`` that Numba did not inline (of a matrix, or of arrays
    that are not USM arrays): as ``a @ b``."""
    if len(expr.args) != 2:
        raise UnsupportedError(f"{where(expr.loc)}: np.dot with an out= array in a parfor body")
    return _product(t, *expr.args, expr, "np.dot")


def _product(t: Translation, lhs: ir.Var, rhs: ir.Var, expr: ir.Expr,
             what: str) -> Value | ComputedArray:
    held = t.lookup(lhs), t.lookup(rhs)
    ranks = tuple(len(h.dims) if isinstance(h, (ArrayValue, ComputedArray)) else 0
                  for h in held)
    if ranks not in _SIZE_ERRORS:
        raise UnsupportedError(f"{where(expr.loc)}: {what} of anything but vectors and "
                               "matrices in a parfor body")
    message = f"incompatible array sizes for np.dot(a, b) ({_SIZE_ERRORS[ranks]})"
    if not equal_extents(t, (lhs, ranks[0] - 1), (rhs, 0), message, expr.loc, ValueError):
        raise UnsupportedError(
            f"{where(expr.loc)}: {what} of arrays whose lengths xpuc cannot compare before the "
            "launch (a kernel cannot raise NumPy's error when they differ): they must be one "
            "slice of dimensions of arrays from outside the loop")
    result_type = t.calltypes[expr].return_type
    element_type = getattr(result_type, "dtype", result_type)
    is_complex = isinstance(element_type, types.Complex)
    dtype = scalar_type(element_type.underlying_float if is_complex else element_type, what,
                        expr.loc)
    a, b = held
    if ranks == (1, 1):
        return _sum_of_products(t, dtype, is_complex, a, b, lambda k: [k], lambda k: [k],
                                expr.loc)
    # the result's dimensions: a's but the last, b's but the first
    dims = a.dims[:-1] + b.dims[1:]
    origins = tuple([dimension_origin(t, lhs, axis) for axis in range(ranks[0] - 1)]
                    + [dimension_origin(t, rhs, axis) for axis in range(1, ranks[1])])

    def element(position: list[Value]) -> Value:
        rows, columns = position[:ranks[0] - 1], position[ranks[0] - 1:]
        return _sum_of_products(t, dtype, is_complex, a, b, lambda k: [*rows, k],
                                lambda k: [k, *columns], expr.loc)

    return ComputedArray(dims, dtype, element, origins, is_complex=is_complex,
                         arrays_read=arrays_read_by(t, a, b))


def _sum_of_products(t: Translation, dtype: ScalarType, is_complex: bool, a: Readable,
                     b: Readable, at_a: Callable[[Value], list[Value]],
                     at_b: Callable[[Value], list[Value]], loc: ir.Loc) -> Value | Complex:
    """The sum over k of ``a[at_a(k)] * b[at_b(k)]`` in ``dtype`` (complex
    numbers of ``dtype`` parts where ``is_complex``), k running along
    ``a``'s last dimension: a serial loop in the work-item."""
    multiply, add = (element_rule(key, is_complex) for key in (operator.mul, operator.add))

    def step(k: Value, total: Value | Complex) -> Value | Complex:
        terms = [as_element(t.b, element_at(t, array, at(k), loc), dtype, is_complex)
                 for array, at in ((a, at_a), (b, at_b))]
        return add(t.b, [total, multiply(t.b, terms, dtype)], dtype)

    return scf.fold(t.b, a.dims[-1], as_element(t.b, t.b.constant(0, dtype), dtype, is_complex),
                    step)
