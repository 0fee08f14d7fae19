"""Kernels split in two at a branch on their arguments, the host picking one.

A kernel over views tests whether every view's innermost stride is 1 and then
runs a copy of its body with the constant 1 in their place (the frontend's
``_by_inner_strides``), so that neighbouring work-items touch neighbouring
elements. Left as a branch inside one kernel, the device compiler merges the
two copies' identical final stores into one after the branch, whose address,
contiguous on one side and strided on the other, it then scatters on both
(Intel's CPU compiler, seen in its assembly: a 2-D stencil over views took
2.9 ms as one kernel, 1.5-2.1 ms as the unit-stride kernel alone). So a
kernel whose entry block branches on a conjunction of ``argument == 1`` becomes
two kernels, the branch's two sides, and the launch plan lists the arguments
that must be 1 for the host to launch ``<name>_unit``.
"""

from __future__ import annotations

from mlir import ir

from .ir_queries import copy_kernel, defining_op, integer_constant, ops_named, symbol_name

# on a kernel: the name of its copy for unit arguments, and their positions
UNIT_VARIANT, UNIT_ARGUMENTS = "xpuc.unit_variant", "xpuc.unit_arguments"

_CMPI_EQ = 0  # arith::CmpIPredicate::eq


def _unit_arguments(condition: ir.Value, entry: ir.Block) -> list[int] | None:
    """Positions of the arguments of the kernel whose entry block is ``entry``
    that ``condition`` says are all 1, if it is a conjunction of
    ``argument == 1``; else None."""
    op = defining_op(condition)
    if op is None:
        return None
    if op.name == "arith.andi":
        sides = [_unit_arguments(operand, entry) for operand in op.operands]
        return None if None in sides else sides[0] + sides[1]
    if op.name != "arith.cmpi" or ir.IntegerAttr(op.attributes["predicate"]).value != _CMPI_EQ:
        return None
    for argument, other in (op.operands, reversed(list(op.operands))):
        if (isinstance(argument.owner, ir.Block) and argument.owner == entry
                and integer_constant(other) == 1):
            return [ir.BlockArgument(argument).arg_number]
    return None


def _erase_unused(value: ir.Value) -> None:
    """Erase what computed ``value`` if nothing else uses it, and so on up."""
    op = defining_op(value)
    if op is None or any(True for _ in op.results[0].uses):
        return
    operands = list(op.operands)
    op.erase()
    for operand in operands:
        _erase_unused(operand)


def _keep_side(branch: ir.Operation, side: int) -> None:
    """Replace the scf.if ``branch`` by the ops of its ``side`` (0: then,
    1: else), and its condition by nothing if nothing else uses it."""
    condition = branch.operands[0]
    region = branch.regions[side]
    if region.blocks:
        block = region.blocks[0]
        ops = list(block.operations)
        for op in ops[:-1]:
            op.move_before(branch)
        for result, value in zip(branch.results, ops[-1].operands):
            result.replace_all_uses_with(value)
    branch.erase()
    _erase_unused(condition)


def split_on_unit_arguments(module: ir.Module) -> None:
    """Split each kernel whose entry block holds an scf.if on a conjunction of
    ``argument == 1`` (the first such) into the kernel with the else side and
    ``<name>_unit`` with the then side, named on the kernel by
    ``UNIT_VARIANT`` with the arguments' positions in ``UNIT_ARGUMENTS``."""
    for kernel in ops_named(module.operation, "gpu.func"):
        entry = kernel.regions[0].blocks[0]
        found = [(index, positions) for index, op in enumerate(entry.operations)
                 if op.operation.name == "scf.if"
                 and (positions := _unit_arguments(op.operands[0], entry)) is not None]
        if not found:
            continue
        index, positions = found[0]
        name = f"{symbol_name(kernel)}_unit"
        copy = copy_kernel(kernel, name)
        _keep_side(copy.regions[0].blocks[0].operations[index].operation, 0)
        _keep_side(entry.operations[index].operation, 1)
        kernel.attributes[UNIT_VARIANT] = ir.StringAttr.get(name)
        kernel.attributes[UNIT_ARGUMENTS] = ir.DenseI64ArrayAttr.get(positions)


def unit_variant(kernel: ir.Operation) -> tuple[str, tuple[int, ...]] | None:
    """The copy ``split_on_unit_arguments`` made of ``kernel``, and the
    positions of the arguments that must be 1 for it."""
    if UNIT_VARIANT not in kernel.attributes:
        return None
    return (ir.StringAttr(kernel.attributes[UNIT_VARIANT]).value,
            tuple(ir.DenseI64ArrayAttr(kernel.attributes[UNIT_ARGUMENTS])))
