"""The messages of array analysis's size checks in the user's terms.

Numba's array analysis asserts, before arrays are combined, that their sizes
match (``assert_equiv``), and its message names the arrays by their IR
variables: ``Sizes of x, $34call.5 do not match on f.py (5)``. A message must
never show one of Numba's temporaries, so ``NameSizeChecks`` rewrites each
check's message to name a temporary by what computed it: the user's call
(``np.ones(...)``, ``np.sqrt(...).sum(...)``), a subscript (``x[...]``), an
attribute (``x.T``) or an array expression, as ``RecordArrayDefinitions``
found it before the parfor pass fused it away, or as the IR has it now. The
message is a ``StringLiteral`` type the check's signature carries, so the
type is rewritten with the value.
"""

from __future__ import annotations

import re

from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.parfors import array_analysis

from .translation import nested_statements
from .user_locations import CallSite, inlined_call, user_names

_MESSAGE = re.compile(r"^Sizes of (?P<names>.*) do not match on (?P<where>.*)$", re.DOTALL)


def described_array(name: str, definitions: dict[str, ir.Assign], depth: int = 0) -> str:
    """An array as a size check's message names it: by the user's name, else
    by what computed it."""
    if not name.startswith("$"):
        return user_names([name])
    assign = definitions.get(name)
    if assign is None or depth > 4:
        return "an array"
    site = assign.target.loc
    if isinstance(site, CallSite):
        return f"{site.callee}(...)" if site.callee else "the result of a call"
    call = inlined_call(assign.loc)
    if call is not None:
        return call
    value = assign.value
    if isinstance(value, ir.Expr):
        if value.op in ("getitem", "static_getitem"):
            return f"{described_array(value.value.name, definitions, depth + 1)}[...]"
        if value.op == "getattr":
            return f"{described_array(value.value.name, definitions, depth + 1)}.{value.attr}"
        if value.op in ("arrayexpr", "binop", "inplace_binop", "unary"):
            return "an array expression"
    if isinstance(value, ir.Var):
        return described_array(value.name, definitions, depth + 1)
    return "an array"


def _definitions(blocks: dict[int, ir.Block]) -> dict[str, ir.Assign]:
    return {stmt.target.name: stmt for stmt, _ in nested_statements(blocks.values())
            if isinstance(stmt, ir.Assign)}


@register_pass(mutates_CFG=False, analysis_only=True)
class RecordArrayDefinitions(FunctionPass):
    """Before the parfor pass fuses them away, keep the statements that
    compute temporaries, which a size check's message may name."""

    _name = "xpuc_record_array_definitions"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        state.metadata["xpuc_array_definitions"] = _definitions(state.func_ir.blocks)
        return False


@register_pass(mutates_CFG=False, analysis_only=False)
class NameSizeChecks(FunctionPass):
    """Name the arrays of every size check's message in the user's terms."""

    _name = "xpuc_name_size_checks"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        definitions = {**state.metadata.get("xpuc_array_definitions", {}),
                       **_definitions(state.func_ir.blocks)}
        changed = False
        for stmt, _ in nested_statements(state.func_ir.blocks.values()):
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                    and stmt.value.op == "call"):
                continue
            callee = state.typemap.get(stmt.value.func.name)
            if getattr(callee, "typing_key", None) is not array_analysis.assert_equiv:
                continue
            changed |= _rename(state, stmt.value, definitions)
        return changed


def _rename(state, call: ir.Expr, definitions: dict[str, ir.Assign]) -> bool:
    """Rewrite the message of the size check ``call`` (its value, its type and
    the check's signature); False where it is not Numba's message."""
    message_var = call.args[0]
    message_assign = definitions.get(message_var.name)
    if message_assign is None or not isinstance(message_assign.value, ir.Const):
        return False
    match = _MESSAGE.match(str(message_assign.value.value))
    if match is None:
        return False
    names = [described_array(name, definitions) for name in match["names"].split(", ")]
    message = f"Sizes of {', '.join(names)} do not match on {match['where']}"
    message_assign.value = ir.Const(message, message_assign.value.loc)
    literal = types.StringLiteral(message)
    state.typemap.pop(message_var.name)  # a typemap refuses to overwrite
    state.typemap[message_var.name] = literal
    arguments = types.StarArgTuple.from_types(
        (literal,) + tuple(state.calltypes.pop(call).args[0][1:]))
    # typed anew, as array analysis types the check: its lowering is the one
    # typing makes for the message's literal
    state.calltypes[call] = state.typingctx.resolve_function_type(
        state.typemap[call.func.name], (arguments,), {})
    return True
