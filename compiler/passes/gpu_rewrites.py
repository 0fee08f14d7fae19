"""Python rewrites of the linalg and gpu stages, where upstream MLIR has no
pass that does what the kernels and the launch plan need: branches as scf.if,
loops normalized, printfs made mappable, values sunk into launches, launches
merged into one gpu.module, kernels indexed by (bounded) global ids."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, scf

from ..abi import MAX_WORK_ITEMS
from ..errors import XpucError
from .ir_queries import gpu_modules, is_within, nested_ops, ops_named, symbol_name

# Ops that may be cloned into a launch body: pure, region-free, and the kernel
# can compute them from the arguments it gets (ub.poison: the undefined initial
# values of loop-carried variables that lift-cf-to-scf introduces; a work-group
# buffer of a reduction, memref.get_global of workgroup memory, which
# outlining copies into the gpu.module).
_SINKABLE_DIALECTS = ("arith", "math", "ub")
_SINKABLE_OPS = ("memref.get_global",)


def switches_to_ifs(module: ir.Module) -> None:
    """Rewrite each scf.index_switch as a chain of scf.if.

    lift-cf-to-scf selects among a loop's exits (a ``break``) with
    scf.index_switch, which has no SPIR-V lowering; its cases are few."""
    for switch in reversed(ops_named(module.operation, "scf.index_switch")):
        with ir.Location.unknown(), ir.InsertionPoint(switch):
            cases = list(ir.DenseI64ArrayAttr(switch.attributes["cases"]))
            results = _switch_as_ifs(switch, cases, 0)
        for old, new in zip(switch.results, results, strict=True):
            old.replace_all_uses_with(new)
        switch.erase()


def _switch_as_ifs(switch: ir.Operation, cases: list[int], first: int) -> list[ir.Value]:
    """``if selector == cases[first] {case} else {the remaining cases}``, built at
    the current insertion point; the switch's regions are default, then cases."""
    if first == len(cases):
        return _move_region_body(switch.regions[0])
    selector = switch.operands[0]
    case = arith.ConstantOp(selector.type, cases[first]).result
    matches = arith.CmpIOp(arith.CmpIPredicate.eq, selector, case).result
    branch = scf.IfOp(matches, [r.type for r in switch.results], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp(_move_region_body(switch.regions[first + 1]))
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp(_switch_as_ifs(switch, cases, first + 1))
    return list(branch.results)


def _move_region_body(region: ir.Region) -> list[ir.Value]:
    """Move a single-block region's ops (but its scf.yield) to the current
    insertion point; return the values it yielded."""
    block = region.blocks[0]
    *body, terminator = block.operations
    for op in body:
        ir.InsertionPoint.current.insert(op.detach_from_parent())
    return list(terminator.operands)


def normalize_loops(module: ir.Module) -> None:
    """Make each scf.parallel run from 0 by 1: ``(lb, ub, step)`` becomes
    ``(0, ceildiv(max(ub - lb, 0), step), 1)``, and the body gets back its
    index as ``lb + i * step``.

    The tiled loop checks its bound with an unsigned compare, which skips
    negative indices; and an empty range (``ub < lb``) would give a negative
    work-group count. Normalized, indices and counts are never negative.
    """
    for loop in ops_named(module.operation, "scf.parallel"):
        body = loop.regions[0].blocks[0]
        ndim = len(body.arguments)
        operands = list(loop.operands)
        lowers, uppers, steps = (operands[k * ndim:(k + 1) * ndim] for k in range(3))
        with loop.location:
            with ir.InsertionPoint(loop):
                zero = arith.constant(ir.IndexType.get(), 0)
                one = arith.constant(ir.IndexType.get(), 1)
                for axis in range(ndim):
                    extent = arith.maxsi(arith.subi(uppers[axis], lowers[axis]), zero)
                    loop.operands[axis] = zero
                    loop.operands[ndim + axis] = arith.ceildivsi(extent, steps[axis])
                    loop.operands[2 * ndim + axis] = one
            with ir.InsertionPoint.at_block_begin(body):
                for axis, counter in enumerate(body.arguments):
                    scaled = arith.muli(counter, steps[axis])
                    index = arith.addi(lowers[axis], scaled)
                    counter.replace_all_uses_except(index, scaled.owner.operation)


def enclose_printfs(module: ir.Module) -> None:
    """Put each gpu.printf directly in a parallel loop's body into an
    scf.execute_region of its own.

    convert-parallel-loops-to-gpu declines a loop whose body holds a
    gpu.printf (a print() in a prange body) but not one nested in a region;
    the canonicalize that follows the conversion inlines the regions again."""
    for printf in ops_named(module.operation, "gpu.printf"):
        if printf.parent.name != "scf.parallel":
            continue
        with printf.location, ir.InsertionPoint(printf):
            region = scf.ExecuteRegionOp([])
        block = region.regions[0].blocks.append()
        with printf.location, ir.InsertionPoint(block):
            yielded = scf.YieldOp([])
        printf.move_before(yielded)


def sink_into_launches(module: ir.Module) -> None:
    """Clone into each gpu.launch body the arith and math ops it uses from outside.

    Outlining passes every outside value as a kernel argument, but the launch
    plan can only compute index arithmetic on the host: constants (tile sizes)
    and whatever loop-invariant code motion hoisted (``s * 2.0``) must be
    recomputed in the kernel. Upstream's gpu-launch-sink-index-computations is
    not used because it also sinks memref.dim, which a bare pointer cannot answer.
    """
    for launch in ops_named(module.operation, "gpu.launch"):
        _LaunchSinker(launch).sink()


class _LaunchSinker:
    def __init__(self, launch: ir.Operation) -> None:
        self.launch = launch
        # clones go, operands first, before the body's first op
        self.insertion = ir.InsertionPoint(launch.regions[0].blocks[0].operations[0])
        self.clones: dict[ir.Value, ir.Value] = {}

    def sink(self) -> None:
        for op in nested_ops(self.launch)[1:]:
            for index, operand in enumerate(op.operands):
                replacement = self.sunk(operand)
                if replacement != operand:
                    op.operands[index] = replacement

    def sunk(self, value: ir.Value) -> ir.Value:
        """``value`` if the kernel can receive it, else its clone in the body."""
        definer = value.owner
        if (isinstance(definer, ir.Block)
                or (definer.operation.name.split(".")[0] not in _SINKABLE_DIALECTS
                    and definer.operation.name not in _SINKABLE_OPS)
                or is_within(definer.operation, self.launch)):
            return value
        if value not in self.clones:
            operands = [self.sunk(operand) for operand in definer.operands]
            clone = definer.operation.clone(self.insertion)
            for index, operand in enumerate(operands):
                clone.operands[index] = operand
            self.clones.update(zip(definer.results, clone.results, strict=True))
        return self.clones[value]


def merge_gpu_modules(module: ir.Module) -> None:
    """Move every kernel into the first gpu.module, so that a module gives one
    SPIR-V binary however many launches its function has.

    Outlining makes one gpu.module per launch, each with one kernel named after
    the host function; a moved kernel takes its (unique) module's name instead.
    """
    first, *others = gpu_modules(module) or [None]
    if not others:
        return
    first_name = symbol_name(first)
    last_kernel = first.regions[0].blocks[0].operations[-1].operation
    new_refs = {}
    for gpu_module in others:
        name = symbol_name(gpu_module)
        for kernel in list(gpu_module.regions[0].blocks[0].operations):
            new_refs[(name, symbol_name(kernel.operation))] = ir.SymbolRefAttr.get(
                [first_name, name])
            kernel.attributes["sym_name"] = ir.StringAttr.get(name)
            kernel.operation.move_after(last_kernel)
            last_kernel = kernel.operation
        gpu_module.erase()
    for launch in ops_named(module.operation, "gpu.launch_func"):
        root, leaf = ir.SymbolRefAttr(launch.attributes["kernel"]).value
        if (root, leaf) in new_refs:
            launch.attributes["kernel"] = new_refs[(root, leaf)]


def inline_kernel_bodies(module: ir.Module) -> None:
    """Move each explicit kernel's body function into the kernel, at its call.

    The inliner does not inline into gpu.func, and the body must be a
    func.func for lift-cf-to-scf; once structured it is one block."""
    for call in ops_named(module.operation, "func.call"):
        kernel = call.parent
        while kernel.name != "gpu.func":
            kernel = kernel.parent
        gpu_module = kernel.parent
        callee_name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        (body,) = [op for op in ops_named(gpu_module, "func.func")
                   if symbol_name(op) == callee_name]
        blocks = list(body.regions[0].blocks)
        if len(blocks) != 1:
            raise XpucError(f"kernel body '{callee_name}' kept {len(blocks)} blocks after "
                            "lift-cf-to-scf")
        for argument, operand in zip(blocks[0].arguments, call.operands, strict=True):
            argument.replace_all_uses_with(operand)
        for op in list(blocks[0].operations)[:-1]:  # all but func.return
            op.operation.move_before(call)
        call.erase()
        body.erase()


def index_by_global_ids(module: ir.Module) -> None:
    """Make each outlined parfor kernel read its global ids, and fix no
    work-group size: its launch is then a plain range of work-items whose
    work-group shape the device runtime picks. (A kernel whose loop the
    frontend mapped to blocks and threads itself keeps them.)

    Mapped without tiling, a loop is a grid of one-item blocks, so a kernel's
    block ids are its global ids. Tiling by a fixed size instead needs a bounds
    check in the kernel for the partial last tile, and that check cost a third
    of the bandwidth of a streaming kernel on Intel's OpenCL CPU device (which
    vectorizes across work-items: the check makes every load and store
    masked); and the device runtime knows the device's preferred sizes.
    """
    for kernel in ops_named(module.operation, "gpu.func"):
        if any(size != 1 for size in ir.DenseI32ArrayAttr(kernel.attributes["known_block_size"])):
            continue  # blocks of its own (a reduction's work-groups): its ids stay
        del kernel.attributes["known_block_size"]
        for block_id in ops_named(kernel, "gpu.block_id"):
            with ir.InsertionPoint(block_id), block_id.location:
                global_id = gpu.global_id(block_id.attributes["dimension"])
            block_id.results[0].replace_all_uses_with(global_id)
            block_id.erase()


def bound_global_ids(module: ir.Module) -> None:
    """Give each work-item id its upper bound: the runtime launches at most
    MAX_WORK_ITEMS work-items, so every id is below it.

    From the bound, int-range-optimizations proves the loop indices made of
    the ids non-negative and folds away Numba's wraparound of negative
    subscripts (``i < 0 ? i + n : i``), which the device otherwise turns into
    a gather: a 1-D stencil reading ``a[i - 1]`` ran 4 to 6 times slower
    than the same stencil written with slices."""
    bound = ir.IntegerAttr.get(ir.IndexType.get(), MAX_WORK_ITEMS)
    for global_id in ops_named(module.operation, "gpu.global_id"):
        global_id.attributes["upper_bound"] = bound
