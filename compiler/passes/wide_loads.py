"""Rows read sixteen bytes at a time by the inner loops of CUDA kernels.

A thread of pairwise distances (``for k in range(n): d = points[i, k] -
points[j, k]``) loads one element of each of two rows an iteration. Under
ncu (CUDA run 16) its loads waited on the L1, with 3-5 times the load
requests of Triton's kernel, which reads the rows with 16-byte vector loads.

``widen_row_loads`` puts a first loop before such a loop. Each of its
iterations loads sixteen bytes of each row as one vector and then runs the
original body once per element, in order, on the vectors' elements: every
sum is formed in the same order and rounds the same. The original loop does
what is left: the last few elements, or all of them where the rows are not
16-byte aligned. That is decided for the whole launch, from the arrays'
addresses and the rows' stride (an argument of the kernel), so that the
threads of a warp take one path: rows of 3 float64, half of them aligned,
would have split every warp in two.

A loop qualifies when its step is 1, nothing in its body writes memory or
synchronizes, and a load at the top of its body reads a one-dimensional
argument array at ``start + k``, ``start`` a product with a kernel's
argument (the stride) computed before the loop. It is the nvvm stage's:
SYCL devices' compilers vectorize across work-items.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, scf, vector

from .ir_queries import defining_op, integer_constant, is_defined_in, nested_ops, ops_named

_VECTOR_BYTES = 16
# what a widened loop's body may hold: its loads move before the elements'
# bodies, which no write to memory, call or barrier in them may then see
_PURE_PREFIXES = ("arith.", "math.")
_PURE_OPS = frozenset({"memref.load", "scf.if", "scf.for", "scf.while", "scf.yield",
                       "scf.condition"})


def widen_row_loads(module: ir.Module) -> None:
    """Give each qualifying loop of ``module``'s kernels its widened first
    loop (see the module's docstring)."""
    for loop in ops_named(module.operation, "scf.for"):
        rows = _row_loads(loop)
        if rows:
            _widen(loop, rows)


def _is_pure(op: ir.Operation) -> bool:
    return op.name in _PURE_OPS or op.name.startswith(_PURE_PREFIXES)


def _counts(value: ir.Value, induction: ir.Value) -> bool:
    """Whether ``value`` is the loop's induction variable (or it as an index)."""
    if value == induction:
        return True
    op = defining_op(value)
    return op is not None and op.name == "arith.index_cast" and op.operands[0] == induction


def _row_stride(load: ir.Operation, loop: ir.Operation) -> tuple[ir.Value, ir.Value] | None:
    """``(start, stride)`` where ``load`` reads ``array[start + k]`` (``k`` the
    loop's induction variable) and ``start`` is ``stride`` times something,
    ``stride`` an argument of the kernel; else None."""
    index = defining_op(load.operands[1])
    if index is None or index.name != "arith.addi":
        return None
    induction = loop.regions[0].blocks[0].arguments[0]
    left, right = index.operands
    for counted, start in ((left, right), (right, left)):
        if _counts(counted, induction) and not is_defined_in(start, loop):
            product = defining_op(start)
            if product is not None and product.name == "arith.muli":
                stride = next((factor for factor in product.operands if _is_argument(factor)),
                              None)
                return (start, stride) if stride is not None else None
    return None


def _is_argument(value: ir.Value) -> bool:
    """Whether ``value`` is an argument of its kernel (the same for every thread)."""
    owner = value.owner
    return isinstance(owner, ir.Block) and owner.owner.operation.name == "gpu.func"


def _lanes(array: ir.Value) -> int:
    """Elements of ``array`` in sixteen bytes if its memref is a
    one-dimensional argument of the kernel (global memory), else 0."""
    if not isinstance(array.owner, ir.Block):
        return 0  # a private array of the thread
    shape = ir.MemRefType(array.type)
    flat = shape.rank == 1 and shape.layout.value == ir.AffineMap.get_identity(1)
    element = shape.element_type
    if not flat or shape.memory_space is not None \
            or not isinstance(element, (ir.IntegerType, ir.F32Type, ir.F64Type)):
        return 0
    return _VECTOR_BYTES * 8 // element.width if element.width in (32, 64) else 0


def _row_loads(loop: ir.Operation) -> dict[ir.Operation, tuple[ir.Value, ir.Value]]:
    """The loads of ``loop`` to widen, each with its row's start and stride, if the loop
    qualifies and they agree on a width; else nothing."""
    if integer_constant(loop.operands[2]) != 1:
        return {}
    body = loop.regions[0].blocks[0]
    if not all(_is_pure(op) for top in body.operations for op in nested_ops(top.operation)):
        return {}
    rows = {}
    for op in body.operations:
        op = op.operation
        if op.name == "memref.load" and len(op.operands) == 2 and _lanes(op.operands[0]):
            row = _row_stride(op, loop)
            if row is not None:
                rows[op] = row
    if len({_lanes(load.operands[0]) for load in rows}) != 1:
        return {}
    return rows


def _as_index(value: ir.Value) -> ir.Value:
    if isinstance(value.type, ir.IndexType):
        return value
    return arith.index_cast(ir.IndexType.get(), value)


def _index(number: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), number)


def _aligned(rows: dict[ir.Operation, tuple[ir.Value, ir.Value]], lower: ir.Value,
             lanes: int) -> ir.Value:
    """Whether every array starts on sixteen bytes and every row's element
    at ``lower`` (an index) does too, by its stride."""
    zero = _index(0)
    checks = [arith.remui(memref.extract_aligned_pointer_as_index(array), _index(_VECTOR_BYTES))
              for array in dict.fromkeys(load.operands[0] for load in rows)]
    checks += [arith.remui(value, _index(lanes))
               for value in dict.fromkeys([lower, *(stride for _, stride in rows.values())])]
    aligned = arith.cmpi(arith.CmpIPredicate.eq, checks[0], zero)
    for check in checks[1:]:
        aligned = arith.andi(aligned, arith.cmpi(arith.CmpIPredicate.eq, check, zero))
    return aligned


def _remap(op: ir.Operation, values: dict[ir.Value, ir.Value]) -> None:
    """Replace, in ``op`` and the ops nested in it, operands that ``values`` maps."""
    for nested in nested_ops(op):
        for position, operand in enumerate(nested.operands):
            if operand in values:
                nested.operands[position] = values[operand]


def _widen(loop: ir.Operation, rows: dict[ir.Operation, ir.Value]) -> None:
    lanes = _lanes(next(iter(rows)).operands[0])
    body = loop.regions[0].blocks[0]
    induction, carried_in = body.arguments[0], list(body.arguments)[1:]
    lower, upper = loop.operands[0], loop.operands[1]
    step_type = induction.type
    with ir.InsertionPoint(loop), loop.location:
        # the widened loop covers whole vectors from ``lower`` when aligned
        count = arith.maxsi(arith.subi(upper, lower), arith.constant(step_type, 0))
        whole = arith.subi(count, arith.remsi(count, arith.constant(step_type, lanes)))
        aligned = _aligned(rows, _as_index(lower), lanes)
        split = arith.addi(lower, arith.select(aligned, whole, arith.constant(step_type, 0)))
        wide = scf.ForOp(lower, split, arith.constant(step_type, lanes),
                         list(loop.operands)[3:])
    with ir.InsertionPoint(wide.body), loop.location:
        first = _as_index(wide.induction_variable)
        vector_type = {load: ir.VectorType.get([lanes], load.results[0].type) for load in rows}
        loaded = {load: vector.load(vector_type[load], load.operands[0],
                                    [arith.addi(start, first)], alignment=_VECTOR_BYTES)
                  for load, (start, _) in rows.items()}
        carried = list(wide.inner_iter_args)
        for lane in range(lanes):
            values = dict(zip(carried_in, carried))
            values[induction] = arith.addi(wide.induction_variable,
                                           arith.constant(step_type, lane))
            for op in list(body.operations)[:-1]:
                op = op.operation
                if op in loaded:
                    values[op.results[0]] = vector.extract(loaded[op], [], [lane])
                    continue
                copy = op.clone()
                _remap(copy, values)
                values.update(zip(op.results, copy.results))
            carried = [values.get(value, value) for value in list(body.operations)[-1].operands]
        scf.yield_(carried)
    loop.operands[0] = split
    for position, value in enumerate(wide.results):
        loop.operands[3 + position] = value
