"""Rules of operators and calls on scalars and complex numbers, ``float()``,
casts, and attributes (a module's constants such as ``np.pi``, ``.real`` and
``.imag``, a namedtuple's fields, an array's ``shape``).

A call without a call rule of its own, and every operator, goes to the
dialects' emit rules (``lookup_rule``, ``lookup_complex_rule``) with its
operands cast to the types the callee computes in.
"""

from __future__ import annotations

import builtins
import inspect
import operator

import numpy as np
from numba.core import ir, types
from numba.core.typing import Signature, npydecl
from numba.np.numpy_support import ufunc_find_matching_loop

from ...dialects import BOOL, Complex, ScalarType, Value, arith, lookup_complex_rule, lookup_rule
from ...errors import UnsupportedError
from ..body_values import (
    ArrayMethod,
    ArrayValue,
    CalleeValue,
    ComputedArray,
    IndexValuePair,
    MaskedArray,
    TupleValue,
    as_complex,
)
from ..translation import Translation, call_rule, expression_rule, literal, scalar_type
from ..user_locations import CallSite, where
from .array_reductions import is_array_reduction, reduce_into_array
from .computed_arrays import is_view_update, masked_length, update_view
from .products import is_product, product


def _apply_rule(t: Translation, key: object, operands: list[Value], expr: ir.Expr,
                what: str) -> Value:
    rule = lookup_rule(key)
    if rule is None:
        raise UnsupportedError(f"{where(expr.loc)}: {what} in {t.body}")
    sig = t.calltypes[expr]
    result = scalar_type(sig.return_type, what, expr.loc)
    if len(operands) > 1 and len(sig.args) == 1 and isinstance(sig.args[0], types.BaseTuple):
        # a *args callee (min, max): its operands meet in the result type
        arg_types = [result] * len(operands)
    else:
        arg_types = [scalar_type(a, what, expr.loc) for a in _computed_in(key, sig)]
    cast_operands = [arith.cast(t.b, v, ty) for v, ty in zip(operands, arg_types)]
    try:
        value = rule(t.b, cast_operands, result)
    except UnsupportedError as exc:
        raise UnsupportedError(f"{where(expr.loc)}: {exc} in {t.body}") from None
    return arith.cast(t.b, value, result)


# The ufunc of an operator (np.greater for ``>``), to compare mixed types as
# NumPy does
_UFUNC_OF_OPERATOR = {
    op: getattr(np, name)
    for op, name in {**npydecl.NumpyRulesArrayOperator._op_map,
                     **npydecl.NumpyRulesInplaceArrayOperator._op_map}.items()
}


def _computed_in(key: object, sig: Signature) -> tuple[types.Type, ...]:
    """The types a callee computes in. A ufunc's are those of the loop NumPy
    picks (np.minimum of float32 and float64 runs in float64), which Numba's
    call signature leaves as the arguments' own. An operator gets arguments
    of one type from Numba's scalar typing, but an array expression's keep
    theirs (uint8 // int64): Numba's CPU then converts them to the result
    type, or compares them as the operator's ufunc does."""
    arg_types = sig.args
    if not isinstance(key, np.ufunc) and len(set(arg_types)) > 1 \
            and key in _UFUNC_OF_OPERATOR:
        if not isinstance(sig.return_type, types.Boolean):
            return (sig.return_type,) * len(arg_types)
        key = _UFUNC_OF_OPERATOR[key]
    if isinstance(key, np.ufunc):
        loop = ufunc_find_matching_loop(key, arg_types)
        if loop is not None:
            return tuple(loop.inputs)
    return arg_types


@expression_rule("binop", "inplace_binop")
def _binop(t: Translation, expr: ir.Expr, target: ir.Var) -> object:
    if expr.fn in (operator.is_, operator.is_not):
        return _identity_test(t, expr, target)
    if is_array_reduction(t, expr.lhs):
        return reduce_into_array(t, expr, target)
    if is_product(t, expr):
        return product(t, expr, target)
    if is_view_update(t, expr):
        return update_view(t, expr, target)
    return _operate(t, expr.fn, [expr.lhs, expr.rhs], expr, f"operator {_name(expr.fn)}")


def _identity_test(t: Translation, expr: ir.Expr, target: ir.Var) -> Value:
    """``x is None`` / ``x is not None``: decided by the operands' types (a
    value of another type is never None)."""
    nones = [isinstance(t.typemap[v.name], (types.NoneType, types.Omitted))
             for v in (expr.lhs, expr.rhs)]
    if not any(nones):
        raise UnsupportedError(f"{where(expr.loc)}: 'is' between values in {t.body}")
    same = all(nones)
    return t.b.constant(same if expr.fn is operator.is_ else not same, BOOL)


@expression_rule("unary")
def _unary(t: Translation, expr: ir.Expr, target: ir.Var) -> Value:
    return _operate(t, expr.fn, [expr.value], expr, f"operator {_name(expr.fn)}")


@expression_rule("call")
def _call(t: Translation, expr: ir.Expr, target: ir.Var) -> object:
    """A call: by the call rule of its callee if it has one, else by the
    dialects' emit rule of the callee on its scalar or complex operands."""
    if expr.vararg or expr.varkwarg:
        raise UnsupportedError(f"{where(expr.loc)}: call with * arguments")
    callee = t.lookup(expr.func)
    fntype = t.typemap[expr.func.name]
    key = getattr(fntype, "typing_key", callee.obj if isinstance(callee, CalleeValue) else None)
    if expr.kws:
        expr = _with_positional_arguments(t, expr, key)
    special = t.rule_for_call(key)
    if special is not None:
        return special(t, expr, target)
    if any(isinstance(t.typemap[a.name], types.Array) and t.typemap[a.name].ndim > 0
           for a in expr.args):
        # no emit rule takes an array: name the call, not its operand
        raise UnsupportedError(f"{where(expr.loc)}: call to {_called(expr, key)} of an array in "
                               f"{t.body}, where xpuc computes only numbers and the array "
                               "functions docs/spec.md lists")
    return call_on_scalars(t, expr, key)


def _with_positional_arguments(t: Translation, expr: ir.Expr, key: object) -> ir.Expr:
    """The call ``expr`` with its keyword arguments in their positions of the
    callee's Python signature (``xpuc.local.array(shape=4, dtype=...)``), as
    its typing folded them; its type goes with it."""
    try:
        args = inspect.signature(key).bind(*expr.args, **dict(expr.kws)).args
    except (TypeError, ValueError):  # no Python signature, or one they do not fit
        raise UnsupportedError(f"{where(expr.loc)}: call of {_called(expr, key)} with keyword "
                               "arguments") from None
    folded = ir.Expr.call(expr.func, list(args), (), expr.loc)
    t.calltypes[folded] = t.calltypes[expr]
    return folded


def call_on_scalars(t: Translation, expr: ir.Expr, key: object) -> object:
    """A call of ``key`` by its emit rule, on scalar or complex operands."""
    return _operate(t, key, expr.args, expr, f"call to {_called(expr, key)}")


def _operate(t: Translation, key: object, args: list[ir.Var], expr: ir.Expr,
             what: str) -> object:
    """An operator or callee on scalar or complex operands."""
    result = t.calltypes[expr].return_type
    if not any(isinstance(ty, types.Complex)
               for ty in [result, *(t.typemap[a.name] for a in args)]):
        return _apply_rule(t, key, [t.value(a, expr.loc) for a in args], expr, what)
    rule = lookup_complex_rule(key)
    if rule is None:
        raise UnsupportedError(f"{where(expr.loc)}: {what} on complex numbers in {t.body}")
    widest = max((ty for ty in [result, *(t.typemap[a.name] for a in args)]
                  if isinstance(ty, types.Complex)), key=lambda ty: ty.bitwidth)
    part = scalar_type(widest.underlying_float, what, expr.loc)
    value = rule(t.b, [as_complex(t.b, t.number(a, expr.loc), part) for a in args])
    if isinstance(result, types.Complex):
        return as_complex(t.b, value, scalar_type(result.underlying_float, what, expr.loc))
    return arith.cast(t.b, value, scalar_type(result, what, expr.loc))


@call_rule(builtins.float)
def _float(t: Translation, expr: ir.Expr, target: ir.Var) -> Value:
    """``float(x)``; of a string literal (``float('inf')``), the constant it
    names, as Numba's CPU code computes it once."""
    arg_type = t.typemap[expr.args[0].name] if len(expr.args) == 1 else None
    if isinstance(arg_type, types.StringLiteral):
        try:
            value = float(arg_type.literal_value)
        except ValueError:
            raise UnsupportedError(f"{where(expr.loc)}: float({arg_type.literal_value!r}) "
                                   "is not a number") from None
        return t.b.constant(value, t.typed(target))
    return call_on_scalars(t, expr, builtins.float)


@call_rule(builtins.len)
def _len(t: Translation, expr: ir.Expr, target: ir.Var) -> Value:
    """``len`` of an array: its first extent; of a tuple, its length, which
    its type knows; of anything else, refused."""
    arg_type = t.typemap[expr.args[0].name]
    if isinstance(arg_type, types.BaseTuple):
        return t.b.constant(len(arg_type), ScalarType("i", 64))
    held = t.lookup(expr.args[0])
    if isinstance(held, ArrayValue) and held.dims:
        return arith.cast(t.b, held.dims[0], ScalarType("i", 64))
    return call_on_scalars(t, expr, builtins.len)  # refused, naming the operand


def _called(expr: ir.Expr, key: object) -> str:
    """The callee of call ``expr`` as a refusal names it: by its qualified
    name, or, for an object that has none (``numba.objmode``, an instance),
    as the user wrote it."""
    if not hasattr(key, "__name__") and isinstance(expr.loc, CallSite) and expr.loc.callee:
        return expr.loc.callee
    return _name(key)


def _name(obj: object) -> str:
    module = getattr(obj, "__module__", None) or ("numpy" if isinstance(obj, np.ufunc) else "")
    name = getattr(obj, "__name__", repr(obj))
    return f"{module}.{name}" if module and module != "builtins" else name


@expression_rule("getattr")
def _getattr(t: Translation, expr: ir.Expr, target: ir.Var) -> object:
    base = t.lookup(expr.value)
    if isinstance(base, CalleeValue):
        # a module's constants (np.inf, math.pi) are numbers, the rest callees
        return literal(t, getattr(base.obj, expr.attr), target, expr.loc)
    if isinstance(base, (ArrayValue, ComputedArray)) and expr.attr in ("copy", "reshape"):
        return ArrayMethod(base, expr.attr)
    if isinstance(base, MaskedArray) and expr.attr in ("shape", "size"):
        length = masked_length(t, base, expr.loc)
        return TupleValue((length,)) if expr.attr == "shape" else length
    if isinstance(base, (ArrayValue, ComputedArray)) and expr.attr == "shape":
        return TupleValue(tuple(arith.cast(t.b, d, ScalarType("i", 64)) for d in base.dims))
    if isinstance(base, ArrayValue) and expr.attr == "ndim":
        return t.b.constant(len(base.dims), ScalarType("i", 64))
    if isinstance(base, ArrayValue) and expr.attr == "size":
        size = t.b.index_constant(1)
        for extent in base.dims:
            size = arith.binary(t.b, "arith.muli", size, extent)
        return arith.cast(t.b, size, ScalarType("i", 64))
    if isinstance(base, (IndexValuePair, Complex)) and expr.attr in base.PARTS:
        return getattr(base, expr.attr)
    if isinstance(base, Value) and expr.attr in Complex.PARTS:  # of a real number
        return base if expr.attr == "real" else t.b.constant(0, base.type)
    fields = getattr(t.typemap[expr.value.name], "fields", ())
    if isinstance(base, TupleValue) and expr.attr in fields:  # a namedtuple's field
        return base.items[fields.index(expr.attr)]
    raise UnsupportedError(f"{where(expr.loc)}: attribute '{expr.attr}' in {t.body}")


@expression_rule("cast")
def _cast(t: Translation, expr: ir.Expr, target: ir.Var) -> object:
    return t.lookup(expr.value)
