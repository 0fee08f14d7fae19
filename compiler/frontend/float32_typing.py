"""Python floats as float32, for a device without fp64.

Numba types a Python float as float64, so ``a * 0.25`` on a float32 array
computes in double, which a GPU without fp64 (Arc, integrated Iris Xe) cannot
build. NumPy 2 keeps that product float32: a Python scalar is "weak" beside
an array (NEP 50). On such a device xpuc makes every Python float of a
function float32 before Numba types it: float literals, float globals
(``math.pi``, ``np.inf``) and ``float(...)``; float scalar arguments are typed
float32 by the dispatcher and the kernel launcher (``python_float_type``).
float32 data then stays float32, and a sum seeded with ``0.0`` accumulates in
float32. Ints are weak beside float32 too (``x / 2``, ``a * 2``, ``x > 0``,
``j * dx``, ``a[i] * n``): where Numba would widen float32 and an int to
float64, a literal becomes a float32 constant and a variable is converted to
float32 where it is used (``WeakIntLiterals``): NumPy 2 does so for a
Python int (a shape, a range's index), and Numba types every int scalar
alike. What still needs float64 (float64 arrays, ``np.float64(...)``, true
division of integers) is left as Numba types it, and refused before any
build by the spirv stage's check, naming fp64, the target and the line.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import build_definitions, mk_unique_var
from numba.core.typed_passes import type_inference_stage


def python_float_type(fp64: bool) -> types.Float:
    """The type of a Python float argument on a device with or without fp64."""
    return types.float64 if fp64 else types.float32


def _single_definition(func_ir: ir.FunctionIR, var: ir.Var) -> ir.Inst | None:
    """What ``var`` is assigned (through copies ``b = a``), when each name on
    the way is assigned once. These passes run before Numba's SSA: a name the
    function assigns twice (``a, b = b, a`` in a loop) has several
    definitions, where Numba's lookup raises KeyError."""
    definition: ir.Inst | None = var
    while isinstance(definition, ir.Var):
        definitions = func_ir._definitions.get(definition.name, ())
        definition = definitions[0] if len(definitions) == 1 else None
    return definition


def _float32_value(func_ir: ir.FunctionIR, value: ir.Inst) -> object | None:
    """What replaces ``value`` (the right side of an assignment): a float32
    constant for a Python float, ``np.float32`` for ``float``; else None."""
    if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
        if type(value.value) is float:
            return ir.Const(np.float32(value.value), value.loc)
        if value.value is float:
            return ir.Global("float32", np.float32, value.loc)
    elif isinstance(value, ir.Expr) and value.op == "getattr":
        # math.pi, np.inf: a module's float
        module = _single_definition(func_ir, value.value)
        if isinstance(module, (ir.Global, ir.FreeVar)) and isinstance(module.value, ModuleType):
            found = getattr(module.value, value.attr, None)
            if type(found) is float:
                return ir.Const(np.float32(found), value.loc)
    return None


@register_pass(mutates_CFG=False, analysis_only=False)
class PythonFloatsAsFloat32(FunctionPass):
    """Replace each Python float of the untyped IR (device functions inlined)
    with a float32 constant, before typing."""

    _name = "xpuc_python_floats_as_float32"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        func_ir = state.func_ir
        changed = False
        for block in func_ir.blocks.values():
            for assign in block.find_insts(ir.Assign):
                replacement = _float32_value(func_ir, assign.value)
                if replacement is not None:
                    assign.value = replacement
                    changed = True
        if changed:  # definitions name the values replaced
            func_ir._definitions = build_definitions(func_ir.blocks)
        return changed


# rounds of typing WeakIntLiterals runs at most: a literal made float32 can
# make the next operation float32 in turn ((x * 2) / 3)
_ROUNDS = 4


def _is_float32(nbtype: types.Type | None) -> bool:
    """float32, or an array of it."""
    if isinstance(nbtype, types.Array):
        nbtype = nbtype.dtype
    return nbtype == types.float32


def _widens(signature) -> bool:
    """Whether an operation's signature computes in float64."""
    if signature is None:
        return False
    return any(nbtype == types.float64 or (isinstance(nbtype, types.Array)
                                            and nbtype.dtype == types.float64)
               for nbtype in (*signature.args, signature.return_type))


def _int_literal(func_ir: ir.FunctionIR, var: ir.Var) -> ir.Const | None:
    """The Python int literal ``var`` holds, if it is one: a temporary (a
    variable of the user's holding an int may meet ints elsewhere)."""
    if not var.is_temp:
        return None
    definition = _single_definition(func_ir, var)
    if isinstance(definition, ir.Const) and type(definition.value) is int:
        return definition
    return None


@register_pass(mutates_CFG=False, analysis_only=False)
class WeakIntLiterals(FunctionPass):
    """Make float32 each int that a binary operation pairs with a float32
    value or array (Numba would compute the pair in float64, NumPy 2 in
    float32, a Python int being weak), as typing the function finds them,
    before it is typed for good: a literal becomes a float32 constant, an int
    variable (``j * dx``, ``a[i] * n``) is converted where it is used; and
    each int literal a variable is assigned beside float32 values."""

    _name = "xpuc_weak_int_literals"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        func_ir = state.func_ir
        changed = False
        for _ in range(_ROUNDS):
            typing = type_inference_stage(state.typingctx, state.targetctx, func_ir, state.args,
                                          None, state.locals, raise_errors=False)
            if typing.typing_errors:  # typing for good reports them
                break
            literals, conversions = [], []
            for block in func_ir.blocks.values():
                for stmt in block.body:
                    expr = stmt.value if isinstance(stmt, ir.Assign) else None
                    if not isinstance(expr, ir.Expr) or expr.op not in ("binop",
                                                                         "inplace_binop"):
                        continue
                    widens = _widens(typing.calltypes.get(expr))
                    for side, other in (("lhs", expr.rhs), ("rhs", expr.lhs)):
                        other_type = typing.typemap.get(other.name)
                        # an array expression types float32 here, but its
                        # parfor computes each element as the scalars do
                        if not (_is_float32(other_type)
                                and (widens or isinstance(other_type, types.Array))):
                            continue
                        operand = getattr(expr, side)
                        const = _int_literal(func_ir, operand)
                        if const is not None:
                            literals.append(const)
                        elif isinstance(typing.typemap.get(operand.name), types.Integer):
                            conversions.append((block, stmt, side))
            literals += _ints_beside_float32(func_ir, typing.typemap)
            if not literals and not conversions:
                break
            for const in literals:
                const.value = np.float32(const.value)
            for block, stmt, side in conversions:
                _convert_to_float32(block, stmt, side)
            func_ir._definitions = build_definitions(func_ir.blocks)
            changed = True
        return changed


def _ints_beside_float32(func_ir: ir.FunctionIR, typemap: dict) -> list[ir.Const]:
    """The int literals that a variable is assigned where it is assigned float32
    values too (``d = -1``, later ``d = distance`` in a loop): Numba unifies
    them, at the phis of its SSA form, to float64; a Python variable holds the
    float32. The phis of one variable take each other (a loop's) besides."""
    phis = {stmt.target.name: stmt.value for block in func_ir.blocks.values()
            for stmt in block.find_insts(ir.Assign)
            if isinstance(stmt.value, ir.Expr) and stmt.value.op == "phi"}
    # an int read elsewhere too (``k = d``, an index) stays an int
    read_elsewhere = {var.name for block in func_ir.blocks.values() for stmt in block.body
                      if not (isinstance(stmt, ir.Assign) and stmt.target.name in phis)
                      for var in stmt.list_vars()
                      if not (isinstance(stmt, ir.Assign) and var is stmt.target)}
    found, seen = [], set()
    for start in phis:
        if start in seen or typemap.get(start) != types.float64:
            continue
        # the phis joined to this one, and what else they take
        web, pending, ints, floats, others = set(), [start], [], False, False
        while pending:
            name = pending.pop()
            if name in web:
                continue
            web.add(name)
            for value in phis[name].incoming_values:
                definition = _single_definition(func_ir, value)
                if value.name in phis:
                    pending.append(value.name)
                elif (isinstance(definition, ir.Const) and type(definition.value) is int
                      and value.name not in read_elsewhere):
                    ints.append(definition)
                elif typemap.get(value.name) == types.float32:
                    floats = True
                else:
                    others = True
        seen |= web
        if ints and floats and not others:
            found += ints
    return found


def _convert_to_float32(block: ir.Block, stmt: ir.Assign, side: str) -> None:
    """Pass ``np.float32(operand)`` as the ``side`` operand of the binary
    operation ``stmt`` assigns, converted just before it."""
    expr, loc = stmt.value, stmt.loc
    operand = getattr(expr, side)
    function = ir.Var(block.scope, mk_unique_var("$float32"), loc)
    converted = ir.Var(block.scope, mk_unique_var(f"{operand.name}_float32"), loc)
    at = block.body.index(stmt)
    block.body[at:at] = [
        ir.Assign(ir.Global("float32", np.float32, loc), function, loc),
        ir.Assign(ir.Expr.call(function, (operand,), (), loc), converted, loc),
    ]
    setattr(expr, side, converted)
