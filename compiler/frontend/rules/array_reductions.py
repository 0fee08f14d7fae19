"""Reductions into arrays in a ``prange`` body (``acc += row``, ``acc -= x[i]``,
as Numba's ``parallel=True`` allows them): each element of the array from
outside the loop is updated atomically by each iteration, as an element that
several iterations update is (SPEC rule 12), instead of Numba's copy of the
array per thread. The array's old value is kept and the iterations' terms
added to it, a float sum in some order, as a reduction's."""

from __future__ import annotations

import operator

from numba.core import ir, types
from numba.parfors import array_analysis

from ...dialects import Value, arith, spirv
from ...errors import UnsupportedError
from ..body_values import ArrayValue
from ..translation import Translation, user_names
from ..user_locations import where
from .arrays import (
    ATOMIC_ELEMENTS,
    element_loops,
    element_offset,
    global_element_pointer,
    load_element,
    note_use,
)

# the in-place operators of a reduction into an array: SPIR-V's integer
# atomic, the float operation of the compare-exchange loop
_UPDATES = {operator.iadd: ("AtomicIAdd", "arith.addf"), operator.add: ("AtomicIAdd", "arith.addf"),
            operator.isub: ("AtomicISub", "arith.subf"), operator.sub: ("AtomicISub", "arith.subf")}


def is_array_reduction(t: Translation, var: ir.Var) -> bool:
    """Whether ``var`` is a reduction variable of the parfor that is an array."""
    return t.parfor is not None and var.name in t.parfor.redvars and \
        isinstance(t.typemap[var.name], types.Array)


def reduce_into_array(t: Translation, expr: ir.Expr, target: ir.Var) -> ArrayValue:
    """``acc += x`` of the reduction array ``acc`` (``expr.lhs``) with an array
    of its shape or a number ``x``: a serial loop over ``acc``'s elements in
    the work-item, each updated atomically."""
    acc, name = t.lookup(expr.lhs), user_names([expr.lhs.name])
    if expr.fn not in _UPDATES:
        raise UnsupportedError(f"{where(expr.loc)}: reduction into the array '{name}' with an "
                               "operator other than += or -=")
    if not isinstance(acc, ArrayValue) or acc.is_complex or acc.storage is not None \
            or (acc.dtype.kind, acc.dtype.bits) not in ATOMIC_ELEMENTS:
        raise UnsupportedError(
            f"{where(expr.loc)}: reduction into the array '{name}' of {t.typemap[expr.lhs.name]}:"
            " only int32, int64, float32 and float64 arrays can be updated atomically")
    _refuse_other_uses(t, expr.lhs.name)
    term = t.lookup(expr.rhs)
    if isinstance(term, ArrayValue) and len(term.dims) != len(acc.dims) or \
            not isinstance(term, (ArrayValue, Value)):
        raise UnsupportedError(f"{where(expr.loc)}: reduction into the array '{name}' of "
                               "anything but a number or an array of its shape")
    integer_op, float_op = _UPDATES[expr.fn]
    note_use(t, acc, reads=True, writes=True)
    b = t.b
    with element_loops(t, acc) as positions:
        if isinstance(term, ArrayValue):
            note_use(t, term, reads=True)
            value = load_element(b, term, element_offset(t, term, positions, expr.loc))
        else:
            value = term
        value = arith.cast(b, value, acc.dtype)
        element = global_element_pointer(t, acc, element_offset(t, acc, positions, expr.loc))
        if acc.dtype.is_float:
            spirv.atomic_update_loop(b, element, acc.dtype, "CrossWorkgroup", "Device",
                                     lambda old: arith.binary(b, float_op, old, value))
        else:
            spirv.atomic(b, integer_op, element, acc.dtype, "CrossWorkgroup", "Device", [value])
    return acc


def _refuse_other_uses(t: Translation, name: str) -> None:
    """Refuse a use of the reduction array ``name`` in the loop besides its
    updates (``$t = acc + x; acc = $t``), its metadata and array analysis's
    size checks: other work-items change its elements meanwhile."""
    statements = [stmt for block in t.parfor.loop_body.values() for stmt in block.body
                  if not isinstance(stmt, ir.Del)]
    updates = [stmt for stmt in statements if isinstance(stmt, ir.Assign)
               and isinstance(stmt.value, ir.Expr) and stmt.value.op in ("binop", "inplace_binop")
               and stmt.value.lhs.name == name and stmt.value.rhs.name != name]
    results = {stmt.target.name for stmt in updates}
    for stmt in statements:
        used = {v.name for v in stmt.list_vars()}
        if stmt in updates or not used & (results | {name}):
            continue
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if isinstance(value, ir.Var) and value.name in results and stmt.target.name == name:
            continue
        if isinstance(value, ir.Expr) and (value.op == "getattr" or value.op == "call" and getattr(
                t.typemap[value.func.name], "typing_key", None) is array_analysis.assert_equiv):
            continue
        raise UnsupportedError(
            f"{where(stmt.loc)}: the array '{user_names([name])}' that the loop reduces into "
            "used besides its updates (other iterations change its elements meanwhile)")
