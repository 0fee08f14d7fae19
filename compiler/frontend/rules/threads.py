"""Rules of Numba's thread functions in a body (``numba.get_num_threads``,
``set_num_threads``, ``get_parallel_chunksize``): what they answer inside a
parallel region, where each work-item stands for one of Numba's workers."""

from __future__ import annotations

import numba
from numba.core import ir

from ...dialects import I64, Value, arith
from ..translation import KernelParam, Translation, call_rule


def _thread_count_slot(t: Translation) -> str:
    """The slot that holds each iteration's thread count: Numba's workers
    start with the launching thread's, set_num_threads in the body changes
    it for the rest of the iteration (a thread-local setting in Numba)."""
    if t.threads is None:
        launching = t.add_param(KernelParam("num_threads", "", "i64"))
        t.threads = t.alloca(I64)
        t.allocas.append(f"memref.store {launching}, {t.threads}[] : memref<i64>")
    return t.threads


@call_rule(numba.get_num_threads)
def _get_num_threads(t: Translation, expr: ir.Expr, target: ir.Var) -> Value:
    return t.b.op(f"memref.load {_thread_count_slot(t)}[] : memref<i64>", I64)


@call_rule(numba.set_num_threads)
def _set_num_threads(t: Translation, expr: ir.Expr, target: ir.Var) -> None:
    # unchecked: a kernel cannot raise Numba's ValueError for a count out of
    # 1..NUMBA_NUM_THREADS
    (count,) = expr.args
    value = arith.cast(t.b, t.value(count), I64)
    t.b.emit(f"memref.store {value.name}, {_thread_count_slot(t)}[] : memref<i64>")


@call_rule(numba.get_parallel_chunksize)
def _get_parallel_chunksize(t: Translation, expr: ir.Expr, target: ir.Var) -> Value:
    # inside a parallel region Numba's workers run with the chunk size reset
    # to 0 (the default scheduling); a work-item has no chunk size of its own
    return t.b.constant(0, I64)
