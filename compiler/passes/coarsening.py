"""Streaming kernels whose work-items each run several iterations, the loads
of all of them issued before the first store.

A parfor kernel runs one iteration per work-item. On a GPU a float32 triad
then has 8 bytes of loads in flight per thread, and an H100 full of such
threads ran at 79% of its copy bandwidth where a float64 triad (16 bytes)
ran at all of it: the memory's latency times its bandwidth is more than the
threads hold. So, on a Target that asks for it
(``Target.work_item_bytes_in_flight``), a 1-D kernel that loads before it
stores becomes a kernel over ``G = ceil(n / K)`` work-items, work-item ``g``
running iterations ``g, g + G, ..., g + (K - 1) G`` (each of the K copies
reads neighbouring elements across a warp): first what each iteration
computes before its first store, copy by copy, the copies of a loop with
the same bounds in each merged into one loop (unroll and jam), so that all
their loads are in flight together; then each iteration's stores and what
follows them, in turn.

Moving an iteration's loads above another's stores is what a parfor allows:
its iterations are independent (prange's contract; the frontend refuses the
reads of other iterations' writes it sees). An iteration past ``n`` computes
as iteration ``n - 1`` does (its index clamped, so its loads stay within what
the parfor reads) and stores nothing.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, scf

from ..abi import MAX_WORK_ITEMS
from . import aligned_lanes
from .ir_queries import (
    add_index_arguments,
    add_launch_operands,
    integer_constant,
    nested_ops,
    ops_named,
)
from .launch_plan import is_range_launch

# the most iterations a work-item runs: each copy's values live at once
# (registers), and 8 copies of one float32 load already keep 32 bytes in flight
MOST_ITERATIONS = 8

# what a kernel may hold to be coarsened: arithmetic, loads and stores, and
# structured control flow. Anything else (ids other than the global id along
# x, barriers, atomics, private arrays, printing) keeps its kernel as it is.
_DIALECTS = ("arith.", "math.")
_OPS = frozenset(("memref.load", "memref.store", "scf.for", "scf.if", "scf.yield",
                  "gpu.global_id", "gpu.return"))


def _writes(op: ir.Operation) -> bool:
    return any(nested.name == "memref.store" for nested in nested_ops(op))


def _split(kernel: ir.Operation) -> tuple[list[ir.Operation], list[ir.Operation]] | None:
    """The ops of ``kernel``'s body (its terminator aside) before the first
    that stores, but its global id, and the rest; None unless the kernel
    reads one global id, before its first store."""
    ids = ops_named(kernel, "gpu.global_id")
    *body, _ = kernel.regions[0].blocks[0].operations
    first_write = next((i for i, op in enumerate(body) if _writes(op)), len(body))
    if len(ids) != 1 or ids[0] not in body[:first_write]:
        return None
    return [op for op in body[:first_write] if op != ids[0]], body[first_write:]


def _element_bytes(load: ir.Operation) -> int:
    """The bytes of a load's element (an index or a complex number counted as 8)."""
    element = ir.MemRefType(load.operands[0].type).element_type
    return max(getattr(element, "width", 64) // 8, 1)


class _Copies:
    """The K copies of a kernel's iterations being written: per copy, what
    each value of the original body is in that copy. A value missing from
    every map is the same in all copies (uniform: it depends on no
    iteration); ``varying`` holds the original values that differ."""

    def __init__(self, count: int) -> None:
        self.maps: list[dict[ir.Value, ir.Value]] = [{} for _ in range(count)]
        self.varying: set[ir.Value] = set()

    def varies(self, op: ir.Operation) -> bool:
        """Whether ``op`` reads, at any depth, a value that differs by copy."""
        return any(operand in self.varying
                   for nested in nested_ops(op) for operand in nested.operands)

    def clone(self, op: ir.Operation, copy: int) -> ir.Operation:
        """``op`` cloned at the current insertion point, reading copy
        ``copy``'s values, its results recorded as that copy's."""
        cloned = op.clone()
        mapping = self.maps[copy]
        for nested in nested_ops(cloned):
            for operand in list(nested.operands):
                if operand in mapping:
                    nested.replace_uses_of_with(operand, mapping[operand])
        self.record(op, cloned, copy)
        return cloned

    def record(self, op: ir.Operation, copied: ir.Operation, copy: int) -> None:
        """``copied``'s results are copy ``copy``'s of ``op``'s, which vary."""
        for old, new in zip(op.results, copied.results):
            self.maps[copy][old] = new
            self.varying.add(old)

    def emit(self, ops: list[ir.Operation]) -> None:
        """Each of ``ops`` (a block's, before its terminator) once where it
        is the same in every copy, else once per copy, a loop with the same
        bounds in every copy jammed into one."""
        for op in ops:
            if not self.varies(op):
                cloned = self.clone(op, 0)
                self.varying.difference_update(op.results)
                for mapping in self.maps[1:]:
                    mapping.update(zip(op.results, cloned.results))
            elif op.name == "scf.for" and not any(
                    bound in self.varying for bound in list(op.operands)[:3]):
                self._jam(op)
            else:
                for copy in range(len(self.maps)):
                    self.clone(op, copy)

    def _jam(self, loop: ir.Operation) -> None:
        """One scf.for in place of the copies of ``loop``, carrying each
        copy's values, its body each copy's body."""
        view = loop.opview
        count = len(self.maps)
        carried = len(view.results)
        starts = [self.maps[copy].get(init, init)
                  for copy in range(count) for init in view.initArgs]
        bounds = [self.maps[0].get(bound, bound)
                  for bound in (view.lowerBound, view.upperBound, view.step)]
        with loop.location:
            jammed = scf.ForOp(*bounds, starts)
        body = loop.regions[0].blocks[0]
        induction, *arguments = body.arguments
        jammed_body = jammed.body
        for copy in range(count):
            self.maps[copy][induction] = jammed.induction_variable
            for k, argument in enumerate(arguments):
                self.maps[copy][argument] = jammed_body.arguments[1 + copy * carried + k]
                self.varying.add(argument)
        ops = list(body.operations)
        with ir.InsertionPoint(jammed_body), loop.location:
            self.emit(ops[:-1])
            yielded = list(ops[-1].operands)
            scf.YieldOp([self.maps[copy].get(value, value)
                         for copy in range(count) for value in yielded])
        for copy in range(count):
            for k, result in enumerate(loop.results):
                self.maps[copy][result] = jammed.results[copy * carried + k]
                self.varying.add(result)


def _iterations(kernel: ir.Operation, bytes_in_flight: int) -> int:
    """The iterations a work-item of ``kernel`` should run: enough for
    ``bytes_in_flight`` bytes of the loads of what each iteration computes
    before its first store, at most MOST_ITERATIONS; 1 where the kernel is
    not one to coarsen."""
    split = _split(kernel)
    if split is None or any(op.name not in _OPS and not op.name.startswith(_DIALECTS)
                            for op in nested_ops(kernel)[1:]):
        return 1
    prefix, _ = split
    copies = _Copies(1)
    copies.varying.add(ops_named(kernel, "gpu.global_id")[0].results[0])
    loaded = 0
    for op in prefix:
        if copies.varies(op):
            copies.record(op, op, 0)
            loaded += sum(_element_bytes(load) for load in nested_ops(op)
                          if load.name == "memref.load")
    if not loaded:
        return 1
    return max(1, min(MOST_ITERATIONS, bytes_in_flight // loaded))


def _coarsen(kernel: ir.Operation, count: int) -> None:
    """Make ``kernel`` run ``count`` iterations per work-item (see the module's
    docstring); its new last argument is the iteration count n."""
    (global_id_op,) = ops_named(kernel, "gpu.global_id")
    global_id = global_id_op.results[0]
    prefix, suffix = _split(kernel)
    terminator = list(kernel.regions[0].blocks[0].operations)[-1]
    (total,) = add_index_arguments(kernel, 1)
    index = ir.IndexType.get()
    copies = _Copies(count)
    copies.varying.add(global_id)
    with global_id_op.location, ir.InsertionPoint.after(global_id_op):
        one = arith.constant(index, 1)
        work_items = arith.ceildivui(total, arith.constant(index, count))
        last = arith.subi(total, one)
        iterations = [global_id]
        for _ in range(1, count):
            iterations.append(arith.addi(iterations[-1], work_items))
        for copy, iteration in enumerate(iterations):
            copies.maps[copy][global_id] = (
                iteration if copy == 0 else arith.minui(iteration, last))
    with ir.InsertionPoint(suffix[0] if suffix else terminator):
        copies.emit(prefix)
    with ir.InsertionPoint(terminator), global_id_op.location:
        for copy, iteration in enumerate(iterations):
            if copy == 0:  # below G <= n, by the launch's range
                for op in suffix:
                    copies.clone(op, copy)
                continue
            guard = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, iteration, total))
            with ir.InsertionPoint(guard.then_block):
                for op in suffix:
                    copies.clone(op, copy)
                scf.YieldOp([])
    for op in reversed(prefix + suffix):
        op.erase()


def coarsen_streaming_kernels(module: ir.Module, bytes_in_flight: int) -> None:
    """Give each 1-D range kernel of ``module`` that loads before it stores
    enough iterations per work-item for ``bytes_in_flight`` bytes of loads,
    and make its launch a range of ``ceil(n / K)`` work-items that passes n.

    Past MAX_WORK_ITEMS iterations the range stays n, which the runtime
    refuses as before: the kernel's index arithmetic was simplified knowing
    its ids below that bound (gpu_rewrites.bound_global_ids), and its
    iterations are those ids."""
    kernels = {ir.StringAttr(op.attributes["sym_name"]).value: op
               for op in ops_named(module.operation, "gpu.func")}
    for launch in ops_named(module.operation, "gpu.launch_func"):
        view = launch.opview
        if not is_range_launch(launch) or any(
                integer_constant(size) != 1 for size in (view.gridSizeY, view.gridSizeZ)):
            continue
        _, name = ir.SymbolRefAttr(launch.attributes["kernel"]).value
        kernel = kernels[name]
        if aligned_lanes.ALIGNS in kernel.attributes:
            continue  # the host splits an aligned kernel's range in parts
        count = _iterations(kernel, bytes_in_flight)
        if count < 2:
            continue
        _coarsen(kernel, count)
        total = view.gridSizeX
        index = ir.IndexType.get()
        with launch.location, ir.InsertionPoint(launch):
            within = arith.cmpi(arith.CmpIPredicate.sle, total,
                                arith.constant(index, MAX_WORK_ITEMS))
            work_items = arith.select(within, arith.ceildivsi(
                total, arith.constant(index, count)), total)
        add_launch_operands(launch, [total], grid_x=work_items)
