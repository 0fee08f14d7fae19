"""Rules of what NumPy functions put around a reduction, where a parfor body
calls the function on an array of its own (``np.max(x[i])``,
``np.dot(a[j, :], b[j, :])``): the parfor pass inlines the function as a
serial loop in the body, starting from the type's smallest or largest value
(``get_type_min_value``), after a call that raises NumPy's ValueError on
shapes it cannot reduce. A kernel cannot raise, so:

- the empty-array checks of ``np.min`` / ``np.max`` (Numba's) emit nothing:
  an empty array's minimum or maximum in a body is the reduction's start
  value (the type's largest or smallest value, infinities for floats), as an
  index out of bounds goes unchecked in a kernel;
- the length check of ``np.dot`` of two vectors passes where the lengths are
  computed alike from the same values (``np.dot(a[j, :], a[k, :])``, equal
  constants), and is refused otherwise, since vectors of different lengths
  would read past the shorter one.
"""

from __future__ import annotations

from numba.core import ir, types
from numba.parfors import parfor

from ...dialects import Value
from ...errors import UnsupportedError
from ..numpy_functions import check_vector_sizes
from ..translation import Translation, call_rule, scalar_type, where


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


@call_rule(check_vector_sizes)
def _vector_sizes_check(t: Translation, expr: ir.Expr, target: ir.Var) -> None:
    first, second = expr.args
    if not _same_value(t, first, second):
        raise UnsupportedError(
            f"{where(expr.loc)}: np.dot of two vectors in a parfor body whose lengths xpuc "
            "cannot tell equal when compiling (a kernel cannot raise NumPy's error for "
            "vectors of different lengths)")
    return None


# what two variables of the body may be computed by, and still be equal when
# computed from equal operands
_PURE_EXPRESSIONS = ("getattr", "getitem", "static_getitem", "build_tuple", "call")
_CONSTANTS = (ir.Const, ir.Global, ir.FreeVar)


def _same_value(t: Translation, first: ir.Var, second: ir.Var, depth: int = 0) -> bool:
    """Whether ``first`` and ``second`` are computed alike in the body from
    the same values (``a[j, :].shape[0]`` twice), so hold the same value."""
    if first.name == second.name:
        return True
    ones, others = t.definition(first), t.definition(second)
    if depth > 8 or ones is None or others is None:
        return False
    if isinstance(ones, ir.Var) or isinstance(others, ir.Var):
        return _same_value(t, ones if isinstance(ones, ir.Var) else first,
                           others if isinstance(others, ir.Var) else second, depth + 1)
    if isinstance(ones, _CONSTANTS) and isinstance(others, _CONSTANTS):
        return type(ones.value) is type(others.value) and ones.value == others.value
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
                e.index if e.op == "static_getitem" else None) for e in (ones, others)]
    operands = [e.list_vars() for e in (ones, others)]
    return statics[0] == statics[1] and len(operands[0]) == len(operands[1]) and all(
        _same_value(t, a, b, depth + 1) for a, b in zip(*operands))
