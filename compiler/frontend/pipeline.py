"""Numba's nopython pipeline with parfor analysis, whose parfors lower through
xpuc instead of Numba's CPU threads."""

from __future__ import annotations

import functools

from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.typed_passes import ParforPreLoweringPass
from numba.parfors.parfor import Parfor

from .host_lowering import OffloadTarget, lower_parfor


@register_pass(mutates_CFG=False, analysis_only=False)
class AttachOffloadLowerer(FunctionPass):
    """Point every top-level parfor at xpuc's lowering (Numba calls
    ``Parfor.lowerer`` when it is set)."""

    _name = "xpuc_attach_offload_lowerer"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        lowerer = functools.partial(lower_parfor, state.xpuc_offload)
        for block in state.func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, Parfor):
                    stmt.lowerer = lowerer
        return False


def compiler_for(offload: OffloadTarget) -> type[CompilerBase]:
    """A Numba pipeline class that offloads parfors for ``offload``'s device."""

    class OffloadCompiler(CompilerBase):
        def define_pipelines(self):
            self.state.xpuc_offload = offload
            pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
            # after pre-lowering, when parfors are fused and their params known
            pm.add_pass_after(AttachOffloadLowerer, ParforPreLoweringPass)
            pm.finalize()
            return [pm]

    return OffloadCompiler
