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
"""

from __future__ import annotations

import functools
import sys
from types import ModuleType

import numpy as np
from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import build_definitions, get_definition, guard
from numba.np import ufunc_db

from .dpnp_constructors import register_overloads

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
    """The global (or closure variable) ``var`` holds, else None."""
    definition = guard(get_definition, func_ir, var)
    return definition.value if isinstance(definition, (ir.Global, ir.FreeVar)) else None


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
        for block in func_ir.blocks.values():
            for stmt in block.find_insts(ir.Assign):
                value = stmt.value
                if isinstance(value, (ir.Global, ir.FreeVar)):
                    refers |= value.value is dpnp
                    name = named.get(id(value.value))
                elif isinstance(value, ir.Expr) and value.op == "getattr" and \
                        _global_value(func_ir, value.value) is dpnp:
                    name = value.attr if value.attr in numpy_of else None
                else:
                    continue
                if name is not None:
                    stmt.value = ir.Global(f"dpnp.{name}", numpy_of[name], value.loc)
                    replaced = True
        if replaced:
            func_ir._definitions = build_definitions(func_ir.blocks)
        if refers:
            register_overloads(dpnp)
            state.typingctx.refresh()  # the constructors, if just registered
        return replaced
