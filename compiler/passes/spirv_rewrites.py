"""Python rewrites and checks of the spirv stage, around convert-gpu-to-spirv:
what the conversion needs on each kernel, what the device compiler is told,
and what the launch plan and the device rely on."""

from __future__ import annotations

import re

from mlir import ir
from mlir.dialects import arith, spirv

from ..errors import XpucError
from .ir_queries import gpu_modules, nested_ops, ops_named, symbol_name


def attach_spirv_abi(module: ir.Module) -> None:
    """Give the kernels what convert-gpu-to-spirv and convert-math-to-spirv need.

    A parfor kernel's ``spirv.entry_point_abi`` sets no LocalSize (see
    index_by_global_ids); the gpu.module's ``spirv.target_env`` is the target
    spirv-attach-target set, without which math ops become GLSL instructions,
    invalid in OpenCL.
    """
    for gpu_module in gpu_modules(module):
        gpu_module.attributes["spirv.target_env"] = ir.ArrayAttr(
            gpu_module.attributes["targets"])[0]
        for kernel in ops_named(gpu_module, "gpu.func"):
            if "spirv.entry_point_abi" not in kernel.attributes:  # an explicit kernel has its own
                kernel.attributes["spirv.entry_point_abi"] = ir.Attribute.parse(
                    "#spirv.entry_point_abi<>")


# SPIR-V's VecTypeHint operand for one 32-bit integer: the low 16 bits name the
# component type (2: i32), the high 16 bits the number of components
_SCALAR_VEC_TYPE_HINT = (1 << 16) | 2


def bools_as_index_by_select(module: ir.Module) -> None:
    """Rewrite each ``arith.index_cast(ui)`` of an i1 (lift-cf-to-scf makes
    them to select a branch's exit; canonicalize folds others into them) as a
    select of 1 or 0, which convert-arith-to-spirv has a lowering for."""
    for cast in ops_named(module.operation, "arith.index_castui") + ops_named(
            module.operation, "arith.index_cast"):
        source = cast.operands[0]
        if not (isinstance(source.type, ir.IntegerType) and source.type.width == 1):
            continue
        with cast.location, ir.InsertionPoint(cast):
            index = ir.IndexType.get()
            one, zero = (arith.ConstantOp(index, n).result for n in (1, 0))
            chosen = arith.SelectOp(source, one, zero).result
        cast.results[0].replace_all_uses_with(chosen)
        cast.erase()


def hint_scalar_work_items(module: ir.Module, kernels: list[str]) -> None:
    """Give each of ``kernels`` (SPIR-V functions by now) a VecTypeHint.

    Intel's OpenCL CPU compiler does not vectorize a kernel that carries a
    type hint across work-items (it takes the hint to mean that the kernel is
    vectorized by hand; any hint does, scalar or vector, checked in its
    assembly with CL_CONFIG_DUMP_ASM), but still vectorizes the kernel's
    inner loops. It is the only per-kernel switch the device has, and the
    kernels that walk rows need it (see lane_strides)."""
    _add_execution_mode(module, "VecTypeHint", [_SCALAR_VEC_TYPE_HINT], kernels)


def forbid_contraction(module: ir.Module) -> None:
    """Give every kernel the ContractionOff execution mode, so that each
    float operation rounds on its own, as NumPy's do.

    Without it a SPIR-V kernel allows contraction (OpenCL C's FP_CONTRACT is
    on by default): Intel's GPU compiler fuses ``a * b + c`` into one ``mad``
    (checked in its assembly for pvc), which rounds once where NumPy rounds
    twice (``x * x - y * y`` is not 0 for ``x == y``). It ignores the
    NoContraction decoration of the operations themselves, and honours this."""
    _add_execution_mode(module, "ContractionOff", [])


def _add_execution_mode(module: ir.Module, mode: str, operands: list[int],
                        kernels: list[str] | None = None) -> None:
    """Give ``kernels`` (every kernel if None) the execution mode ``mode``
    (SPIR-V's name) with the literal ``operands``."""
    i32 = ir.IntegerType.get_signless(32)
    for spirv_module in ops_named(module.operation, "spirv.module"):
        body = spirv_module.regions[0].blocks[0]
        for entry in ops_named(spirv_module, "spirv.EntryPoint"):
            kernel = ir.FlatSymbolRefAttr(entry.attributes["fn"]).value
            if kernels is None or kernel in kernels:
                with entry.location, ir.InsertionPoint(body):
                    spirv.ExecutionModeOp(
                        ir.FlatSymbolRefAttr.get(kernel),
                        ir.Attribute.parse(f"#spirv.execution_mode<{mode}>"),
                        ir.ArrayAttr.get([ir.IntegerAttr.get(i32, n) for n in operands]))


def check_kernel_abi(module: ir.Module) -> None:
    """Check that each SPIR-V kernel takes exactly its launch's operands.

    The launch plan passes one argument per gpu.launch_func operand: that holds
    only while every memref lowers to one bare pointer (no size arguments).
    """
    param_counts = {
        symbol_name(fn): len(fn.regions[0].blocks[0].arguments)
        for fn in ops_named(module.operation, "spirv.func")
    }
    for launch in ops_named(module.operation, "gpu.launch_func"):
        _, kernel = ir.SymbolRefAttr(launch.attributes["kernel"]).value
        operands = len(launch.opview.kernelOperands)
        if param_counts.get(kernel) != operands:
            raise XpucError(f"SPIR-V kernel '{kernel}' takes {param_counts.get(kernel)} "
                            f"arguments but its launch passes {operands}")


# what a capability needs declared besides itself
_CAPABILITY_EXTENSIONS = {"GroupUniformArithmeticKHR": "SPV_KHR_uniform_group_instructions"}
_VCE = re.compile(r"#spirv\.vce<(v[0-9.]+), \[(.*)\], \[(.*)\]>")


def complete_vce(module: ir.Module) -> None:
    """Declare in each SPIR-V module what spirv-update-vce leaves out (and a
    module without it is invalid): Int64Atomics for 64-bit atomics, and the
    extension each capability comes from (the uniform group multiplies')."""
    for spirv_module in ops_named(module.operation, "spirv.module"):
        version, caps, exts = _VCE.fullmatch(
            str(spirv_module.attributes["vce_triple"])).groups()
        capabilities = [c for c in caps.split(", ") if c]
        extensions = [e for e in exts.split(", ") if e]
        if "Int64Atomics" not in capabilities and any(
                op.name.startswith("spirv.Atomic")
                and any(isinstance(r.type, ir.IntegerType) and r.type.width == 64
                        for r in op.results)
                for op in nested_ops(spirv_module)):
            capabilities.append("Int64Atomics")
        extensions += [_CAPABILITY_EXTENSIONS[c] for c in capabilities
                       if c in _CAPABILITY_EXTENSIONS
                       and _CAPABILITY_EXTENSIONS[c] not in extensions]
        spirv_module.attributes["vce_triple"] = ir.Attribute.parse(
            f"#spirv.vce<{version}, [{', '.join(capabilities)}], [{', '.join(extensions)}]>")


