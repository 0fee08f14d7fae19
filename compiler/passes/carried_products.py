"""Float arithmetic that a while loop computes twice, once on the values it
passes to its next iteration and again on them there, computed once and
carried.

A ``while`` loop reaches the gpu stage rotated: its test runs on each
iteration's new values, and the next iteration's body starts over from them.
Mandelbrot's ``while x * x + y * y <= 4.0: x, y = x * x - y * y + cx, ...``
squares the new ``x`` and ``y`` for its test and squares them again in the
next body; LLVM's NVPTX pipeline does not carry a value from one iteration to
the next (its GVN works within one), so float64 Mandelbrot ran 10 DMUL/DADD
an iteration where 8 suffice, on an H100 whose float64 pipe is its limit.
``carry_products`` passes such a result to the next iteration as a new
loop-carried value: the same operation on the same operands, hence the same
rounding. It is the nvvm stage's (SYCL devices' compilers are their own).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from .ir_queries import is_defined_in, nested_ops, ops_named

# float arithmetic that cannot trap, hence may run on the iteration that
# leaves the loop, where a short-circuit test (``n < m and x * x ...``) would not
_CARRIED = frozenset({"arith.addf", "arith.subf", "arith.mulf", "arith.negf"})
_COMMUTATIVE = frozenset({"arith.addf", "arith.mulf"})


def carry_products(module: ir.Module) -> None:
    """Carry each float result that a kernel's while loop recomputes at its
    next iteration's start (see the module's docstring)."""
    for loop in ops_named(module.operation, "scf.while"):
        while (rebuilt := _carry_one(loop)) is not None:
            loop = rebuilt


def _upcoming(loop: ir.Operation) -> list[ir.Value | None]:
    """Per before-region argument, the before region's value that it takes at
    the next iteration (None where the after region computes it)."""
    before, after = loop.regions[0].blocks[0], loop.regions[1].blocks[0]
    forwarded = list(list(before.operations)[-1].operands)[1:]  # scf.condition's
    received = list(after.arguments)
    return [forwarded[received.index(value)] if value in received else None
            for value in list(after.operations)[-1].operands]


def _attributes(op: ir.Operation) -> list[tuple[str, str]]:
    """``op``'s attributes (an arith op's fastmath flags), comparable."""
    return sorted((name, str(op.attributes[name])) for name in op.attributes)


def _computes(op: ir.Operation, name: str, attributes: list[tuple[str, str]],
              operands: list[ir.Value]) -> bool:
    """Whether ``op`` is ``name`` with ``attributes`` on ``operands``."""
    if op.name != name or _attributes(op) != attributes:
        return False
    found = list(op.operands)
    return found == operands or (name in _COMMUTATIVE and found == operands[::-1])


def _carry_one(loop: ir.Operation) -> ir.Operation | None:
    """Carry the first recomputed result of ``loop``: the rebuilt loop, or
    None if it has none."""
    before = loop.regions[0].blocks[0]
    arguments = list(before.arguments)
    upcoming = _upcoming(loop)
    body = [op.operation for op in before.operations][:-1]
    for op in body:
        operands = list(op.operands)
        if op.name not in _CARRIED or not any(v in arguments for v in operands) \
                or any(v not in arguments and is_defined_in(v, loop) for v in operands):
            continue
        next_operands = [upcoming[arguments.index(v)] if v in arguments else v for v in operands]
        if any(v is None for v in next_operands) or next_operands == operands:
            continue  # unknown, or the loop passes them on unchanged: nothing to carry
        attributes = _attributes(op)
        again = [other for top in body for other in nested_ops(top)
                 if _computes(other, op.name, attributes, next_operands)]
        if again:
            return _rebuild(loop, op, next_operands, again)
    return None


def _in_loop_body(op: ir.Operation, loop: ir.Operation) -> ir.Operation:
    """``op``'s ancestor in ``loop``'s regions (``op`` itself if it is there)."""
    while op.parent.operation != loop:
        op = op.parent.operation
    return op


def _rebuild(loop: ir.Operation, op: ir.Operation, next_operands: list[ir.Value],
             again: list[ir.Operation]) -> ir.Operation:
    """``loop`` carrying ``op``'s result: computed before the loop on its
    first values, and at each iteration, where ``again`` computed it, on the
    next one's."""
    before, after = loop.regions[0].blocks[0], loop.regions[1].blocks[0]
    inits = list(loop.operands)
    arguments = list(before.arguments)
    with op.location, ir.InsertionPoint(loop):
        first = op.clone()
        for k, operand in enumerate(op.operands):
            if operand in arguments:
                first.operands[k] = inits[arguments.index(operand)]
    with op.location, ir.InsertionPoint(_in_loop_body(again[0], loop)):
        following = op.clone()
        for k, operand in enumerate(next_operands):
            following.operands[k] = operand
    for other in again:
        other.results[0].replace_all_uses_with(following.results[0])
        other.erase()
    value_type = op.results[0].type
    with loop.location, ir.InsertionPoint(loop):
        new = scf.WhileOp([*loop.results.types, value_type], [*inits, first.results[0]])
    new_before = ir.Block.create_at_start(new.before, [*before.arguments.types, value_type],
                                          [a.location for a in before.arguments] + [op.location])
    new_after = ir.Block.create_at_start(new.after, [*after.arguments.types, value_type],
                                         [a.location for a in after.arguments] + [op.location])
    for old_block, new_block in ((before, new_before), (after, new_after)):
        for old_argument, new_argument in zip(old_block.arguments, new_block.arguments):
            old_argument.replace_all_uses_with(new_argument)
        for moved in list(old_block.operations):
            new_block.append(moved.detach_from_parent())
    op.results[0].replace_all_uses_with(new_before.arguments[-1])
    op.erase()
    *_, new_condition = new_before.operations
    with loop.location, ir.InsertionPoint(new_condition):
        scf.ConditionOp(new_condition.operands[0],
                        [*list(new_condition.operands)[1:], following.results[0]])
    new_condition.erase()
    *_, new_yield = new_after.operations
    with loop.location, ir.InsertionPoint(new_yield):
        scf.YieldOp([*new_yield.operands, new_after.arguments[-1]])
    new_yield.erase()
    for old_result, new_result in zip(loop.results, new.results):
        old_result.replace_all_uses_with(new_result)
    loop.erase()
    return new.operation
