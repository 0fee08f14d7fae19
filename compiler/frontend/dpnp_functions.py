"""dpnp in jit code: dpnp's functions are NumPy's, and its constructors known
to Numba wherever a function refers to dpnp.

``dpnp.sqrt(a * a + b * b)``, ``dpnp.sum(x, axis=0)``, ``dpnp.where(c, x, y)``
compile as the NumPy function of the same name and offload as it does (array
expressions, the parfor pass's reductions, numpy_functions.py's overloads):
dpnp's arrays are USM arrays in compiled code, and a call with dpnp arrays
returns dpnp arrays (SPEC rule 2). ``DpnpAsNumPy`` puts NumPy's function in
place of dpnp's before typing, so that every pass which recognises NumPy's
calls by their callee (the parfor pass, array analysis) sees one.

The same pass teaches Numba dpnp's constructors (dpnp_constructors.py) when
the function it compiles refers to dpnp, however that function is reached: a
jit function that another one calls is inlined into the caller's IR, whose
own code may never name dpnp.

Any other function of dpnp (``dpnp.histogram``, ``dpnp.linalg.inv``) is
NumPy's function of the same name where Numba compiles that one (on the host:
what it reads of a usm_type="device" array is refused as any host code's
is), and else refused naming the user's line and ``dpnp.<name>``, rather
than left to Numba's "Unknown attribute".
"""

from __future__ import annotations

import functools
import sys
from types import ModuleType

import numpy as np
from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.errors import TypingError
from numba.core.ir_utils import build_definitions, get_definition, guard
from numba.np import ufunc_db

from ..errors import UnsupportedError
from .dpnp_constructors import CONSTRUCTORS, register_overloads

# dpnp's functions that are NumPy's besides the ufuncs: what xpuc offloads
# of NumPy's array functions (docs/spec.md)
ARRAY_FUNCTIONS = ("sum", "prod", "min", "max", "amin", "amax", "mean", "std", "var", "argmin",
                   "argmax", "dot", "where", "clip", "reshape", "transpose")


@functools.cache
def numpy_equivalents(dpnp: ModuleType) -> dict[str, object]:
    """The table: each name under which dpnp and NumPy both have a function
    that is NumPy's in jit code -> NumPy's function. The ufuncs Numba compiles
    come under each of their NumPy names (``abs`` and ``absolute``)."""
    compiled = set(ufunc_db.get_ufuncs())
    names = [name for name, value in vars(np).items()
             if isinstance(value, np.ufunc) and value in compiled]
    return {name: getattr(np, name) for name in (*names, *ARRAY_FUNCTIONS)
            if hasattr(dpnp, name)}


@functools.cache
def _names_of_objects(dpnp: ModuleType) -> dict[int, str]:
    """id of dpnp's function -> its name, for ``from dpnp import sqrt``."""
    return {id(getattr(dpnp, name)): name for name in numpy_equivalents(dpnp)}


def _global_value(func_ir: ir.FunctionIR, var: ir.Var) -> object:
    """The global (or closure variable) ``var`` holds, or the attribute of a
    module it holds (``dpnp.linalg``), else None."""
    definition = guard(get_definition, func_ir, var)
    if isinstance(definition, (ir.Global, ir.FreeVar)):
        return definition.value
    if isinstance(definition, ir.Expr) and definition.op == "getattr":
        module = _global_value(func_ir, definition.value)
        if isinstance(module, ModuleType):
            return getattr(module, definition.attr, None)
    return None


def _dpnp_path(dpnp: ModuleType, module: object, attr: str) -> str | None:
    """``attr``'s dotted name under dpnp (``linalg.inv``) when ``module`` is
    dpnp or one of its modules, else None."""
    if not isinstance(module, ModuleType):
        return None
    if module is dpnp:
        return attr
    prefix = f"{dpnp.__name__}."
    return f"{module.__name__[len(prefix):]}.{attr}" \
        if module.__name__.startswith(prefix) else None


def _typed_by_numba(typingctx, value: object) -> bool:
    """Whether Numba's typing knows ``value`` as a global (a module, a type,
    a constant, a function it or an overload types)."""
    try:
        typingctx.resolve_value_type(value)
    except (TypingError, ValueError):
        return False
    return True


def _numpy_namesake(path: str) -> object:
    """NumPy's object of dotted name ``path`` (``linalg.inv``), else None."""
    value: object = np
    for part in path.split("."):
        value = getattr(value, part, None)
    return value


def _unmapped_attributes(typingctx, found: list[tuple[ir.Assign, str]]) -> bool:
    """Each dpnp attribute Numba cannot type made NumPy's of that name where
    Numba types that, else refused at its line; whether any was replaced."""
    replaced = False
    for stmt, path in found:
        namesake = _numpy_namesake(path)
        if namesake is None or isinstance(namesake, ModuleType) or \
                not _typed_by_numba(typingctx, namesake):
            loc = stmt.value.loc
            raise UnsupportedError(
                f"{loc.filename}:{loc.line}: dpnp.{path} in jit code: xpuc compiles dpnp's "
                "functions as NumPy's of the same name, and Numba compiles no NumPy function of "
                "that name")
        stmt.value = ir.Global(f"dpnp.{path}", namesake, stmt.value.loc)
        replaced = True
    return replaced


@register_pass(mutates_CFG=False, analysis_only=False)
class DpnpAsNumPy(FunctionPass):
    """dpnp's functions replaced by NumPy's (``dpnp.sqrt`` becomes a global
    ``np.sqrt`` spelled ``dpnp.sqrt`` in messages); dpnp's constructors
    taught to Numba when the function refers to dpnp."""

    _name = "xpuc_dpnp_as_numpy"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        dpnp = sys.modules.get("dpnp")  # a function can only refer to dpnp once imported
        if dpnp is None:
            return False
        func_ir = state.func_ir
        numpy_of, named = numpy_equivalents(dpnp), _names_of_objects(dpnp)
        refers = replaced = False
        others: list[tuple[ir.Assign, str]] = []  # dpnp attributes not in the table
        for block in func_ir.blocks.values():
            for stmt in block.find_insts(ir.Assign):
                value = stmt.value
                if isinstance(value, (ir.Global, ir.FreeVar)):
                    refers |= value.value is dpnp
                    name = named.get(id(value.value))
                elif isinstance(value, ir.Expr) and value.op == "getattr":
                    path = _dpnp_path(dpnp, _global_value(func_ir, value.value), value.attr)
                    name = path if path in numpy_of else None
                    if path is not None and name is None and path not in CONSTRUCTORS:
                        others.append((stmt, path))
                else:
                    continue
                if name is not None:
                    stmt.value = ir.Global(f"dpnp.{name}", numpy_of[name], value.loc)
                    replaced = True
        if refers:
            register_overloads(dpnp)
            state.typingctx.refresh()  # the constructors, if just registered
        unknown = [(stmt, path) for stmt, path in others
                   if not hasattr(_global_value(func_ir, stmt.value.value), stmt.value.attr)
                   or not _typed_by_numba(state.typingctx, _global_value(func_ir, stmt.target))]
        replaced |= _unmapped_attributes(state.typingctx, unknown)
        if replaced:
            func_ir._definitions = build_definitions(func_ir.blocks)
        return replaced
