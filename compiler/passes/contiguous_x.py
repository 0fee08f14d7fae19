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
blocks a warp wide. The test is on the kernel's addresses, as the frontend
flattened them (``memref<?xT>`` indexed by ``y * row_stride + x * col_stride``)
or an explicit kernel indexes them: x may appear only in an access's last
index, of a dimension of stride 1, as ``x + (terms without x)``. A
kernel over strided columns (its copy with unit strides is another kernel,
unswitch.py) is not marked, nor anything the test cannot follow.
"""

from __future__ import annotations

from mlir import ir

from ..abi import CUDA_X_CONTIGUOUS_SUFFIX
from .ir_queries import defining_op, integer_constant, nested_ops, ops_named, symbol_name

# ops that read or write memory: the position of the memref among their
# operands (the indices follow it)
_ACCESSES = {"memref.load": 0, "memref.store": 1, "memref.atomic_rmw": 1,
             "memref.generic_atomic_rmw": 0, "vector.load": 0, "vector.store": 1}
_X_IDS = ("gpu.global_id", "gpu.thread_id", "gpu.block_id")
_DIMENSION_X = "#gpu<dim x>"
# ops whose result is their first operand's value
_SAME_VALUE = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui")


class _XCoefficients:
    """How an index value moves with x: ``coefficient(v)`` is c where v is
    ``c * x + (terms without x)``, None where it is not of that form."""

    def __init__(self) -> None:
        self._known: dict[ir.Value, int | None] = {}

    def coefficient(self, value: ir.Value) -> int | None:
        if value not in self._known:
            self._known[value] = self._find(value)
        return self._known[value]

    def _find(self, value: ir.Value) -> int | None:
        op = defining_op(value)
        if op is None:  # an argument, or a region's (a loop's index: its bounds say)
            owner = value.owner.owner
            if owner is None or owner.name == "gpu.func":
                return 0
            return 0 if all(self.coefficient(v) == 0 for v in owner.operands) else None
        if op.name in _X_IDS:
            return 1 if str(op.attributes["dimension"]) == _DIMENSION_X else 0
        operands = [self.coefficient(v) for v in op.operands]
        if None in operands:
            return None
        if op.name in _SAME_VALUE:
            return operands[0]
        if op.name == "arith.addi":
            return operands[0] + operands[1]
        if op.name == "arith.subi":
            return operands[0] - operands[1]
        if op.name == "arith.muli":
            return _product(op, operands)
        return 0 if not any(operands) else None


def _product(op: ir.Operation, operands: list[int]) -> int | None:
    """``a * b``'s coefficient: x times a constant, else only without x."""
    if not any(operands):
        return 0
    for mine, other in ((0, 1), (1, 0)):
        factor = integer_constant(op.operands[other])
        if operands[other] == 0 and factor is not None:
            return operands[mine] * factor
    return None


def _innermost_stride(memref: ir.Type) -> int | None:
    """The static stride of ``memref``'s last dimension, None if dynamic."""
    strides, _ = ir.MemRefType(memref).get_strides_and_offset()
    return strides[-1] if strides and not ir.ShapedType.is_dynamic_size(strides[-1]) else None


def _is_contiguous_along_x(kernel: ir.Operation) -> bool:
    """Whether each access of ``kernel`` moves by one element as x does (or
    not at all), and something it does depends on x."""
    coefficients = _XCoefficients()
    moves = False
    for op in nested_ops(kernel)[1:]:
        memrefs = [i for i, v in enumerate(op.operands) if isinstance(v.type, ir.MemRefType)]
        if not memrefs:
            continue
        if op.name not in _ACCESSES:
            if any(coefficients.coefficient(v) != 0 for v in op.operands
                   if not isinstance(v.type, ir.MemRefType)):
                return False
            continue
        position = _ACCESSES[op.name]
        indices = [coefficients.coefficient(v) for v in list(op.operands)[position + 1:]]
        steps = (0, 1) if _innermost_stride(op.operands[position].type) == 1 else (0,)
        if not indices or any(c != 0 for c in indices[:-1]) or indices[-1] not in steps:
            return False
        moves |= indices[-1] == 1
    return moves


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
