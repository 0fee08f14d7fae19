"""Vectors of work-items that start on a cache line of the arrays they stream.

A device that vectorizes across work-items (Intel's OpenCL CPU runtime) runs
work-items ``16k .. 16k + 15`` in the lanes of one vector, so a kernel that
reads ``a[i]`` with ``i`` its global id makes one vector access of 64 bytes
(8 doubles) from ``a + 64k`` on. When ``a`` itself is not 64-byte aligned,
every such access straddles two cache lines. NumPy's large arrays are
malloc's blocks, their data 16 bytes past a page: a triad over NumPy arrays
ran 43 ms where the same arrays copied to 64-byte-aligned memory ran 32 ms
(10M doubles; USM blocks, page-aligned, 35 ms).

So a streaming kernel (one dimension, its global id used only as the whole
index of one-dimensional accesses to its arrays) takes a new last argument,
``first``, and handles element ``global id + first``. The host launches it
in three parts when its arrays are large and their start is off a cache line
(``host_lowering.launch_aligned``): the elements before the first aligned one
with ``first = 0``, then whole vectors from that element, whose vectors then
start on cache lines, then the rest. The
launch plan names the argument and the array it aligns to
(``launch_plan.KernelLaunch.aligns``).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from .ir_queries import add_index_arguments, add_launch_operands, ops_named, symbol_name

# on a streaming kernel: [position of the array argument its vectors align
# to, the array's element size in bytes, position of its ``first`` argument]
ALIGNS = "xpuc.aligns"

_ACCESSES = {"memref.load": 1, "memref.store": 2}  # op -> where its indices start


def _streamed_array(kernel: ir.Operation, global_id: ir.Value) -> ir.BlockArgument | None:
    """The array argument whose accesses ``kernel``'s vectors should align
    to (the first one it stores, else the first one it loads) if every use
    of ``global_id`` is the one index of an access to an argument's
    one-dimensional memref; else None."""
    stored, loaded = [], []
    for use in global_id.uses:
        op = use.owner.operation
        start = _ACCESSES.get(op.name)
        if start is None or use.operand_number != start or len(op.operands) != start + 1:
            return None
        array = op.operands[start - 1]
        if not isinstance(array.owner, ir.Block):
            return None  # a private array of the work-item
        (stored if op.name == "memref.store" else loaded).append(ir.BlockArgument(array))
    found = stored + loaded
    return found[0] if found else None


def offset_streaming_ids(module: ir.Module) -> None:
    """Give each streaming kernel of ``module`` its ``first`` argument, the
    global id offset by it, and the ``ALIGNS`` attribute; its launches pass
    0 (the host passes the aligned element where it splits the launch)."""
    aligned = {}
    for kernel in ops_named(module.operation, "gpu.func"):
        ids = ops_named(kernel, "gpu.global_id")
        if len(ids) != 1 or not str(ids[0].attributes["dimension"]).endswith("x>"):
            continue
        global_id = ids[0].results[0]
        array = _streamed_array(kernel, global_id)
        if array is None:
            continue
        element = ir.MemRefType(array.type).element_type
        if not isinstance(element, ir.IntegerType | ir.FloatType):
            continue
        element_bytes = max(element.width // 8, 1)
        (first,) = add_index_arguments(kernel, 1)
        with ids[0].location, ir.InsertionPoint.after(ids[0]):
            offset = arith.addi(global_id, first)
        global_id.replace_all_uses_except(offset, offset.owner.operation)
        kernel.attributes[ALIGNS] = ir.DenseI64ArrayAttr.get(
            [array.arg_number, element_bytes, first.arg_number])
        aligned[symbol_name(kernel)] = kernel
    for launch in ops_named(module.operation, "gpu.launch_func"):
        _, name = ir.SymbolRefAttr(launch.attributes["kernel"]).value
        if name in aligned:
            with launch.location, ir.InsertionPoint(launch):
                zero = arith.constant(ir.IndexType.get(), 0)
            add_launch_operands(launch, [zero])


def aligns(kernel: ir.Operation) -> tuple[int, int, int] | None:
    """What ``offset_streaming_ids`` recorded on ``kernel``: the array
    argument's position, its element bytes and the ``first`` argument's position."""
    if ALIGNS not in kernel.attributes:
        return None
    array, element_bytes, first = ir.DenseI64ArrayAttr(kernel.attributes[ALIGNS])
    return array, element_bytes, first
