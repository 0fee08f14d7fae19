"""A parfor's loop nest as the kernel sees it: the bounds of each loop (a
constant, or an index argument), how many points the nest has, the indices
of its ``flat``-th point, and how a nest deeper than a kernel's three
dimensions folds its outer loops into one. Shared by map kernels
(parfor_to_mlir.py) and reduction kernels (parfor_reductions.py)."""

from __future__ import annotations

from collections.abc import Callable

from numba.core import types

from ..dialects import INDEX, Builder, Value, arith
from ..errors import UnsupportedError
from .translation import KernelParam, Translation
from .user_locations import where

Bound = int | str  # a constant, or the SSA name of an index argument


def loop_bounds(t: Translation) -> list[tuple[Bound, Bound]]:
    """(start, stop) of each loop nest, outermost first; variables become arguments."""
    bounds = []
    for axis, nest in enumerate(t.parfor.loop_nests):
        if nest.step != 1:
            raise UnsupportedError(f"{where(t.parfor.loc)}: prange with a step other than 1")
        pair = []
        for kind, bound in (("start", nest.start), ("stop", nest.stop)):
            if not isinstance(bound, int) and isinstance(t.typemap[bound.name],
                                                         types.IntegerLiteral):
                # a constant in the kernel: with it, the gpu stage can prove
                # the loop's indices non-negative (see rewrites.bound_global_ids)
                bound = t.typemap[bound.name].literal_value
            pair.append(bound if isinstance(bound, int)
                        else t.add_param(KernelParam(kind, bound.name, "index", axis)))
        bounds.append((pair[0], pair[1]))
    return bounds


def bound_value(b: Builder, bound: Bound) -> Value:
    """A bound as an index value."""
    return b.index_constant(bound) if isinstance(bound, int) else Value(bound, INDEX)


def define_loop_indices(t: Translation, indices: list[Value]) -> None:
    """Bind the parfor's loop index variables to ``indices``."""
    for nest, index in zip(t.parfor.loop_nests, indices):
        t.define(nest.index_variable, index)


def loop_extents(b: Builder, bounds: list[tuple[Bound, Bound]]) -> list[Value]:
    """The iteration count of each loop of ``bounds`` (0 when its stop is not past
    its start)."""
    return [arith.binary(b, "arith.maxsi", arith.binary(b, "arith.subi", bound_value(b, high),
                                                        bound_value(b, low)),
                         b.index_constant(0))
            for low, high in bounds]


def iteration_count(b: Builder, bounds: list[tuple[Bound, Bound]]) -> Value:
    """The number of points of the nest ``bounds``."""
    total, *rest = loop_extents(b, bounds)
    for extent in rest:
        total = arith.binary(b, "arith.muli", total, extent)
    return total


def delinearize(b: Builder, flat: Value, bounds: list[tuple[Bound, Bound]]) -> list[Value]:
    """The loop indices of the ``flat``-th point (row-major) of the nest ``bounds``."""
    indices, rest = [], flat
    extents = loop_extents(b, bounds[1:])
    for (low, _), extent in reversed(list(zip(bounds[1:], extents))):
        offset = arith.binary(b, "arith.remui", rest, extent)
        indices.insert(0, arith.binary(b, "arith.addi", offset, bound_value(b, low)))
        rest = arith.binary(b, "arith.divui", rest, extent)
    # what remains is the outermost index: ``flat`` is within the nest
    return [arith.binary(b, "arith.addi", rest, bound_value(b, bounds[0][0]))] + indices


# kernels have at most 3 dimensions: deeper nests fold their outer loops into one
_MAX_KERNEL_DIMS = 3


def kernel_nest(bounds: list[tuple[Bound, Bound]]) -> tuple[list, list]:
    """The loops that make the kernel's first dimension (one loop, or the outer
    loops a nest deeper than a kernel folds together) and the loops after them."""
    cut = max(len(bounds) - _MAX_KERNEL_DIMS + 1, 1)
    return bounds[:cut], bounds[cut:]


def by_inner_strides(b: Builder, inner_strides: list[str],
                     emit: Callable[[dict[str, str]], None]) -> None:
    """``emit(replaced)``, code that calls the body with the arguments that
    ``replaced`` maps replaced: with none, or, when some arguments are the
    innermost strides of views, as two versions, the first run when they all
    are 1 and given the constant 1 for them."""
    if not inner_strides:
        emit({})
        return
    one = b.index_constant(1)
    unit = arith.compare(b, "eq", Value(inner_strides[0], INDEX), one)
    for stride in inner_strides[1:]:
        unit = arith.binary(b, "arith.andi", unit,
                            arith.compare(b, "eq", Value(stride, INDEX), one))
    with b.region(f"scf.if {unit.name}"):
        # explicit terminators: an implicit one has no location of the user's
        emit({stride: one.name for stride in inner_strides})
        b.emit("scf.yield")
        b.emit("} else {", indent=-1)
        emit({})
        b.emit("scf.yield")

