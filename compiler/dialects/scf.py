"""The scf dialect: a parfor's loop nest as one ``scf.parallel``, an
``scf.if`` whose two regions the caller fills, and a serial loop carrying a
value (``fold``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from .builder import Builder, Value
from .complex import Complex
from .types import INDEX


@contextmanager
def parallel(
    b: Builder, lower: Sequence[Value], upper: Sequence[Value],
    processors: Sequence[str] | None = None,
) -> Iterator[list[Value]]:
    """Emit an ``scf.parallel`` over ``lower[k] <= i_k < upper[k]`` (outermost
    first, as a parfor's loop nests) and yield the induction variables in that
    order. The loop's own dimensions are listed innermost first, because the
    gpu stage maps its first dimension to x, the dimension whose neighbouring
    work-items a device vectorizes across: they must touch neighbouring memory.

    ``processors`` (outermost first: ``block_x``, ``thread_x``...) maps the
    dimensions to a launch's blocks and threads instead, which the gpu stage
    keeps: a loop whose work-items share a block's memory."""
    one = b.index_constant(1)
    ivs = [Value(b.fresh(), INDEX) for _ in lower]
    names = ", ".join(v.name for v in reversed(ivs))
    lbs = ", ".join(v.name for v in reversed(lower))
    ubs = ", ".join(v.name for v in reversed(upper))
    steps = ", ".join(one.name for _ in lower)
    footer = "}"
    if processors:
        identity = "(d0) -> (d0)"
        footer += " {{mapping = [{}]}}".format(", ".join(
            f"#gpu.loop_dim_map<processor = {processor}, map = {identity}, bound = {identity}>"
            for processor in reversed(processors)))
    with b.region(f"scf.parallel ({names}) = ({lbs}) to ({ubs}) step ({steps})", footer):
        yield ivs
        b.emit("scf.reduce")


@contextmanager
def if_else(b: Builder, condition: Value) -> Iterator[Callable[[], None]]:
    """Emit an ``scf.if`` on ``condition`` with no results: the lines emitted
    inside go to its then-region until the yielded function is called, then
    to its else-region."""
    def otherwise() -> None:
        b.emit("scf.yield")
        b.emit("} else {", indent=-1)

    with b.region(f"scf.if {condition.name}"):
        yield otherwise
        b.emit("scf.yield")


Carried = TypeVar("Carried", Value, Complex)


def fold(b: Builder, count: Value, initial: Carried,
         step: Callable[[Value, Carried], Carried]) -> Carried:
    """Emit an ``scf.for`` of ``k`` from 0 below ``count`` carrying one value
    (a number, or a complex number's two parts) from ``initial``, which
    ``step(k, value)`` advances; the final value."""
    parts = _parts(initial)
    name, index = b.fresh(), Value(b.fresh(), INDEX)
    carried = [Value(b.fresh(), part.type) for part in parts]
    zero, one = b.index_constant(0), b.index_constant(1)
    types = ", ".join(part.type.mlir for part in parts)
    arguments = ", ".join(f"{c.name} = {part.name}" for c, part in zip(carried, parts))
    results = f"{name}:{len(parts)}" if len(parts) > 1 else name
    with b.region(f"{results} = scf.for {index.name} = {zero.name} to {count.name} "
                  f"step {one.name} iter_args({arguments}) -> ({types})", "}"):
        following = _parts(step(index, Complex(*carried) if len(parts) > 1 else carried[0]))
        b.emit(f"scf.yield {', '.join(part.name for part in following)} : {types}")
    if len(parts) == 1:
        return Value(name, initial.type)
    return Complex(*(Value(f"{name}#{k}", part.type) for k, part in enumerate(parts)))


def _parts(value: Value | Complex) -> list[Value]:
    return [getattr(value, part) for part in Complex.PARTS] if isinstance(value, Complex) \
        else [value]
