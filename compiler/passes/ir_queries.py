"""Queries of MLIR modules that the passes share: walking ops, reading
constants and symbols, copying a kernel, adding arguments to a kernel and its
launches."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import gpu

# the ops a kernel's loops are by the gpu stage (scf.parallel is mapped to work-items)
LOOP_OPS = ("scf.for", "scf.while")


def nested_ops(root: ir.Operation) -> list[ir.Operation]:
    """``root`` and every op nested in it, in pre-order."""
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def ops_named(root: ir.Operation, name: str) -> list[ir.Operation]:
    """Every op called ``name`` nested in ``root``, in pre-order."""
    return [op for op in nested_ops(root) if op.name == name]


def defining_op(value: ir.Value) -> ir.Operation | None:
    """The op that computes ``value``; None for a block argument."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def integer_constant(value: ir.Value) -> int | None:
    """``value``'s integer if an arith.constant computes it, else None."""
    op = defining_op(value)
    if op is None or op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def symbol_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def source_line(location: ir.Location) -> str | None:
    """``file:line`` of the user's source an op comes from, if it says (the
    MLIR text's own lines, file "-", are not the user's)."""
    if location.is_a_file():
        return f"{location.filename}:{location.start_line}" if location.filename != "-" else None
    if location.is_a_fused():
        found = (source_line(inner) for inner in location.locations)
        return next((where for where in found if where), None)
    if location.is_a_name():
        return source_line(location.child_loc)
    if location.is_a_callsite():
        return source_line(location.callee)
    return None


def is_within(op: ir.Operation, ancestor: ir.Operation) -> bool:
    """Whether ``op`` is nested, at any depth, in ``ancestor``'s regions."""
    parent = op.parent
    while parent is not None:
        if parent == ancestor:
            return True
        parent = parent.parent
    return False


def is_defined_in(value: ir.Value, op: ir.Operation) -> bool:
    """Whether ``value`` is defined in ``op``'s regions (or is ``op``'s result)."""
    owner = value.owner
    definer = (owner.owner if isinstance(owner, ir.Block) else owner).operation
    return definer == op or is_within(definer, op)


def gpu_modules(module: ir.Module) -> list[ir.Operation]:
    """The module's gpu.modules (the kernels' containers), in order."""
    return [op.operation for op in module.body.operations if op.operation.name == "gpu.module"]


def parallel_loop_dims(module: ir.Module) -> int:
    """The most dimensions of any scf.parallel in ``module`` (0 if it has none)."""
    loops = ops_named(module.operation, "scf.parallel")
    return max((len(loop.regions[0].blocks[0].arguments) for loop in loops), default=0)


def is_empty_function(function: ir.Operation) -> bool:
    """Whether ``function``'s body is a single block holding only its terminator."""
    blocks = function.regions[0].blocks
    return len(blocks) == 1 and len(blocks[0].operations) == 1


def copy_kernel(kernel: ir.Operation, name: str) -> ir.Operation:
    """A copy of the gpu.func ``kernel`` called ``name``, placed after it."""
    copy = kernel.clone(ir.InsertionPoint.after(kernel))
    copy.attributes["sym_name"] = ir.StringAttr.get(name)
    return copy


def add_index_arguments(kernel: ir.Operation, count: int) -> list[ir.Value]:
    """``count`` new last arguments of ``kernel``, of type index."""
    entry = kernel.regions[0].blocks[0]
    index = ir.IndexType.get()
    with kernel.location:
        added = [entry.add_argument(index, kernel.location) for _ in range(count)]
        function_type = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
        kernel.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [*function_type.inputs, *(index for _ in added)], function_type.results))
    return added


def add_launch_operands(launch: ir.Operation, operands: list[ir.Value],
                        grid_x: ir.Value | None = None) -> None:
    """Replace ``launch`` with the same launch passing ``operands`` after its
    kernel operands (and over ``grid_x`` blocks along x, if given)."""
    view = launch.opview
    with launch.location, ir.InsertionPoint(launch):
        gpu.LaunchFuncOp(
            ir.SymbolRefAttr(launch.attributes["kernel"]).value,
            (view.gridSizeX if grid_x is None else grid_x, view.gridSizeY, view.gridSizeZ),
            (view.blockSizeX, view.blockSizeY, view.blockSizeZ),
            kernel_operands=[*view.kernelOperands, *operands])
    launch.erase()
