"""Numba's nopython pipeline with parfor analysis, whose parfors lower through
xpuc instead of Numba's CPU threads."""

from __future__ import annotations

import functools
from types import ModuleType

from numba.core import ir, types
from numba.core.compiler import (
    CompilerBase,
    DefaultPassBuilder,
    Flags,
    _EarlyPipelineCompletion,
    compile_extra,
    run_frontend,
)
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.consts import ConstantInferenceError
from numba.core.registry import cpu_target
from numba.core.typed_passes import (
    InlineOverloads,
    NativeParforLowering,
    NopythonTypeInference,
    ParforFusionPass,
    ParforPass,
    ParforPreLoweringPass,
    PreLowerStripPhis,
    PreParforPass,
)
from numba.core.untyped_passes import InlineInlinables, LiteralPropagationSubPipelinePass
from numba.parfors import parfor
from numba.parfors.parfor import Parfor

from ..errors import UnsupportedError
from .constant_arrays import HoistConstantArrays
from .device_functions import InlineDeviceFunctions
from .device_globals import RefuseDeviceGlobals
from .dpnp_functions import DpnpAsNumPy
from .empty_slices import OffloadParforFusionPass, OffloadParforPass
from .expression_stores import FuseExpressionStores, RecordPhis
from .float32_typing import PythonFloatsAsFloat32, WeakIntLiterals
from .host_access import OffloadLower, insert_host_accesses
from .host_lowering import OffloadTarget, lower_parfor
from .inplace_operators import InplaceArrayOperators
from .kernel_api_calls import KernelApiLaunch, RewriteKernelApi
from .numpy_functions import (
    InlineOverloadsOutsideBodies,
    argmax_parallel_impl,
    argmin_parallel_impl,
    checked_dot_parallel_impl,
    max_parallel_impl,
    mean_parallel_impl,
    min_parallel_impl,
)
from .prange_steps import UnitStepPranges
from .shared_operands import StageSharedOperands
from .size_check_messages import NameSizeChecks, RecordArrayDefinitions
from .slice_assignments import BroadcastBodyViewStores, BroadcastSliceAssignments
from .ufunc_outputs import UfuncOutputArguments
from .user_locations import LocateInlinedCalls, RelocateLibraryCode, TagCallSites


@register_pass(mutates_CFG=False, analysis_only=False)
class AttachOffloadLowerer(FunctionPass):
    """Point every top-level parfor at xpuc's lowering (Numba calls
    ``Parfor.lowerer`` when it is set), and sync arrays with the device before
    host code uses their elements."""

    _name = "xpuc_attach_offload_lowerer"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        lowerer = functools.partial(lower_parfor, state.xpuc_offload)
        host_code = []
        for block in state.func_ir.blocks.values():
            host_code.append(block.body)
            for stmt in block.body:
                if isinstance(stmt, Parfor):
                    stmt.lowerer = lowerer
                    host_code.append(stmt.init_block.body)
        insert_host_accesses(state.typemap, host_code)
        return True


@register_pass(mutates_CFG=True, analysis_only=False)
class NativeOffloadLowering(NativeParforLowering):
    """Numba's parfor lowering pass, with the lowering class that knows
    HostAccess statements."""

    _name = "xpuc_native_offload_lowering"

    @property
    def lowering_class(self) -> type[OffloadLower]:
        return OffloadLower


# The NumPy functions the parfor pass replaces with parallel loops: Numba's,
# with np.dot's checking the shapes (Numba's reads past the shorter vector)
# and np.min's and np.max's returning NaN where an element is (Numba's never do).
PARALLEL_REPLACEMENTS = {**parfor.swap_functions_map,
                         ("dot", "numpy"): checked_dot_parallel_impl,
                         ("min", "numpy"): min_parallel_impl, ("amin", "numpy"): min_parallel_impl,
                         ("max", "numpy"): max_parallel_impl, ("amax", "numpy"): max_parallel_impl,
                         ("argmin", "numpy"): argmin_parallel_impl,
                         ("argmax", "numpy"): argmax_parallel_impl,
                         ("mean", "numpy"): mean_parallel_impl}


@register_pass(mutates_CFG=True, analysis_only=False)
class OffloadPreParforPass(PreParforPass):
    """Numba's pre-parfor pass with ``PARALLEL_REPLACEMENTS``."""

    _name = "xpuc_pre_parfor_pass"

    def run_pass(self, state) -> bool:
        parfor.PreParforPass(
            state.func_ir, state.typemap, state.calltypes, state.typingctx, state.targetctx,
            state.flags.auto_parallel, state.parfor_diagnostics.replaced_fns,
            replace_functions_map=PARALLEL_REPLACEMENTS).run()
        return True


# Numba's passes that offload builds run as their own instead.
_REPLACED_PASSES = {NativeParforLowering: (NativeOffloadLowering, "xpuc offload lowering"),
                    PreParforPass: (OffloadPreParforPass, "xpuc pre-parfor pass"),
                    ParforPass: (OffloadParforPass, "xpuc parfor pass"),
                    ParforFusionPass: (OffloadParforFusionPass, "xpuc parfor fusion pass"),
                    InlineOverloads: (InlineOverloadsOutsideBodies, "xpuc overload inlining")}


def compiler_for(offload: OffloadTarget) -> type[CompilerBase]:
    """A Numba pipeline class that offloads parfors for ``offload``'s device."""

    class OffloadCompiler(CompilerBase):
        def define_pipelines(self):
            self.state.xpuc_offload = offload
            # Only Python calls an offload build (in Numba code a JitFunction
            # is its CPU build): the C-callable wrapper Numba compiles for
            # every function would cost each compile 10-30 ms for nothing
            self.state.flags.no_cfunc_wrapper = True
            pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
            pm.add_pass_after(InlineDeviceFunctions, InlineInlinables)
            pm.add_pass_after(DpnpAsNumPy, InlineDeviceFunctions)
            pm.add_pass_after(RefuseDeviceGlobals, DpnpAsNumPy)
            pm.add_pass_after(RecordPhis, NopythonTypeInference)
            pm.add_pass_after(UfuncOutputArguments, RefuseDeviceGlobals)
            pm.add_pass_after(UnitStepPranges, UfuncOutputArguments)
            # before anything is inlined, and once parfors are made
            pm.add_pass_after(TagCallSites, PreLowerStripPhis)
            pm.add_pass_after(LocateInlinedCalls, PreParforPass)
            pm.add_pass_after(RecordArrayDefinitions, LocateInlinedCalls)
            pm.add_pass_after(RelocateLibraryCode, ParforPreLoweringPass)
            pm.add_pass_after(NameSizeChecks, RelocateLibraryCode)
            pm.add_pass_after(HoistConstantArrays, NameSizeChecks)
            if not offload.target.fp64:
                pm.add_pass_after(PythonFloatsAsFloat32, InlineDeviceFunctions)
                pm.add_pass_after(WeakIntLiterals, LiteralPropagationSubPipelinePass)
            pm.add_pass_after(InplaceArrayOperators, InlineOverloads)
            pm.add_pass_after(FuseExpressionStores, InplaceArrayOperators)
            pm.add_pass_after(BroadcastSliceAssignments, FuseExpressionStores)
            pm.add_pass_after(StageSharedOperands, BroadcastSliceAssignments)
            pm.add_pass_after(BroadcastBodyViewStores, StageSharedOperands)
            # after pre-lowering, when parfors are fused and their params known
            pm.add_pass_after(AttachOffloadLowerer, RelocateLibraryCode)
            pm.passes = [_REPLACED_PASSES.get(pass_class, (pass_class, description))
                         for pass_class, description in pm.passes]
            pm.finalize()
            return [pm]

    return OffloadCompiler


class CpuCompiler(CompilerBase):
    """Numba's nopython pipeline for a function's CPU build (no offload),
    where dpnp's functions are NumPy's too."""

    def define_pipelines(self):
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.add_pass_after(DpnpAsNumPy, InlineInlinables)
        pm.add_pass_after(RefuseDeviceGlobals, DpnpAsNumPy)
        pm.add_pass_after(UfuncOutputArguments, RefuseDeviceGlobals)
        pm.finalize()
        return [pm]


@register_pass(mutates_CFG=False, analysis_only=True)
class StopAfterTyping(FunctionPass):
    """End the pipeline with the typed IR as its result."""

    _name = "xpuc_stop_after_typing"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        raise _EarlyPipelineCompletion(
            (state.func_ir, state.typemap, state.calltypes, state.return_type))


class _KernelTyping(CompilerBase):
    """Numba's untyped passes and type inference; nothing is lowered (an
    explicit kernel's IR goes to MLIR instead)."""

    fp64 = True  # whether the device has fp64 (else Python floats are float32)
    kernel_api: KernelApiLaunch | None = None  # how call_kernel launches it, if it does

    def define_pipelines(self):
        pm = DefaultPassBuilder.define_untyped_pipeline(self.state)
        pm.add_pass_after(InlineDeviceFunctions, InlineInlinables)
        if self.kernel_api is not None:  # before device functions are inlined
            self.state.xpuc_kernel_api = self.kernel_api
            pm.add_pass_after(RewriteKernelApi, InlineInlinables)
        pm.add_pass_after(DpnpAsNumPy, InlineDeviceFunctions)
        pm.add_pass_after(RefuseDeviceGlobals, DpnpAsNumPy)
        if not self.fp64:
            pm.add_pass_after(PythonFloatsAsFloat32, InlineDeviceFunctions)
            pm.add_pass_after(WeakIntLiterals, LiteralPropagationSubPipelinePass)
        pm.add_pass(NopythonTypeInference, "nopython type inference")
        pm.add_pass(PreLowerStripPhis, "remove phi nodes")
        pm.add_pass(StopAfterTyping, "stop after typing")
        pm.finalize()
        return [pm]


class _KernelTypingFloat32(_KernelTyping):
    fp64 = False


def type_function(py_func, argtypes: tuple[types.Type, ...], fp64: bool = True,
                  kernel_api: KernelApiLaunch | None = None
                  ) -> tuple[ir.FunctionIR, dict, dict, types.Type]:
    """Numba's typed IR of ``py_func`` for ``argtypes``: the IR, its typemap,
    calltypes and return type; Python floats are float32 unless ``fp64``;
    a kernel launched as ``kernel_api`` says has its uses of numba-dpex's
    kernel API rewritten first (``argtypes``: those its launch passes)."""
    typingctx, targetctx = cpu_target.typing_context, cpu_target.target_context
    typingctx.refresh()
    targetctx.refresh()
    flags = Flags()
    flags.nrt = True  # np.empty and what builds on it (np.zeros) type only with it
    pipeline_class = _KernelTyping if fp64 else _KernelTypingFloat32
    if kernel_api is not None:
        argtypes = kernel_api.all_argument_types(argtypes)
        pipeline_class = type(pipeline_class.__name__, (pipeline_class,),
                              {"kernel_api": kernel_api})
    try:
        return compile_extra(typingctx, targetctx, py_func, argtypes, None, flags, {},
                             pipeline_class=pipeline_class)
    except AttributeError:
        # Numba's typing looks names up in modules and lets a missing one's
        # AttributeError out of its internals: name it, and the user's line
        _refuse_missing_names(py_func)
        raise


def _refuse_missing_names(py_func) -> None:
    """Raise UnsupportedError for the first ``module.name`` in ``py_func``
    whose module has no such name (``xpuc.atomic.nosuch``)."""
    func_ir = run_frontend(py_func)
    for block in func_ir.blocks.values():
        for assign in block.find_insts(ir.Assign):
            expr = assign.value
            if not (isinstance(expr, ir.Expr) and expr.op == "getattr"):
                continue
            try:
                module = func_ir.infer_constant(expr.value)
            except ConstantInferenceError:
                continue
            if isinstance(module, ModuleType) and not hasattr(module, expr.attr):
                offered = ", ".join(getattr(module, "__all__", ())) or "nothing"
                raise UnsupportedError(
                    f"{expr.loc.filename}:{expr.loc.line}: {module.__name__}.{expr.attr} does "
                    f"not exist ({module.__name__} offers {offered})")
