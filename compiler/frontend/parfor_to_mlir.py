"""Translate one Numba parfor into the MLIR of its kernel (the ``linalg`` stage).

A parfor becomes a ``func.func`` whose body is one ``scf.parallel`` over the
parfor's loop nest, calling the parfor's body, a function of its own. Its
arguments are what the host passes: a flat memref per array, index values
(loop bounds, array dimensions) and scalars; ``KernelParam`` records where the
host finds each. The body's statements are translated by the rules of
``rules/`` (see translation.py); a parfor with reductions carries them as
parfor_reductions.py lays out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numba.core import ir
from numba.parfors.parfor import Parfor

from ..dialects import INDEX, Builder, Value, scf
from ..dialects.builder import located
from ..errors import UnsupportedError
from ..passes import Target
from . import rules  # noqa: F401  (importing the rules registers them)
from .inner_loops import widened_parfor
from .loop_nest import (
    Bound,
    bound_value,
    by_inner_strides,
    define_loop_indices,
    delinearize,
    iteration_count,
    kernel_nest,
    loop_bounds,
)
from .parfor_dependences import ReadHyperplane, check_loop_carried, iterations_independent
from .parfor_reductions import (
    Reduction,
    reduction_args,
    reduction_layout,
    reduction_loop,
    translate_reduction_body,
)
from .parfor_updates import find_shared_updates
from .translation import (
    ArrayUse,
    KernelParam,
    SeparateArrays,
    SizeCheck,
    Translation,
    bind_param,
    emit_blocks,
    located_lines,
    location_of,
    user_names,
)
from .user_locations import where


@dataclass
class ParforKernel:
    name: str
    mlir: str
    params: tuple[KernelParam, ...]
    arrays: dict[str, ArrayUse]
    ndim: int
    reductions: tuple[Reduction, ...] = ()
    size_checks: tuple[SizeCheck, ...] = ()  # for the host to make before the launch
    partial_count: int = 0  # of each reduction part, which the host combines
    # statements the host runs before the launch: the bounds of an inner loop
    # made a level of the nest (inner_loops.py)
    host_bounds: tuple[ir.Assign, ...] = ()
    # hyperplanes of arrays the iterations read that one iteration owns, which
    # the host compares before and after the loop (shared_hyperplanes.py)
    read_hyperplanes: tuple[ReadHyperplane, ...] = ()
    # arrays the host checks share no memory before the launch (view_order.py)
    separate_arrays: tuple[SeparateArrays, ...] = ()


def _allocated_in_init_block(t: Translation) -> set[str]:
    """Arrays the parfor's init block allocates with np.empty (array-expression
    results): the parfor writes all of them, so they need no copy to the device.
    A view the init block makes (``b[1:, 1:] = ...``) is not one of them."""
    found = set()
    for stmt in t.parfor.init_block.body:
        if (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                and stmt.value.op == "call"
                and getattr(t.typemap[stmt.value.func.name], "typing_key", None) is np.empty):
            found.add(stmt.target.name)
    return found


def _bind_params(t: Translation) -> None:
    """Make a kernel argument of every variable the body uses from outside."""
    fresh = _allocated_in_init_block(t)
    for name in sorted(t.parfor.params):
        bind_param(t, name, t.parfor.loc)
        if name in t.arrays:
            t.arrays[name].fresh = name in fresh


def _translate_map_body(t: Translation, ivs: list[Value],
                        bounds: list[tuple[Bound, Bound]]) -> None:
    """One call of the body per point of the iteration space; in a nest deeper
    than a kernel, the first index counts the points of the folded outer loops."""
    folded, _ = kernel_nest(bounds)
    if len(folded) > 1:
        ivs = delinearize(t.b, ivs[0], folded) + ivs[1:]
    define_loop_indices(t, ivs)
    emit_blocks(t, t.parfor.loop_body, "^exit")
    t.b.emit("^exit:", indent=-1)
    t.b.emit("return")


def translate_parfor(parfor: Parfor, typemap: dict, calltypes: dict, name: str,
                     target: Target) -> ParforKernel:
    """The kernel MLIR of ``parfor`` and what the host must pass to it, for
    the device of ``target`` (which lays out its reductions)."""
    assigned = {stmt.target.name for block in parfor.loop_body.values() for stmt in block.body
                if isinstance(stmt, ir.Assign)}
    rebound = assigned & set(parfor.params) - set(parfor.redvars) - parfor.races
    if rebound:  # a kernel's arguments are copies: the assignment would be lost
        raise UnsupportedError(
            f"{where(parfor.loc)}: variable(s) {user_names(rebound)} from before the loop "
            "assigned in it, not as a reduction")
    location = location_of(parfor.loc)
    t, host_bounds = None, ()
    widened = widened_parfor(parfor, typemap) if target.parallel_inner_loops else None
    if widened is not None:
        t = _translation(widened.parfor, typemap, calltypes, location)
        if iterations_independent(t):
            host_bounds = widened.bounds
        else:  # the inner loop stays a loop of each work-item
            t = None
    if t is None:
        t = _translation(parfor, typemap, calltypes, location)
    main, body = Builder(location=location), t.b
    t.shared_updates = find_shared_updates(t)
    read_hyperplanes = check_loop_carried(t)
    bounds = loop_bounds(t)
    reductions = reduction_args(t)
    if reductions:
        flat = Value("%iv0", INDEX)
        indices = [Value(f"%ix{k}", INDEX) for k in range(len(bounds))] if len(bounds) > 1 else []
        accumulators = translate_reduction_body(t, flat, indices, bounds, reductions)
        body_args = [flat] + indices + accumulators
        results = f" -> ({', '.join(r.dtype.mlir for r in reductions)})"
    else:
        ndim = 1 + len(kernel_nest(bounds)[1])
        body_args = [Value(f"%iv{axis}", INDEX) for axis in range(ndim)]
        _translate_map_body(t, body_args, bounds)
        results = ""
    # the body may have added arguments (get_num_threads)
    operands = [(ssa, p.mlir_type) for ssa, p in t.args]
    t.b = main
    declarations, partial_count = [], 0
    if reductions:
        layout = reduction_layout(target)
        declarations = reduction_loop(main, f"{name}_body", operands, bounds, reductions,
                                      layout, _inner_strides(t))
        partial_count = layout.partial_count
        ndim = 1 if layout.group_size else 2  # work-groups, or chunks x lanes
    else:
        _map_loop(main, f"{name}_body", operands, bounds, _inner_strides(t))
    signature = ", ".join(f"{ssa}: {type}" for ssa, type in operands)
    body_signature = ", ".join([f"{ssa}: {type}" for ssa, type in operands]
                               + [f"{v.name}: {v.type.mlir}" for v in body_args])
    end = located("}", location)
    text = "\n".join([
        "module {", *located_lines(declarations, location, "  "),
        f"  func.func @{name}({signature}) {{", *main.lines,
        f"    {located('return', location)}", f"  {end}",
        f"  func.func private @{name}_body({body_signature}){results} {{",
        *located_lines(t.allocas, location, "    "), *body.lines, f"  {end}", end, ""])
    return ParforKernel(name, text, tuple(p for _, p in t.args), t.arrays, ndim,
                        tuple(dict.fromkeys(r.reduction for r in reductions)),
                        tuple(t.size_checks), partial_count, host_bounds, read_hyperplanes,
                        tuple(t.separate_arrays))


def _translation(parfor: Parfor, typemap: dict, calltypes: dict, location: str) -> Translation:
    """A translation of ``parfor`` with its arguments bound; the body goes in
    its own function (``t.b``), called by the parallel loop."""
    t = Translation(parfor, typemap, calltypes, b=Builder(location=location))
    _bind_params(t)
    return t


def _map_loop(b: Builder, body: str, operands: list[tuple[str, str]],
              bounds: list[tuple[Bound, Bound]], inner_strides: list[str]) -> None:
    """The parallel loop over the iteration space, calling the body at each point.

    Views (``a[1:-1, 1:-1]``) come with their strides as arguments, and an
    innermost stride the device compiler cannot see makes it gather and
    scatter element by element. When every view's innermost stride
    (``inner_strides``) is 1, as for slices of rows, the body is called with
    the constant 1 in their place, so that its copy inlined there reads and
    writes neighbouring elements in neighbouring work-items. The gpu stage
    makes a kernel of each version, and the host launches the one the
    strides call for (passes/unswitch.py)."""
    folded, rest = kernel_nest(bounds)
    if len(folded) > 1:  # the folded outer loops count their points from 0
        lower, upper = [b.index_constant(0)], [iteration_count(b, folded)]
    else:
        lower, upper = [bound_value(b, folded[0][0])], [bound_value(b, folded[0][1])]
    lower += [bound_value(b, low) for low, _ in rest]
    upper += [bound_value(b, high) for _, high in rest]
    types = [type for _, type in operands] + ["index"] * len(lower)

    def call(ivs: list[Value], replaced: dict[str, str]) -> None:
        arguments = [replaced.get(name, name) for name, _ in operands] + [iv.name for iv in ivs]
        b.emit(f"func.call @{body}({', '.join(arguments)}) : ({', '.join(types)}) -> ()")

    with scf.parallel(b, lower, upper) as ivs:
        by_inner_strides(b, inner_strides, lambda replaced: call(ivs, replaced))


def _inner_strides(t: Translation) -> list[str]:
    """The arguments that hold the innermost stride of an array view."""
    return [ssa for ssa, param in t.args
            if param.kind == "stride" and param.axis == t.typemap[param.var].ndim - 1]


def kernel_name(function_name: str, ordinal: int) -> str:
    """A symbol for the ordinal-th parfor of a function (never the process-wide
    Parfor.id, which would make the same code hash differently)."""
    base = re.sub(r"\W", "_", function_name.split(".")[-1]) or "fn"
    return f"{base}_parfor{ordinal}"
