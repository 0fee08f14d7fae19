"""Kernels that use a float type their device lacks (float64 where there is
no fp64, float16 without fp16) are refused before any lowering that needs
the type, SPIR-V's or NVVM's: the device's compiler would fail on the whole
kernel, or, where only the Target says so (``XPUC_FP64=0``), run it."""

from __future__ import annotations

from mlir import ir

from ..errors import UnsupportedError
from .ir_queries import nested_ops, ops_named, source_line
from .target import Target


def check_float_support(module: ir.Module, target: Target) -> None:
    """Refuse a kernel that uses a float type the device lacks, naming both
    and the user's line of the first op that makes or takes it (the kernel's
    own line only where no such op says), rather than let the SPIR-V
    conversion or the device's compiler fail on the whole kernel."""
    missing = {ir.F64Type: "fp64"} if not target.fp64 else {}
    missing.update({ir.F16Type: "fp16"} if not target.fp16 else {})
    if not missing:
        return
    for kernel in ops_named(module.operation, "gpu.func"):
        uses = [(op, value.type, aspect) for op in nested_ops(kernel)
                for value in (*op.results, *op.operands, *(
                    arg for region in op.regions for block in region.blocks
                    for arg in block.arguments))
                for float_type, aspect in missing.items()
                if isinstance(_element_type(value.type), float_type)]
        if not uses:
            continue
        located = [(op, value_type, aspect, source_line(op.location))
                   for op, value_type, aspect in uses]
        op, value_type, aspect, where = next(
            (use for use in located if use[3] is not None and use[0] is not kernel),
            located[0])
        float_type = _element_type(value_type)
        # a rank-0 alloca is a variable's slot (translation.py), not an array
        scalar_slot = isinstance(value_type, ir.MemRefType) and value_type.rank == 0
        what = _FLOAT_USES.get("variable" if scalar_slot else op.name, "").format(float_type)
        # the module's one kernel: the caller names it (the loop's line, the kernel's name)
        raise UnsupportedError(
            f"the kernel uses {float_type} (" + (what or op.name)
            + (f" at {where}" if where else "")
            + f"), but {target.name} has no {aspect}" + _FP64_ADVICE * (aspect == "fp64"))


def _element_type(value_type: ir.Type) -> ir.Type:
    return value_type.element_type if isinstance(value_type, ir.ShapedType) else value_type


# the construct of the user's code that an op using a missing float type comes from
_FLOAT_USES = {
    "gpu.func": "an {} argument, an array or number from outside the loop",
    "arith.extf": "a value widened to {}",
    "arith.sitofp": "an integer converted to {}",
    "arith.uitofp": "an integer converted to {}",
    "arith.constant": "an {} constant",
    "memref.alloca": "an {} array made in the loop",
    "variable": "an {} variable",
    "memref.load": "an {} array element read",
    "memref.store": "an {} array element written",
}

# what to change, for code that needs float64 where there is none
_FP64_ADVICE = ("; Python floats are float32 there, but float64 arrays, np.float64(...) "
                "and true division of integers need fp64")
