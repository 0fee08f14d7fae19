"""Rules of what np.argmin and np.argmax reductions compute in a body: Numba's
``IndexValue(index, value)`` and ``min`` / ``max`` of two of them. How a
reduction variable travels through the kernel and back to the host is the
parfor's business (parfor_reductions.py)."""

from __future__ import annotations

import builtins

from numba.core import ir
from numba.core.typing.builtins import IndexValue, IndexValueType

from ...dialects import BOOL, Builder, arith
from ..body_values import IndexValuePair
from ..translation import Translation, call_rule
from .arithmetic import call_on_scalars


@call_rule(IndexValue)
def _index_value(t: Translation, expr: ir.Expr, target: ir.Var) -> IndexValuePair:
    index, value = (t.value(a) for a in expr.args)
    return IndexValuePair(index, value)


@call_rule(builtins.min, builtins.max)
def _min_max(t: Translation, expr: ir.Expr, target: ir.Var) -> object:
    """min/max of scalars, or of two IndexValues as Numba orders them
    (numba/cpython/builtins.py, indval_min/indval_max): a NaN value wins,
    equal values go to the smaller index."""
    key = t.typemap[expr.func.name].typing_key
    if not isinstance(t.typemap[target.name], IndexValueType):
        return call_on_scalars(t, expr, key)
    first, second = (t.lookup(a) for a in expr.args)
    return index_value_min_max(t.b, key, first, second)


def index_value_min_max(b: Builder, key: object, first: IndexValuePair,
                        second: IndexValuePair) -> IndexValuePair:
    """``key(first, second)``, ``key`` builtins.min or max, of two IndexValues
    (a body's ``min`` of them, and a GPU reduction kernel's combine of two
    work-items' partial results)."""
    nan = [arith.compare(b, "ne", v.value, v.value) if v.value.type.is_float
           else b.constant(False, BOOL) for v in (first, second)]
    ahead = arith.compare(b, "lt" if key is builtins.min else "gt", second.value, first.value)
    tie = arith.compare(b, "eq", second.value, first.value)
    earlier = arith.compare(b, "le", second.index, first.index)
    # a NaN second wins unless the first is a NaN too, at an earlier index; a
    # number second wins if it is ahead, or equal with an earlier index (both
    # compares are false against a NaN first, which then stays)
    first_is_number = arith.binary(b, "arith.xori", nan[0], b.constant(True, BOOL))
    takes_second = arith.select(
        b, nan[1], arith.binary(b, "arith.ori", first_is_number, earlier),
        arith.binary(b, "arith.ori", ahead, arith.binary(b, "arith.andi", tie, earlier)))
    return IndexValuePair(*(arith.select(b, takes_second, getattr(second, part),
                                         getattr(first, part))
                            for part in IndexValuePair.PARTS))
