"""Which parfor kernels walk memory along x: the CUDA runtime's block shape.

The CUDA runtime gives a 2-D or 3-D range blocks a quarter of a warp wide
along x (``runtime/cuda/launch.c``), so that a warp spans 4 rows of the range:
where neighbouring work-items along x read different rows of an array (pairwise
distances' ``points[j, k]`` for a thread per pair), a warp's load then touches 8
rows, not 32. Where every access moves by one element as x does (a stencil's
``grid[i - 1, j]``, ``grid[i, j + 1]`` with j along x), a warp is better a whole
warp wide: its loads are then 32 neighbouring elements, not 4 pieces of 8 that
each start a new sector (H100, Jacobi 2048², 50 steps: float32 1.117 against
0.946 ms, float64 1.674 against 1.545; pairwise distances the other way, 0.275
against 0.603 ms).

``mark_contiguous_x`` (the nvvm stage, parfor and explicit kernels alike)
finds the kernels of the second kind and gives their
gpu.module a global ``<kernel>__xpuc_x_contiguous``, which the runtime looks
up when it loads the kernel (``cuModuleGetGlobal``): its presence asks for
blocks a warp wide. The test is lane_strides.py's on each access of a kernel argument: its index
(the frontend's flattened ``y * row_stride + x * col_stride``, or an explicit
kernel's last index, of a dimension of stride 1) moves by 1 or by nothing from
one work-item to the next along x. A
kernel over strided columns (its copy with unit strides is another kernel,
unswitch.py) is not marked, nor anything the test cannot follow.
"""

from __future__ import annotations

from mlir import ir

from ..abi import CUDA_X_CONTIGUOUS_SUFFIX
from .ir_queries import ops_named, symbol_name
from .lane_strides import Stride, access_strides


def _unit_stride_innermost(access: ir.Operation) -> bool:
    """Whether the last dimension of the memref ``access`` reads or writes
    has a static stride of 1."""
    memref = next(v.type for v in access.operands if isinstance(v.type, ir.MemRefType))
    strides, _ = ir.MemRefType(memref).get_strides_and_offset()
    return bool(strides) and strides[-1] == 1


def _is_contiguous_along_x(kernel: ir.Operation) -> bool:
    """Whether each access of ``kernel`` moves by one element as x does, or
    not at all, and one of them moves."""
    strides = [Stride.OTHER if stride == Stride.UNIT and not _unit_stride_innermost(op)
               else stride for op, stride in access_strides(kernel)]
    return Stride.UNIT in strides and Stride.OTHER not in strides


def mark_contiguous_x(module: ir.Module) -> None:
    """Give the gpu.module of each kernel whose accesses move by one element
    as x does its ``<kernel>__xpuc_x_contiguous`` global (an i8)."""
    i8 = ir.IntegerType.get_signless(8)
    for gpu_module in ops_named(module.operation, "gpu.module"):
        body = gpu_module.regions[0].blocks[0]
        for kernel in [op.operation for op in body]:
            if kernel.name != "gpu.func" or "gpu.kernel" not in kernel.attributes:
                continue
            if not _is_contiguous_along_x(kernel):
                continue
            with kernel.location, ir.InsertionPoint(body):
                ir.Operation.create("llvm.mlir.global", regions=1, attributes={
                    "sym_name": ir.StringAttr.get(symbol_name(kernel) + CUDA_X_CONTIGUOUS_SUFFIX),
                    "global_type": ir.TypeAttr.get(i8),
                    "linkage": ir.Attribute.parse("#llvm.linkage<external>"),
                    "constant": ir.UnitAttr.get(),
                    "value": ir.IntegerAttr.get(i8, 1),
                    "addr_space": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
                })
