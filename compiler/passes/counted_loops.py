"""Counted loops as scf.for, so that their indices get ranges.

lift-cf-to-scf makes each ``for j in range(start, stop)`` of a kernel an
scf.while whose before-region tests ``j < stop`` and computes ``j + 1``.
int-range-optimizations gives the index of such a loop no range (it would
have to see that the loop counts), while the index of an scf.for ranges over
its bounds. From ``start >= 0`` it then folds away Numba's wraparound of a
subscript by ``j`` (``j < 0 ? j + n : j``), which otherwise makes the device
gather (its own compiler folds it only where a loop starts at a constant).
Measured against the same kernels without this: ``for j in range(i, n)``
inside ``prange(n)`` (20,000 doubles) 4.3 times faster, a window
``range(i - 8, i + 9)`` inside ``prange(8, n - 8)`` (4M doubles) 4.8 times,
a triad walked in blocks ``range(b * 1024, ...)`` 1.7 times. A start that
is non-negative only by an identity the ranges do not see stays wrapped: a
window ``range(i - w, ...)`` inside ``prange(w, ...)`` with ``w`` known at
run time gets ``w`` twice (the prange's start, and the variable), so
``(w + id) - w`` does not cancel.

TO_SPIRV turns scf.for back into scf.while (see ``pipelines.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf

from .ir_queries import integer_constant, is_defined_in, ops_named

_SLT = 2  # arith::CmpIPredicate::slt


@dataclass
class _CountedLoop:
    """An scf.while that counts: before-argument ``counter`` runs from its
    initial value to ``stop`` by ``step`` (a positive constant); after-block
    arguments take, by position, the counter (``index``), the counter plus the
    step (``next``), or another before-argument carried unchanged."""

    loop: ir.Operation
    counter: int
    stop: ir.Value
    step: int
    forwarded: list[int | str]  # per after-argument: "index", "next", or a before-argument


def _match(loop: ir.Operation) -> _CountedLoop | None:
    """``loop`` (an scf.while) as a counted loop, or None if it is not one."""
    before, after = (region.blocks[0] for region in loop.regions)
    arguments = list(before.arguments)
    *ops, condition = before.operations
    compare = condition.operands[0].owner
    if (len(ops) != 2 or isinstance(compare, ir.Block) or compare.name != "arith.cmpi"
            or ir.IntegerAttr(compare.attributes["predicate"]).value != _SLT
            or compare.operands[0] not in arguments
            or is_defined_in(compare.operands[1], loop)):
        return None
    counter = arguments.index(compare.operands[0])
    (increment,) = [op for op in ops if op != compare]
    if increment.name != "arith.addi" or increment.operands[0] != arguments[counter]:
        return None
    step = integer_constant(increment.operands[1])
    if step is None or step <= 0:
        return None
    forwarded: list[int | str] = []
    for value in list(condition.operands)[1:]:
        if value == increment.results[0]:
            forwarded.append("next")
        elif value == arguments[counter]:
            forwarded.append("index")
        elif value in arguments and arguments.index(value) not in forwarded:
            forwarded.append(arguments.index(value))
        else:
            return None
    carried = [k for k in range(len(arguments)) if k != counter]
    yielded = list(after.operations[len(after.operations) - 1].operands)
    if (sorted(f for f in forwarded if isinstance(f, int)) != carried
            or "next" not in forwarded
            or yielded[counter] != after.arguments[forwarded.index("next")]):
        return None
    # the loop's last index (and the one after it) would need computing
    if any(len(list(loop.results[k].uses)) for k, f in enumerate(forwarded)
           if isinstance(f, str)):
        return None
    return _CountedLoop(loop, counter, compare.operands[1], step, forwarded)


def _rewrite(counted: _CountedLoop) -> None:
    loop = counted.loop
    after = loop.regions[1].blocks[0]
    *body, terminator = after.operations
    carried = [k for k in range(len(loop.operands)) if k != counted.counter]
    with loop.location, ir.InsertionPoint(loop):
        step = arith.constant(counted.stop.type, counted.step)
        new = scf.ForOp(loop.operands[counted.counter], counted.stop, step,
                        [loop.operands[k] for k in carried])
    index, *iter_args = new.body.arguments
    with loop.location, ir.InsertionPoint(new.body):
        following = arith.addi(index, step)
        for op in body:
            ir.InsertionPoint.current.insert(op.detach_from_parent())
        scf.YieldOp([terminator.operands[k] for k in carried])
    for argument, source in zip(after.arguments, counted.forwarded):
        argument.replace_all_uses_with(
            index if source == "index" else following if source == "next"
            else iter_args[carried.index(source)])
    for result, source in zip(loop.results, counted.forwarded):
        if isinstance(source, int):
            result.replace_all_uses_with(new.results[carried.index(source)])
    loop.erase()  # with its old yield of ``next``, which the counter no longer needs
    if not list(following.uses):
        following.owner.erase()


def to_for_loops(module: ir.Module) -> None:
    """Rewrite each counted scf.while in ``module`` as an scf.for (inner loops
    first, so that an outer loop moves rewritten ones)."""
    for loop in reversed(ops_named(module.operation, "scf.while")):
        counted = _match(loop)
        if counted is not None:
            _rewrite(counted)
