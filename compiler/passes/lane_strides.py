"""How far a kernel's memory accesses move from one work-item to the next.

A device that vectorizes across work-items (Intel's OpenCL CPU runtime) runs
neighbouring work-items of dimension x in the lanes of one vector, so each
load or store becomes one vector access: contiguous when its index moves by 1
from lane to lane, a broadcast when it does not move, and otherwise a gather
or a scatter, element by element. Most kernels want that. One kind does not: a
kernel whose work-items each walk a row of their own in an inner loop
(``for j in range(m): s += a[i, j]``) turns every step of the walk into a
gather across rows, where one work-item at a time streams through contiguous
memory (measured: row L2 norms 2x, a row-wise stencil 3x faster unvectorized).
``walks_rows`` recognizes such a kernel from its index arithmetic.
"""

from __future__ import annotations

import enum

from mlir import ir

from .ir_queries import LOOP_OPS, nested_ops, ops_named, symbol_name

_ACCESSES = {"memref.load": 1, "memref.store": 2}  # op -> where its indices start
# ops whose result moves as their (first) operand does
_INDEX_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui",
                "arith.trunci")


class Stride(enum.Enum):
    """How a value changes from a work-item to its neighbour in x."""

    UNIFORM = "uniform"  # the same in all of them
    UNIT = "unit"  # larger by 1
    OTHER = "other"  # anything else (strided, or not a linear function)


def _join(a: Stride, b: Stride) -> Stride:
    return a if a == b else Stride.OTHER


def _sum(a: Stride, b: Stride) -> Stride:
    """The stride of ``x + y`` for ``x``, ``y`` of strides ``a``, ``b``."""
    if Stride.UNIFORM in (a, b):
        return b if a == Stride.UNIFORM else a
    return Stride.OTHER


class _Strides:
    """The ``Stride`` of every value of a kernel, found by propagation: a
    value's stride is unknown until what defines it is known (the kernel's
    arguments are uniform), and a block argument joins whatever flows into it
    (a loop's initial and yielded values), until nothing changes (the lattice
    has height 3, which bounds the rounds)."""

    def __init__(self, kernel: ir.Operation) -> None:
        self.of: dict[ir.Value, Stride] = dict.fromkeys(
            kernel.regions[0].blocks[0].arguments, Stride.UNIFORM)
        self.ops = nested_ops(kernel)[1:]
        changed = True
        while changed:
            changed = False
            for op in self.ops:
                changed |= self._visit(op)

    def stride(self, value: ir.Value) -> Stride | None:
        return self.of.get(value)

    def _set(self, value: ir.Value, stride: Stride | None) -> bool:
        if stride is None:
            return False
        joined = stride if value not in self.of else _join(self.of[value], stride)
        if self.of.get(value) == joined:
            return False
        self.of[value] = joined
        return True

    def _flow(self, into: list[ir.Value], values: list[ir.Value]) -> bool:
        changed = False
        for target, value in zip(into, values):
            changed |= self._set(target, self.stride(value))
        return changed

    def _visit(self, op: ir.Operation) -> bool:
        changed = self._flow_regions(op)
        operands = [self.stride(v) for v in op.operands]
        if None in operands:
            return changed
        name = op.name
        if name == "gpu.global_id":
            stride = Stride.UNIT if str(op.attributes["dimension"]).endswith("x>") \
                else Stride.UNIFORM
        elif name in _INDEX_CASTS:
            stride = operands[0]
        elif name == "arith.addi":
            stride = _sum(*operands)
        elif name == "arith.subi":
            stride = operands[0] if operands[1] == Stride.UNIFORM else Stride.OTHER
        elif name == "arith.select" and operands[0] == Stride.UNIFORM:
            stride = _join(operands[1], operands[2])
        elif op.regions:
            return changed  # results: see _flow_regions
        else:
            stride = Stride.UNIFORM if all(s == Stride.UNIFORM for s in operands) \
                else Stride.OTHER
        for result in op.results:
            changed |= self._set(result, stride)
        return changed

    def _flow_regions(self, op: ir.Operation) -> bool:
        """Loop-carried values: what enters a loop, and what its body yields."""
        changed = False
        if op.name == "scf.for":
            body = op.regions[0].blocks[0]
            lower, _, step, *initial = op.operands
            if self.stride(step) is not None:
                changed |= self._set(body.arguments[0], self.stride(lower)
                                     if self.stride(step) == Stride.UNIFORM else Stride.OTHER)
            yielded = list(_terminator(body).operands)
            for values in (initial, yielded):
                changed |= self._flow(list(body.arguments)[1:], values)
                changed |= self._flow(list(op.results), values)
            changed |= self._diverge(op, [lower, op.operands[1], step])
        elif op.name == "scf.while":
            before, after = (region.blocks[0] for region in op.regions)
            condition = list(_terminator(before).operands)
            for values in (list(op.operands), list(_terminator(after).operands)):
                changed |= self._flow(list(before.arguments), values)
            changed |= self._flow(list(after.arguments), condition[1:])
            changed |= self._flow(list(op.results), condition[1:])
            changed |= self._diverge(op, condition[:1])
        elif op.name == "scf.if":
            for region in op.regions:
                if region.blocks:
                    changed |= self._flow(list(op.results),
                                          list(_terminator(region.blocks[0]).operands))
            changed |= self._diverge(op, list(op.operands)[:1])
        return changed

    def _diverge(self, op: ir.Operation, controls: list[ir.Value]) -> bool:
        """Results of ``op`` differ between work-items whatever flows into
        them if what decides its control flow does (a loop's trip count, a
        branch's condition)."""
        if all(self.stride(v) in (None, Stride.UNIFORM) for v in controls):
            return False
        changed = False
        for result in op.results:
            changed |= self._set(result, Stride.OTHER)
        return changed

    def accesses(self) -> list[tuple[ir.Operation, Stride]]:
        """Each load and store of a kernel argument, with how its index moves."""
        found = []
        for op in self.ops:
            start = _ACCESSES.get(op.name)
            if start is None or not isinstance(op.operands[start - 1].owner, ir.Block):
                continue  # not an access, or one to a private array
            strides = [self.of.get(index, Stride.OTHER) for index in list(op.operands)[start:]]
            found.append((op, strides[-1] if all(s == Stride.UNIFORM for s in strides[:-1])
                          else Stride.OTHER))
        return found


def _terminator(block: ir.Block) -> ir.Operation:
    return block.operations[len(block.operations) - 1]


def _enclosing_loops(op: ir.Operation, kernel: ir.Operation) -> list[ir.Operation]:
    loops, parent = [], op.parent
    while parent is not None and parent != kernel:
        if parent.name in LOOP_OPS:
            loops.append(parent)
        parent = parent.parent
    return loops


def access_strides(kernel: ir.Operation) -> list[tuple[ir.Operation, Stride]]:
    """Each load and store of an argument of ``kernel`` (a gpu.func), with how
    its index moves from a work-item to its neighbour in x."""
    return _Strides(kernel).accesses()


def walks_rows(kernel: ir.Operation) -> bool:
    """Whether each work-item of ``kernel`` (a gpu.func) walks memory of its
    own: every access in a loop moves by a stride other than 1 from one
    work-item to the next (none contiguous across them, none shared by them,
    which vectorizing serves well), and one such access is in an innermost
    loop (not in a loop around others: Mandelbrot's store of each pixel sits
    around its compute-bound inner loop)."""
    accesses = [(op, stride) for op, stride in access_strides(kernel)
                if _enclosing_loops(op, kernel)]
    innermost = in_innermost_loops([op for op, _ in accesses], kernel)
    return all(stride == Stride.OTHER for _, stride in accesses) and any(innermost)


def in_innermost_loops(ops: list[ir.Operation], kernel: ir.Operation) -> list[bool]:
    """Whether each of ``ops`` (inside ``kernel``) sits in a loop with no
    loop inside it."""
    outer_loops = {loop for op in nested_ops(kernel) if op.name in LOOP_OPS
                   for loop in _enclosing_loops(op, kernel)}
    return [bool(loops) and loops[0] not in outer_loops
            for loops in (_enclosing_loops(op, kernel) for op in ops)]


# the gpu.func attribute of a kernel that ``walks_rows``
WALKS_ROWS = "xpuc.walks_rows"


def mark_row_walks(module: ir.Module) -> None:
    """Give each kernel of ``module`` that ``walks_rows`` the unit attribute
    ``WALKS_ROWS``, which the spirv stage reads (spirv_rewrites.hint_scalar_work_items)."""
    for kernel in ops_named(module.operation, "gpu.func"):
        if walks_rows(kernel):
            kernel.attributes[WALKS_ROWS] = ir.UnitAttr.get()


def row_walking_kernels(module: ir.Module) -> list[str]:
    """The names of the kernels ``mark_row_walks`` marked."""
    return [symbol_name(kernel) for kernel in ops_named(module.operation, "gpu.func")
            if WALKS_ROWS in kernel.attributes]
