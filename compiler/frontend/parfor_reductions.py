"""The reductions of a parfor (``s += a[i]``, ``m = min(m, a[i])``,
np.argmin, and variables whose last assignment the code after the loop
reads): what the kernel carries per reduction variable, its body translated
to take them in and give them out, the parallel loop in which each work-item
reduces its share of the iterations into partial results, and how the host
combines those. The layout of that loop is the device's (reduction_layout):
on a CPU device, REDUCTION_WORK_ITEMS work-items in vector lanes, each with
a partial result for the host; on a GPU, work-groups whose work-items combine
theirs in the kernel (subgroup shuffles, then local memory), one partial
result per work-group."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba.core import ir, types

from ..dialects import BOOL, I64, INDEX, U8, Builder, ScalarType, Value, arith, memref, scf
from ..dialects.complex import Complex, lookup_complex_rule
from ..dialects.registry import lookup_rule
from ..errors import UnsupportedError
from ..passes import Target
from .body_values import IndexValuePair, composite_of, scalar_items
from .loop_nest import (
    Bound,
    bound_value,
    by_inner_strides,
    define_loop_indices,
    delinearize,
    iteration_count,
    loop_extents,
)
from .rules.reductions import index_value_min_max
from .translation import KernelParam, Translation, emit_blocks, scalar_type, user_names
from .user_locations import where


@dataclass(frozen=True)
class Reduction:
    """A reduction variable: each of the kernel's REDUCTION_WORK_ITEMS work-items
    reduces a share of the iterations into ``partials[w]`` (see reduction_loop),
    and the host combines those with the variable's value from before the loop."""

    var: str
    combine: Callable[[object, object], object]  # Python, compiled into the host code
    # the operator or callee whose emit rule combines two partial results in
    # a kernel, as ``combine`` does on the host (None: a last-value variable)
    operator: object = None
    # a variable the loop assigns and the code after it reads: the kernel
    # carries the iteration and the value of its last assignment (as an
    # IndexValue), and the latest assignment wins, as in a serial loop
    last_value: bool = False


# work-items of a reduction kernel: enough to fill the device's vector lanes and
# cores, few enough that the host's final combine is cheap. They are laid out
# as chunks of the iterations, each read by as many neighbouring work-items as
# the device runs in one vector (``Target.vector_lanes``): on the OpenCL CPU
# device, which vectorizes across work-items, fewer lanes than its vector
# width left the kernel scalar (half the bandwidth with 8 lanes on AVX-512),
# and more made each vector of lanes stride through its chunk while the
# others waited their turn (also about half).
REDUCTION_WORK_ITEMS = 4096

# iterations a work-item of a work-group layout (a GPU) runs in one step of
# its strided loop: their loads are independent, so all are in flight at
# once. One at a time (the step's sum is chained to the next), a sum of
# squares over 80M floats on an H100 had a load per thread in flight and ran
# at 36% of the copy bandwidth (float64: 49%).
GROUP_STEPS_IN_FLIGHT = 4


@dataclass(frozen=True)
class ReductionLayout:
    """How a reduction kernel's work-items share the iterations and where
    their partial results meet."""

    lanes: int  # work-items run side by side: a CPU's vector, a GPU's subgroup
    # work-items of a work-group that combine their partial results in the
    # kernel (0: none, each work-item's goes to the host), and work-groups
    group_size: int = 0
    groups: int = 0

    @property
    def partial_count(self) -> int:
        """The partial results the host combines: one per work-group, or one
        per work-item."""
        return self.groups if self.group_size else REDUCTION_WORK_ITEMS


def reduction_layout(target: Target) -> ReductionLayout:
    """The one place a reduction kernel's shape follows from the device: the
    work-groups of a Target that names them (a GPU: subgroups reduce with
    shuffles, work-groups in local memory, and enough work-groups to fill the
    device), else the vector lanes of REDUCTION_WORK_ITEMS work-items."""
    if target.reduction_group_size:
        return ReductionLayout(target.vector_lanes, target.reduction_group_size,
                               target.reduction_groups)
    return ReductionLayout(reduction_lanes(target.vector_lanes))


def reduction_lanes(target_lanes: int) -> int:
    """The lanes of a reduction kernel for a device that runs ``target_lanes``
    work-items in one vector: a power of two dividing REDUCTION_WORK_ITEMS."""
    lanes = 1
    while lanes * 2 <= min(target_lanes, REDUCTION_WORK_ITEMS):
        lanes *= 2
    return lanes


def _add(a, b):
    return a + b


def _multiply(a, b):
    return a * b


# how partial results combine, by Numba's reduction operator: a work-item's
# ``t -= x`` accumulates -sum(x) from 0, so partials add; ``t /= x`` multiplies
# (and the operator that does it in a kernel)
_COMBINE_BY_OPERATOR = {
    operator.iadd: (_add, 0, operator.add), operator.isub: (_add, 0, operator.add),
    operator.imul: (_multiply, 1, operator.mul), operator.itruediv: (_multiply, 1, operator.mul),
}


def _min(a, b):
    return min(a, b)


def _max(a, b):
    return max(a, b)


def _minimum(a, b):
    return np.minimum(a, b)


def _maximum(a, b):
    return np.maximum(a, b)


def _fmin(a, b):
    return np.fmin(a, b)


def _fmax(a, b):
    return np.fmax(a, b)


# min/max-like reductions start from the variable's own value (they are
# idempotent) and combine with the function they use (each its own Python
# function: Numba caches what it compiles into the host code by code object)
_COMBINE_BY_CALLEE = {
    builtins.min: _min, builtins.max: _max, np.minimum: _minimum, np.maximum: _maximum,
    np.fmin: _fmin, np.fmax: _fmax,
}


@dataclass(frozen=True)
class ReductionArg:
    """A scalar the reduction kernel carries: a reduction variable, or one
    part of an IndexValue variable (np.argmin / np.argmax)."""

    reduction: Reduction
    dtype: ScalarType
    partials: str  # SSA name of the partial results' memref argument
    variable: Value | None  # the variable's value before the loop (an argument)
    identity: int | None  # what work-items start from; None: from ``variable``
    compensated: bool  # a float sum, whose work-items add in compensated steps
    part: str | None = None  # of an IndexValue or a complex number: its field
    holds_bool: bool = False  # a bool, carried as a byte (``_carried``)


def _carried(dtype: ScalarType) -> ScalarType:
    """What the kernel carries a reduction's ``dtype`` as. A bool
    (``found = max(found, x > 0)``, np.min of bools, np.argmin's IndexValue of
    one) is a byte, 0 or 1: device memory and subgroup shuffles hold no
    bools, and the host reads each partial byte as Numba's bool, stored as one."""
    return U8 if dtype.kind == "b" else dtype


def reduction_args(t: Translation) -> list[ReductionArg]:
    """Each reduction variable (part), its partials argument and the value its
    work-items start from."""
    found = []
    for name in t.parfor.redvars:
        info = t.parfor.reddict[name]
        nbtype = t.typemap[name]
        if isinstance(nbtype, types.Array):  # updated in place (rules/array_reductions.py)
            continue
        composite = composite_of(nbtype)
        what = f"reduction variable '{user_names([name])}'"
        dtypes = [scalar_type(ty, what, t.parfor.loc)
                  for ty in (scalar_items(nbtype) if composite else (nbtype,))]
        if info.redop in _COMBINE_BY_OPERATOR and composite is not IndexValuePair:
            combine, identity, combining = _COMBINE_BY_OPERATOR[info.redop]
        else:
            combining, identity = _min_max_callee(t, info.reduce_nodes), None
            if combining is None:
                raise UnsupportedError(
                    f"{where(t.parfor.loc)}: reduction into {user_names([name])} with an "
                    "operator other than +=, -=, *=, /=, min or max")
            combine = _COMBINE_BY_CALLEE[combining]
        start = t.env[name]
        for axis, (dtype, part) in enumerate(zip(dtypes, composite.PARTS if composite
                                                 else (None,))):
            partials = t.add_param(KernelParam("partials", name,
                                               memref.memref_type(_carried(dtype)), axis))
            # the imaginary part of 0 and of 1 is 0
            start_part = 0 if part == "imag" and identity is not None else identity
            compensated = dtype.is_float and info.redop in (operator.iadd, operator.isub)
            variable = getattr(start, part) if part else start
            if dtype.kind == "b":
                variable = _byte_argument(t, name, axis)
            found.append(ReductionArg(Reduction(name, combine, combining), _carried(dtype),
                                      partials, variable, start_part, compensated, part,
                                      dtype.kind == "b"))
    # Numba may list a reduction variable among the races too (which, depends
    # on the hash seed): its value after the loop is the reduction's
    for name in sorted(t.parfor.races - set(t.parfor.redvars)):
        dtype = scalar_type(t.typemap[name], f"variable '{user_names([name])}' assigned in "
                            "the loop and read after it", t.parfor.loc)
        last = Reduction(name, _later, last_value=True)
        # work-items start from "never assigned" (iteration -1)
        for axis, (part, part_type, identity) in enumerate((("index", I64, -1),
                                                            ("value", dtype, 0))):
            partials = t.add_param(KernelParam("partials", name,
                                               memref.memref_type(_carried(part_type)), axis))
            found.append(ReductionArg(last, _carried(part_type), partials, None, identity,
                                      False, part, part_type.kind == "b"))
    return found


def _byte_argument(t: Translation, name: str, part: int) -> Value:
    """The kernel argument that a bool reduction variable's value before the
    loop (or part ``part`` of it) arrives in, a byte (translation._scalar_param)."""
    return next(Value(ssa, U8) for ssa, param in t.args
                if param.var == name and (param.kind == "scalar"
                                          or param.kind == "tuple_item" and param.axis == part))


def _later(a, b):
    return b if b.index > a.index else a


def _min_max_callee(t: Translation, nodes: list) -> object | None:
    """The min/max-like callee a reduction's nodes call, if any."""
    for node in nodes:
        if isinstance(node, ir.Assign) and isinstance(node.value, ir.Expr) \
                and node.value.op == "call":
            key = getattr(t.typemap[node.value.func.name], "typing_key", None)
            if key in _COMBINE_BY_CALLEE:
                return key
    return None


def translate_reduction_body(t: Translation, flat: Value, indices: list[Value],
                             bounds: list[tuple[Bound, Bound]],
                             reductions: list[ReductionArg]) -> list[Value]:
    """One call per iteration, the ``flat``-th of the nest (row-major), at
    loop ``indices`` (none for a single loop: its index follows from
    ``flat``): the reduction variables come in as arguments and go out as
    results (an IndexValue as its two parts)."""
    b = t.b
    accumulators = [Value(f"%acc{k}", r.dtype) for k, r in enumerate(reductions)]
    held = [arith.cast(b, acc, BOOL) if r.holds_bool else acc
            for r, acc in zip(reductions, accumulators)]
    for r, parts in _by_variable(reductions, held).items():
        composite = composite_of(t.typemap[r.var])
        if r.last_value:  # the value it had after this work-item's last assignment
            t.define(_var(t, r.var), parts[1])
            t.assigned[r.var], unassigned = t.alloca(BOOL), b.fresh()
            t.allocas += [f"{unassigned} = arith.constant false",
                          f"memref.store {unassigned}, {t.assigned[r.var]}[] : memref<i1>"]
        else:
            t.define(_var(t, r.var), composite(*parts) if composite else parts[0])
    iteration = arith.cast(b, flat, I64)
    define_loop_indices(t, indices or delinearize(b, flat, bounds))
    emit_blocks(t, t.parfor.loop_body, "^exit")
    b.emit("^exit:", indent=-1)
    t.local = set()
    results = [_carried_out(t, r, acc, iteration) for r, acc in zip(reductions, held)]
    results = [arith.cast(b, value, r.dtype) if r.holds_bool else value
               for r, value in zip(reductions, results)]
    b.emit(f"return {', '.join(v.name for v in results)} : "
           f"{', '.join(v.type.mlir for v in results)}")
    return accumulators


def _by_variable(reductions: list[ReductionArg],
                 values: list[Value]) -> dict[Reduction, list[Value]]:
    grouped: dict[Reduction, list[Value]] = {}
    for r, value in zip(reductions, values):
        grouped.setdefault(r.reduction, []).append(value)
    return grouped


def _carried_out(t: Translation, r: ReductionArg, carried: Value, iteration: Value) -> Value:
    """What one iteration passes on of a reduction variable (part)."""
    var = _var(t, r.reduction.var)
    if r.reduction.last_value and r.part == "index":  # this iteration, if it assigned
        assigned = t.b.op(f"memref.load {t.assigned[var.name]}[] : memref<i1>", BOOL)
        return arith.select(t.b, assigned, iteration, carried)
    if r.part and not r.reduction.last_value:
        return getattr(t.lookup(var), r.part)
    return t.value(var)


def _var(t: Translation, name: str) -> ir.Var:
    return ir.Var(t.parfor.init_block.scope, name, t.parfor.loc)


def reduction_loop(b: Builder, body: str, operands: list[tuple[str, str]],
                   bounds: list[tuple[Bound, Bound]], reductions: list[ReductionArg],
                   layout: ReductionLayout, inner_strides: list[str]) -> list[str]:
    """The parallel loop of a reduction kernel, laid out as ``layout`` says;
    the declarations it needs at the module's top (a work-group's buffers).

    Without work-groups: work-item ``(c, l)`` of a C x L parallel loop (C * L =
    REDUCTION_WORK_ITEMS, L = ``layout.lanes``) runs the iterations ``r * L + l``
    for the rows ``r`` of chunk ``c`` (the iterations as rows of L, cut into C
    chunks of consecutive rows), carrying the reduction variables from their
    start values (float sums with compensated steps), and stores its partial
    results at ``c * L + l``; chunk 0 also takes the iterations of the last,
    partial row.

    In a nest of loops the lanes take neighbouring innermost indices instead:
    chunk ``c`` gets consecutive points of the outer loops (rows), and lane
    ``l`` runs the innermost indices ``l, l + L, ...`` of each. A flat
    iteration count gives the indices back only by division, which the
    device cannot see through: it gathered, and a 2-D sum ran at a twelfth of
    the bandwidth of a 1-D one.

    This is the shape a device that vectorizes across work-items (the x
    dimension, here the lanes) reads at full bandwidth: the lanes load
    neighbouring elements, at an offset from a row counter that is the same
    in all of them, and each chunk streams through memory of its own. Strided
    shares (work-item w runs w, w + W, ...) made the OpenCL CPU device gather
    element by element, 5x slower than this. Views run as in a map kernel
    (``_map_loop`` in parfor_to_mlir.py).

    With work-groups (a GPU), see ``reduce_in_group``.
    """
    lane_count = layout.lanes
    chunks = None if layout.group_size else b.index_constant(REDUCTION_WORK_ITEMS // lane_count)
    lanes = b.index_constant(lane_count)
    # what each work-item carries from one iteration to the next, per
    # reduction: its running value, and for a compensated sum the rounding
    # error not yet in it
    starts = [b.constant(r.identity, r.dtype) if r.identity is not None else r.variable
              for r in reductions]
    initial = [v for r, start in zip(reductions, starts)
               for v in ([start, b.constant(0, r.dtype)] if r.compensated else [start])]
    types = ", ".join(r.dtype.mlir for r in reductions)
    state_types = ", ".join(v.type.mlir for v in initial)
    nested = len(bounds) > 1
    argument_types = ", ".join([type for _, type in operands]
                               + ["index"] * (1 + nested * len(bounds))
                               + [r.dtype.mlir for r in reductions])

    def iteration(flat: Value, state: list[Value], replaced: dict[str, str],
                  indices: list[Value] = ()) -> list[Value]:
        """The state after the ``flat``-th iteration, at loop ``indices`` in a
        nest: the body carries each reduction on, but gives a compensated
        sum's term alone (what it adds to zero), which a compensated step then
        adds."""
        rest = iter(state)
        held = [(next(rest), next(rest)) if r.compensated else (next(rest),)
                for r in reductions]
        carried = [start.name if r.compensated else value[0].name
                   for r, start, value in zip(reductions, starts, held)]
        results = b.fresh()
        arguments = ", ".join([replaced.get(name, name) for name, _ in operands] + [flat.name]
                              + [index.name for index in indices] + carried)
        b.emit(f"{results}:{len(reductions)} = func.call @{body}({arguments}) : "
               f"({argument_types}) -> ({types})")
        following = []
        for k, (r, value) in enumerate(zip(reductions, held)):
            result = Value(f"{results}#{k}", r.dtype)
            following += _compensated_add(b, *value, result) if r.compensated else [result]
        return following

    def reduce_share(chunk: Value, lane: Value, replaced: dict[str, str]) -> None:
        """Work-item (chunk, lane) of a single loop: its share of the
        iterations, stored."""
        total = iteration_count(b, bounds)
        rows = arith.binary(b, "arith.divui", total, lanes)
        rows_per_chunk = arith.binary(b, "arith.ceildivui", rows, chunks)
        first_row = arith.binary(b, "arith.muli", chunk, rows_per_chunk)
        end_row = arith.binary(b, "arith.minui", arith.binary(
            b, "arith.addi", first_row, rows_per_chunk), rows)
        final = loop(first_row, end_row, initial, lambda row, state: iteration(
            arith.binary(b, "arith.addi", arith.binary(b, "arith.muli", row, lanes), lane),
            state, replaced))
        last = arith.binary(b, "arith.addi", arith.binary(b, "arith.muli", rows, lanes), lane)
        takes_last = arith.binary(b, "arith.andi", arith.compare(b, "eq", chunk, zero),
                                  arith.compare(b, "lt", last, total))
        work_item = arith.binary(b, "arith.addi",
                                 arith.binary(b, "arith.muli", chunk, lanes), lane)

        # each branch stores its own results: an scf.if that yielded them made
        # the OpenCL CPU device's vectorizer carry a loop-invariant float sum
        # (``s += 1.0``) from one work-item into the next
        with b.region(f"scf.if {takes_last.name}"):
            # explicit terminators: an implicit one has no location of the user's
            store(work_item, iteration(last, final, replaced))
            b.emit("scf.yield")
            b.emit("} else {", indent=-1)
            store(work_item, final)
            b.emit("scf.yield")

    def loop(lower: Value, upper: Value, state: list[Value],
             step: Callable[[Value, list[Value]], list[Value]],
             stride: Value | None = None) -> list[Value]:
        """``scf.for`` from ``lower`` to ``upper`` (by ``stride``, 1 unless
        told) carrying ``state``, which ``step(index, state)`` advances; the
        final state."""
        name, index = b.fresh(), Value(b.fresh(), INDEX)
        carried = [Value(b.fresh(), v.type) for v in state]
        iter_args = ", ".join(f"{c.name} = {v.name}" for c, v in zip(carried, state))
        with b.region(f"{name}:{len(state)} = scf.for {index.name} = {lower.name} "
                      f"to {upper.name} step {(stride or b.index_constant(1)).name} "
                      f"iter_args({iter_args}) -> ({state_types})", "}"):
            following = step(index, carried)
            b.emit(f"scf.yield {', '.join(v.name for v in following)} : {state_types}")
        return [Value(f"{name}#{k}", v.type) for k, v in enumerate(state)]

    def reduce_rows(chunk: Value, lane: Value, replaced: dict[str, str]) -> None:
        """Work-item (chunk, lane) of a nest: for each row of chunk ``chunk``
        (the points of the outer loops, cut into C chunks of consecutive
        rows), the innermost indices ``lane``, ``lane + L``, ... below the
        row's width (lanes past the last full group of L take one step fewer);
        its results, stored."""
        outer, width = bounds[:-1], loop_extents(b, bounds[-1:])[0]
        outer_count = iteration_count(b, outer)
        rows_per_chunk = arith.binary(b, "arith.ceildivui", outer_count, chunks)
        first_row = arith.binary(b, "arith.muli", chunk, rows_per_chunk)
        end_row = arith.binary(b, "arith.minui", arith.binary(
            b, "arith.addi", first_row, rows_per_chunk), outer_count)
        # the steps of this lane: ceil((width - lane) / L) where width > lane
        steps = arith.select(b, arith.compare(b, "gt", width, lane), arith.binary(
            b, "arith.ceildivui", arith.binary(b, "arith.subi", width, lane), lanes),
            b.index_constant(0))

        def row(o: Value, state: list[Value]) -> list[Value]:
            at = delinearize(b, o, outer)
            row_start = arith.binary(b, "arith.muli", o, width)

            def element(k: Value, state: list[Value]) -> list[Value]:
                j = arith.binary(b, "arith.addi", arith.binary(b, "arith.muli", k, lanes), lane)
                index = arith.binary(b, "arith.addi", j, bound_value(b, bounds[-1][0]))
                return iteration(arith.binary(b, "arith.addi", row_start, j), state, replaced,
                                 at + [index])

            return loop(b.index_constant(0), steps, state, element)

        store(arith.binary(b, "arith.addi", arith.binary(b, "arith.muli", chunk, lanes), lane),
              loop(first_row, end_row, initial, row))

    def finished(state: list[Value]) -> list[Value]:
        """A work-item's partial results from its final state."""
        rest = iter(state)
        values = []
        for r in reductions:
            value = next(rest)
            if r.compensated:  # the sum with the error it has not taken in yet
                value = arith.binary(b, "arith.subf", value, next(rest))
            values.append(value)
        return values

    def store(work_item: Value, state: list[Value]) -> None:
        for r, value in zip(reductions, finished(state)):
            memref.store(b, value, r.partials, r.dtype, work_item)

    def reduce_in_group(group: Value, item: Value, buffers: list[str],
                        replaced: dict[str, str]) -> None:
        """Work-item ``item`` of work-group ``group`` (G groups of S): the
        iterations ``w, w + G * S, ...`` from ``w = group * S + item`` (of
        the nest's flat iteration count), so that neighbouring work-items read
        neighbouring elements at each step, as a GPU's memory wants. The
        work-group then combines its partial results: each subgroup (L
        work-items) by shuffles down, halving, then work-item 0 the
        subgroups' results, which their first work-items left in local
        memory (``buffers``); it stores the work-group's at ``group``."""
        size = b.index_constant(layout.group_size)
        first = arith.binary(b, "arith.addi", arith.binary(b, "arith.muli", group, size), item)
        total = iteration_count(b, bounds)
        stride = layout.group_size * layout.groups

        def step(flat: Value, state: list[Value]) -> list[Value]:
            return iteration(flat, state, replaced,
                             delinearize(b, flat, bounds) if nested else [])

        def steps(flat: Value, state: list[Value]) -> list[Value]:
            for k in range(GROUP_STEPS_IN_FLIGHT):
                state = step(flat if k == 0 else arith.binary(
                    b, "arith.addi", flat, b.index_constant(k * stride)), state)
            return state

        # the work-item's share in runs of GROUP_STEPS_IN_FLIGHT iterations,
        # then the rest one by one: the same iterations in the same order
        run = b.index_constant(GROUP_STEPS_IN_FLIGHT * stride)
        share = arith.binary(b, "arith.subi", arith.binary(b, "arith.maxui", total, first), first)
        runs_end = arith.binary(b, "arith.addi", first, arith.binary(
            b, "arith.muli", arith.binary(b, "arith.divui", share, run), run))
        final = loop(runs_end, total, loop(first, runs_end, initial, steps, run), step,
                     b.index_constant(stride))
        values = finished(final)
        offset = lane_count // 2
        while offset:
            values = combine_partials(b, reductions, values,
                                      [_shuffled_down(b, v, offset, lane_count) for v in values])
            offset //= 2
        subgroup = arith.binary(b, "arith.divui", item, lanes)
        leads = arith.compare(b, "eq", arith.binary(b, "arith.remui", item, lanes), zero)
        with scf.if_else(b, leads):
            for value, buffer in zip(values, buffers):
                memref.store(b, value, buffer, value.type, subgroup, _buffer_type(value.type,
                                                                                    layout))
        b.emit("gpu.barrier")
        with scf.if_else(b, arith.compare(b, "eq", item, zero)):
            held = [[memref.load(b, buffer, r.dtype, b.index_constant(k),
                                 _buffer_type(r.dtype, layout))
                     for r, buffer in zip(reductions, buffers)]
                    for k in range(layout.group_size // lane_count)]
            values = held[0]
            for following in held[1:]:
                values = combine_partials(b, reductions, values, following)
            for r, value in zip(reductions, values):
                memref.store(b, value, r.partials, r.dtype, group)

    zero = b.index_constant(0)
    if layout.group_size:
        globals_ = [f"@{body}_group{k}" for k in range(len(reductions))]
        buffer_types = [_buffer_type(r.dtype, layout) for r in reductions]
        # as dimensions mapped to the launch: the work-items of a group are
        # one block's threads, the groups its blocks
        with scf.parallel(b, [zero, zero], [b.index_constant(layout.groups),
                                            b.index_constant(layout.group_size)],
                          processors=("block_x", "thread_x")) as (group, item):
            buffers = [b.fresh() for _ in reductions]
            for buffer, name, type in zip(buffers, globals_, buffer_types):
                b.emit(f"{buffer} = memref.get_global {name} : {type}")
            by_inner_strides(b, inner_strides,
                             lambda replaced: reduce_in_group(group, item, buffers, replaced))
        return [f'memref.global "private" {name} : {type}'
                for name, type in zip(globals_, buffer_types)]
    share = reduce_rows if nested else reduce_share
    with scf.parallel(b, [zero, zero], [chunks, lanes]) as (chunk, lane):
        by_inner_strides(b, inner_strides, lambda replaced: share(chunk, lane, replaced))
    return []


def _buffer_type(dtype: ScalarType, layout: ReductionLayout) -> str:
    """A work-group's local memory for one result of each subgroup."""
    return (f"memref<{layout.group_size // layout.lanes}x{dtype.storage}, "
            "#gpu.address_space<workgroup>>")


def _shuffled_down(b: Builder, value: Value, offset: int, width: int) -> Value:
    """``value`` of the work-item ``offset`` further in the subgroup (of
    ``width``), as a subgroup shuffle moves it (32 or 64 bits: a narrower
    value travels widened, exactly)."""
    wide = ScalarType("f" if value.type.is_float else "u", 32)
    moved = value if value.type.bits >= 32 else arith.cast(b, value, wide)
    result = b.fresh()
    b.emit(f"{result}, {b.fresh()} = gpu.shuffle down {moved.name}, "
           f"{b.constant(offset, ScalarType('i', 32)).name}, "
           f"{b.constant(width, ScalarType('i', 32)).name} : {moved.type.mlir}")
    shuffled = Value(result, moved.type)
    return shuffled if moved is value else arith.cast(b, shuffled, value.type)


def combine_partials(b: Builder, reductions: list[ReductionArg], firsts: list[Value],
                     seconds: list[Value]) -> list[Value]:
    """Two work-items' partial results (of each reduction part, ``firsts``
    the earlier work-item's) combined in the kernel as the host combines them
    (``Reduction.combine``), by the emit rules of the reduction's operator."""
    combined: list[Value] = []
    for reduction, parts in _by_variable(reductions, list(zip(firsts, seconds))).items():
        first, second = ([pair[k] for pair in parts] for k in (0, 1))
        key = reduction.operator
        if reduction.last_value:  # the later assignment wins
            later = arith.compare(b, "gt", second[0], first[0])
            combined += [arith.select(b, later, s, f) for f, s in zip(first, second)]
        elif len(parts) == 1:
            combined.append(lookup_rule(key)(b, [first[0], second[0]], first[0].type))
        elif key in (builtins.min, builtins.max):  # np.argmin / np.argmax
            pair = index_value_min_max(b, key, IndexValuePair(*first), IndexValuePair(*second))
            combined += [pair.index, pair.value]
        elif key is operator.add:  # of complex numbers: part by part
            combined += [lookup_rule(key)(b, [f, s], f.type) for f, s in zip(first, second)]
        else:  # a complex product
            product = lookup_complex_rule(key)(b, [Complex(*first), Complex(*second)])
            combined += [product.real, product.imag]
    return combined


def _compensated_add(b: Builder, total: Value, error: Value, term: Value) -> list[Value]:
    """Kahan's step: ``total + term``, and the rounding error of the sum so far
    (``total - error`` is the sum), so that a work-item's share of a float sum
    is exact to a few ulps however many terms it adds."""
    corrected = arith.binary(b, "arith.subf", term, error)
    following = arith.binary(b, "arith.addf", total, corrected)
    lost = arith.binary(b, "arith.subf", arith.binary(b, "arith.subf", following, total),
                        corrected)
    # past an infinity (or an overflow) there is no error to carry, and
    # carrying inf - inf would make the sum NaN
    magnitude = b.op(f"math.absf {lost.name} : {lost.type.mlir}", lost.type)
    finite = arith.compare(b, "lt", magnitude, b.constant(float("inf"), lost.type))
    return [following, arith.select(b, finite, lost, b.constant(0, lost.type))]
