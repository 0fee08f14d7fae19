"""Device functions: a ``numba.njit`` or ``xpuc.jit`` function called from an
explicit kernel or an offloaded function is inlined where it is called,
before typing, so that its body is translated with the caller's (a kernel has
no calls: each callee becomes part of it). Recursion cannot be inlined and is
refused, naming the functions and the line."""

from __future__ import annotations

from numba.core import ir, postproc
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.inline_closurecall import InlineWorker, callee_ir_validator
from numba.core.ir_utils import (
    build_definitions,
    replace_var_names,
    resolve_func_from_module,
    simplify_CFG,
)

from ..errors import UnsupportedError


def callee_object(func_ir: ir.FunctionIR, call: ir.Expr) -> object:
    """The Python object a call calls, when the IR says (a global, a closure
    variable, a module's attribute); else None."""
    try:
        definition = func_ir.get_definition(call.func)
    except KeyError:
        return None
    if isinstance(definition, ir.Expr) and definition.op == "getattr":
        return resolve_func_from_module(func_ir, definition)
    return getattr(definition, "value", None) if isinstance(
        definition, (ir.Global, ir.FreeVar)) else None


def device_function(callee: object):
    """The Python function of a jitted callee (Numba's dispatcher or xpuc's
    JitFunction), or None for anything else."""
    py_func = getattr(callee, "py_func", None)
    # JitFunction is the dispatcher layer's, which the frontend may not import
    jitted = hasattr(callee, "targetoptions") or type(callee).__name__ == "JitFunction"
    return py_func if jitted and callable(py_func) else None


def _keep_user_names(func_ir: ir.FunctionIR, scope: ir.Scope, blocks: dict[int, ir.Block],
                     renamed: dict[str, ir.Var]) -> None:
    """Give the variables of a device function inlined as ``blocks`` their own
    names back, versioned where the caller has one alike (``row.1``), for
    messages: Numba's inliner names them after the function (``corner_v3_row``)."""
    names = {var.name: scope.redefine(original, var.loc).name
             for original, var in renamed.items()}
    replace_var_names(blocks, names)
    func_ir._definitions = build_definitions(func_ir.blocks)


@register_pass(mutates_CFG=True, analysis_only=False)
class InlineDeviceFunctions(FunctionPass):
    """Inline every call of a jitted function, transitively."""

    _name = "xpuc_inline_device_functions"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        func_ir = state.func_ir
        worker = InlineWorker(state.typingctx, state.targetctx, state.locals, state.pipeline,
                              state.flags, validator=callee_ir_validator)
        # each block with the functions it was inlined through, to catch recursion
        chains = {label: (func_ir.func_id.func,) for label in func_ir.blocks}
        work = list(func_ir.blocks.items())
        modified = False
        while work:
            label, block = work.pop()
            for i, stmt in enumerate(block.body):
                if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                        and stmt.value.op == "call"):
                    continue
                py_func = device_function(callee_object(func_ir, stmt.value))
                if py_func is None:
                    continue
                chain = chains.get(label, (func_ir.func_id.func,))
                if py_func in chain:
                    names = " -> ".join(f.__name__ for f in (*chain, py_func))
                    raise UnsupportedError(
                        f"{stmt.loc.filename}:{stmt.loc.line}: recursion ({names}): a device "
                        "function is inlined where it is called, which recursion cannot be")
                _, _, renamed, new_blocks = worker.inline_function(func_ir, block, i, py_func)
                # the first new block is the rest of this one, the caller's; the
                # others are the callee's
                (rest_label, _), *callee_blocks = new_blocks
                _keep_user_names(func_ir, block.scope, dict(callee_blocks), renamed)
                chains[rest_label] = chain
                chains.update((new_label, (*chain, py_func)) for new_label, _ in callee_blocks)
                work += new_blocks
                modified = True
                break
        if modified:
            cfg = compute_cfg_from_blocks(func_ir.blocks)
            for dead in cfg.dead_nodes():
                del func_ir.blocks[dead]
            postproc.PostProcessor(func_ir).run()
            func_ir.blocks = simplify_CFG(func_ir.blocks)
        return modified
