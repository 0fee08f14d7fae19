"""The scf dialect: a parfor's loop nest as one ``scf.parallel``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .builder import Builder, Value
from .types import INDEX


@contextmanager
def parallel(
    b: Builder, lower: Sequence[Value], upper: Sequence[Value]
) -> Iterator[list[Value]]:
    """Emit an ``scf.parallel`` over ``lower[k] <= i_k < upper[k]`` (outermost
    first, as a parfor's loop nests) and yield the induction variables in that
    order. The loop's own dimensions are listed innermost first, because the
    gpu stage maps its first dimension to x, the dimension whose neighbouring
    work-items a device vectorizes across: they must touch neighbouring memory."""
    one = b.index_constant(1)
    ivs = [Value(b.fresh(), INDEX) for _ in lower]
    names = ", ".join(v.name for v in reversed(ivs))
    lbs = ", ".join(v.name for v in reversed(lower))
    ubs = ", ".join(v.name for v in reversed(upper))
    steps = ", ".join(one.name for _ in lower)
    with b.region(f"scf.parallel ({names}) = ({lbs}) to ({ubs}) step ({steps})", "}"):
        yield ivs
        b.emit("scf.reduce")
