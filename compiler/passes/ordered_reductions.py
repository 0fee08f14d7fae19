"""Float sums and products carried by a kernel's loops, kept in program order.

Intel's OpenCL CPU compiler vectorizes a loop that accumulates floats
(``for j in range(m): total += a[i, j]``) by keeping one partial sum per
vector lane and adding the lanes up after the loop, as if reassociation were
allowed, with or without ``-cl-fast-relaxed-math`` and for OpenCL C as for
SPIR-V: a row ``[1e16, 1, ..., 1, -1e16]`` summed to 868 where Numba, serial
or parallel, gives 0. A ``prange`` reduction may be reordered (Numba's own
does), but a loop inside the body is sequential Python. The compiler leaves
alone a recurrence through ``fma``, and ``a + b``, ``a - b`` and ``a * b``
are exactly ``fma(a, 1, b)``, ``fma(b, -1, a)`` and ``fma(a, b, -0)`` (the
products by 1 and -1 are exact; adding -0 changes nothing, not even a zero's
sign), so ``keep_reduction_order`` writes each add, subtract and multiply on
a loop-carried float's path from one iteration to the next as an fma. Like
Numba's, such a loop then runs one step after another: sums over 4000 rows
of 1000 doubles, which the device had vectorized, took 1.77 ms instead of
0.85 (Numba's threads: 1.62); the benchmark's workloads ran as fast as
before (0.99-1.02 times). A function compiled with Numba's ``fastmath``
(its ``reassoc`` flag, which ``fastmath=True`` includes) allows the reordering:
its kernels are left as they are (fast_math.py).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith
from mlir.dialects import math as mmath

from .ir_queries import LOOP_OPS, nested_ops, ops_named


def _as_fma(op: ir.Operation) -> ir.Value:
    """``op`` (an addf, subf or mulf) as an fma computing the same value."""
    a, b = op.operands
    with ir.InsertionPoint(op), op.location:
        if op.name == "arith.addf":
            return mmath.fma(a, arith.constant(a.type, 1.0), b)
        if op.name == "arith.subf":
            return mmath.fma(b, arith.constant(a.type, -1.0), a)
        return mmath.fma(a, b, arith.constant(a.type, -0.0))


_KINDS = {"arith.addf": "sum", "arith.subf": "sum", "arith.mulf": "product"}


def _reduction_steps(carried: ir.Value, loop: ir.Operation) -> list[ir.Operation]:
    """The steps of the sum or product that ``carried``, a float block
    argument of ``loop``, accumulates, if it is one: the chain of adds and
    subtracts (or multiplies) through which it reaches the loop's terminator,
    each taking the previous one's result, and nothing else, as one operand.
    Anything else reading it (``x * x`` in Mandelbrot's ``while``, a
    comparison, a branch) makes it no reduction that the device compiler
    reorders (a sum under an ``if`` it kept in order), and fma would only slow
    it down (Mandelbrot 2.3 times)."""
    steps, value = [], carried
    while True:
        uses = list(value.uses)
        if len(uses) != 1:
            return []
        op = uses[0].owner.operation
        if op.name in ("scf.yield", "scf.condition") and op.parent == loop:
            kinds = {_KINDS[step.name] for step in steps}
            return steps if len(kinds) == 1 else []
        if op.name not in _KINDS:
            return []
        steps.append(op)
        value = op.results[0]


def keep_reduction_order(module: ir.Module) -> None:
    """Rewrite the steps of every float sum or product carried by a kernel's
    loops as fma (see above)."""
    steps = []
    for gpu_module in ops_named(module.operation, "gpu.module"):
        for loop in (op for op in nested_ops(gpu_module) if op.name in LOOP_OPS):
            for region in loop.regions:
                for carried in region.blocks[0].arguments:
                    if isinstance(carried.type, ir.FloatType):
                        steps += _reduction_steps(carried, loop)
    for step in steps:
        step.results[0].replace_all_uses_with(_as_fma(step))
        step.erase()
