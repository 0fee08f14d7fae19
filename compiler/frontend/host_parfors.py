"""Tiny parfors stay on the host: the cost model (SPEC rule 13).

Where every array a parfor touches can be read by the host (NumPy arrays, USM
arrays of kind shared or host), its lowering asks the runtime at each run
(``xpuc_parfor_on_host``) whether the loop is cheaper on the host than one
launch on the call's device, and then runs Numba's own sequential lowering of
the parfor instead of the kernel. The kernel is still translated and compiled
first, so what cannot be offloaded is refused whatever the size: this is a
cost model, never a fallback.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable

from llvmlite import ir as llvm
from numba.core import analysis, cgutils, ir, ir_utils, postproc, types
from numba.core.analysis import compute_cfg_from_blocks
from numba.parfors.parfor import (
    Parfor,
    _lower_parfor_sequential_block,
    unwrap_parfor_blocks,
    wrap_parfor_blocks,
)

from .host_access import HostAccess
from .numpy_functions import host_code_only
from .runtime_calls import I32, I64, call_runtime
from .slice_assignments import read_as_if_copied
from .translation import ArrayUse
from .usm import DeviceUSMArray, USMArray

# What one iteration of a parfor's body costs on the host, estimated from its
# statements: a plain statement (arithmetic, an element load or store) about a
# nanosecond, a call (a math function, a NumPy routine) tens of them, and a
# loop inside the body is taken to run INNER_LOOP_TRIPS times. The runtime
# compares the whole loop's cost with one launch (microseconds), and the
# threshold only has to be right within a factor of a few: a parfor that size
# gains or loses little on either side of it, so counting statements is enough.
NS_PER_STATEMENT = 1
NS_PER_CALL = 20
INNER_LOOP_TRIPS = 16


def can_run_on_host(parfor: Parfor, typemap: dict, calltypes: dict) -> bool:
    """Whether the host may run ``parfor`` as Numba's sequential loop: it can
    read every array the parfor uses (none is a usm_type="device" array), no
    loop of it is a 1-D ``pndindex``, whose body's calls take the index as
    a 1-tuple while the loop gives an integer (Numba's own threads type the
    body again; its sequential lowering does not), and its body calls none
    of the overloads xpuc inlines in host code only (``np.sum(x, axis=k)``
    of a USM array, which the body computes where read)."""
    loops = (parfor, *_nested_parfors(parfor))
    one_d_pndindex = any(
        len(p.loop_nests) == 1 and any(pattern[:2] == ("prange", "pndindex")
                                       for pattern in p.patterns if isinstance(pattern, tuple))
        for p in loops)
    calls = [stmt.value for p in loops for block in p.loop_body.values()
             for stmt in block.find_insts(ir.Assign)
             if isinstance(stmt.value, ir.Expr) and stmt.value.op == "call"]
    return not one_d_pndindex and not any(
        host_code_only(typemap[call.func.name], calltypes[call]) for call in calls) and not any(
        isinstance(typemap.get(var.name), DeviceUSMArray) for var in parfor.list_vars())


def iteration_cost(parfor: Parfor) -> int:
    """Estimated nanoseconds of one iteration of ``parfor``'s innermost loop
    nest on the host (at least 1)."""
    blocks = wrap_parfor_blocks(parfor)
    try:
        cfg = compute_cfg_from_blocks(blocks)
        # every body block is in the parfor's own loop, which the trip count covers
        depth = {label: sum(label in loop.body for loop in cfg.loops().values()) - 1
                 for label in parfor.loop_body}
    finally:
        unwrap_parfor_blocks(parfor)
    cost = sum(_statement_cost(stmt) * INNER_LOOP_TRIPS ** max(depth[label], 0)
               for label, block in parfor.loop_body.items() for stmt in block.body)
    return max(cost, 1)


def _statement_cost(stmt: ir.Stmt) -> int:
    if isinstance(stmt, Parfor):
        return iteration_cost(stmt) * INNER_LOOP_TRIPS ** len(stmt.loop_nests)
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        return NS_PER_STATEMENT
    if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
        return NS_PER_CALL if stmt.value.op == "call" else NS_PER_STATEMENT
    return 0  # names, constants, globals, dels and jumps compile to next to nothing


def sequential_copy(parfor: Parfor, calltypes: dict) -> Parfor:
    """A copy of ``parfor``'s loops and body, for Numba's sequential lowering
    (which edits what it lowers). Its init block is empty: the original's is
    lowered once, before the choice. The copy's calls keep their types."""
    # a nested parfor's array analysis, which lowering does not read, holds
    # the typemap and through it modules: shared, not copied
    memo: dict[int, object] = {id(nested.equiv_set): nested.equiv_set
                               for nested in _nested_parfors(parfor)}
    twin = copy.copy(parfor)
    twin._kws = dict(parfor._kws)  # an ir.Expr keeps its attributes there, shared by copy.copy
    twin.loop_body = copy.deepcopy(parfor.loop_body, memo)
    twin.loop_nests = copy.deepcopy(parfor.loop_nests, memo)
    twin.init_block = ir.Block(parfor.init_block.scope, parfor.init_block.loc)
    for node, sig in list(calltypes.items()):
        copied = memo.get(id(node))
        if copied is not None:
            calltypes[copied] = sig
    return twin


def _stage_reads(blocks: dict[int, ir.Block], typemap: dict, calltypes: dict,
                 typingctx) -> None:
    """In each loop Numba made in ``blocks`` (a body's slice store or array
    expression) that stores into one array, read a copy of each array from
    outside it that may share that array's memory (``read_as_if_copied``):
    NumPy reads the right side as if before the store, where Numba's
    sequential loop would read elements it has written (``row[1:] =
    row[:-1]``); the kernel orders its loop instead (rules/view_order.py).
    A prange the user nested is left as written."""
    function_type = typingctx.resolve_value_type(read_as_if_copied)
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, Parfor):
                _stage_reads(stmt.loop_body, typemap, calltypes, typingctx)
                if not any(isinstance(pattern, tuple) and pattern[0] == "prange"
                           or pattern == "prange" for pattern in stmt.patterns):
                    _stage(stmt, typemap, calltypes, typingctx, function_type)


def _stage(loop: Parfor, typemap: dict, calltypes: dict, typingctx,
           function_type: types.Type) -> None:
    """Where ``loop`` stores into one array from outside it, end its init
    block with the copies of the arrays from outside it that it reads, and
    read those."""
    statements = [stmt for block in loop.loop_body.values() for stmt in block.body]
    defined = {stmt.target.name for stmt in statements if isinstance(stmt, ir.Assign)}
    stored = {stmt.target.name: stmt.target for stmt in statements
              if isinstance(stmt, (ir.SetItem, ir.StaticSetItem))
              and stmt.target.name not in defined}
    if len(stored) != 1:
        return
    (target,) = stored.values()
    reads = [stmt.value for stmt in statements if isinstance(stmt, ir.Assign)
             and isinstance(stmt.value, ir.Expr)
             and stmt.value.op in ("getitem", "static_getitem")
             and stmt.value.value.name not in defined | {target.name}
             and isinstance(typemap[stmt.value.value.name], types.Array)]
    copies: dict[str, ir.Var] = {}
    for read in reads:
        array = read.value
        if array.name not in copies:
            array_type = typemap[array.name]
            callee = ir.Var(array.scope, ir_utils.mk_unique_var("$read_as_if_copied"), loop.loc)
            staged = ir.Var(array.scope, ir_utils.mk_unique_var("$staged"), loop.loc)
            typemap[callee.name], typemap[staged.name] = function_type, array_type
            call = ir.Expr.call(callee, (target, array), (), loop.loc)
            calltypes[call] = typingctx.resolve_function_type(
                function_type, (typemap[target.name], array_type), {})
            loop.init_block.body += [
                ir.Assign(ir.Global("read_as_if_copied", read_as_if_copied, loop.loc), callee,
                          loop.loc),
                ir.Assign(call, staged, loop.loc)]
            copies[array.name] = staged
        read.value = copies[array.name]


def _nested_parfors(parfor: Parfor) -> list[Parfor]:
    found = []
    for block in parfor.loop_body.values():
        for stmt in block.body:
            if isinstance(stmt, Parfor):
                found += [stmt, *_nested_parfors(stmt)]
    return found


def trip_count(lowerer, parfor: Parfor) -> llvm.Value:
    """The i64 number of iterations of ``parfor``'s loop nests (their steps
    are 1: translation refuses others)."""
    b, context = lowerer.builder, lowerer.context
    typemap = lowerer.fndesc.typemap

    def bound(value: ir.Var | int) -> llvm.Value:
        if isinstance(value, int):
            return I64(value)
        return context.cast(b, lowerer.loadvar(value.name), typemap[value.name], types.int64)

    trips = I64(1)
    for nest in parfor.loop_nests:
        extent = b.sub(bound(nest.stop), bound(nest.start))
        negative = b.icmp_signed("<", extent, I64(0))
        trips = b.mul(trips, b.select(negative, I64(0), extent))
    return trips


def lower_with_host_choice(lowerer, parfor: Parfor, twin: Parfor, kernel_name: str,
                           arrays: Iterable[ArrayUse], launch: Callable[[], None]) -> None:
    """Lower ``parfor`` (its init block already lowered) as a choice made at
    run time: ``twin``, its sequential copy, on the host where the runtime's
    cost model says so, else ``launch()``. ``arrays``: the kernel's uses of
    arrays, whose NumPy arrays are synced with the runtime before the host
    runs. Both branches may assign the same variables: ParforLower keeps
    every variable in a stack slot (it turns Numba's SSA shortcut off), so
    either branch's value reaches the code after them."""
    b = lowerer.builder
    on_host = cgutils.alloca_once(b, I32)
    name = lowerer.context.insert_const_string(b.module, kernel_name)
    call_runtime(lowerer.context, b, "xpuc_parfor_on_host", name, trip_count(lowerer, parfor),
                 I64(iteration_cost(parfor)), on_host)
    host, device = b.append_basic_block("parfor.host"), b.append_basic_block("parfor.device")
    done = b.append_basic_block("parfor.done")
    b.cbranch(b.icmp_signed("!=", b.load(on_host), I32(0)), host, device)

    b.position_at_end(device)
    launch()
    b.branch(done)

    b.position_at_end(host)
    typemap = lowerer.fndesc.typemap
    for use in arrays:
        # the copying path keeps kernels' writes on the device until host code
        # reads them, and the host's writes must reach the next kernel
        if not isinstance(typemap[use.var], USMArray):
            array = ir.Var(parfor.init_block.scope, use.var, parfor.loc)
            lowerer.lower_inst(HostAccess(array, use.writes, parfor.loc))
    _lower_sequentially(lowerer, twin, done)
    b.position_at_end(done)


def _lower_sequentially(lowerer, twin: Parfor, done: llvm.Block) -> None:
    """Lower ``twin`` as Numba's plain loops into the current function, from
    the builder's block to ``done``."""
    fndesc = lowerer.fndesc
    ir_utils._the_max_label.update(max(lowerer.blkmap))
    # the entry the least label: Numba's control flow analyses start there
    entry = ir_utils.next_label()
    twin.loop_body = ir_utils.add_offset_to_labels(twin.loop_body,
                                                   ir_utils._the_max_label.next())
    ir_utils._the_max_label.update(ir_utils.find_max_label(twin.loop_body))
    scope = twin.init_block.scope
    _stage_reads(twin.loop_body, fndesc.typemap, fndesc.calltypes,
                 lowerer.context.typing_context)
    holder = ir.Block(scope, twin.loc)
    holder.body = [twin]
    blocks: dict[int, ir.Block] = {}
    after, _ = _lower_parfor_sequential_block(entry, holder, blocks, fndesc.typemap,
                                              fndesc.calltypes, False, scope)
    # the loops' exit, which deletes what the last iteration left, then
    # branches to ``done``; for the analysis it jumps to itself, a block that
    # uses nothing: none of the twin's own variables lives past it
    blocks[after] = ir.Block(scope, twin.loc)
    blocks[after].append(ir.Jump(after, twin.loc))
    _insert_dels(blocks, _own_variables(blocks, twin))
    exit_label = ir_utils.next_label()
    blocks[after].body[-1] = ir.Jump(exit_label, twin.loc)
    for label in blocks:
        lowerer.blkmap[label] = lowerer.function.append_basic_block(f"B{label}")
    lowerer.blkmap[exit_label] = done
    lowerer.builder.branch(lowerer.blkmap[entry])
    for label, block in sorted(blocks.items()):
        lowerer.builder.position_at_end(lowerer.blkmap[label])
        lowerer.lower_block(block)


def _own_variables(blocks: dict[int, ir.Block], twin: Parfor) -> set[str]:
    """The variables the twin's loops define, but its reduction variables and
    those assigned in it and read after it (its races: the function reads
    their last value; deleted here, it read the value before the loop) and
    loop indices (Numba's neither)."""
    defined = set().union(*analysis.compute_use_defs(blocks).defmap.values())
    return (defined - set(twin.redvars) - twin.races
            - {nest.index_variable.name for nest in twin.loop_nests})


def _insert_dels(blocks: dict[int, ir.Block], variables: set[str]) -> None:
    """Insert an ``ir.Del`` of each of ``variables`` after its last use in
    ``blocks``. Numba deletes a parfor body's variables in the function it
    compiles the body into (a gufunc), never in the function holding the
    parfor, whose dels were placed before lowering: without these, an array
    a body makes (an array expression's result on USM, a view's reference to
    its base) would be freed only by the next iteration's store, the last
    one never."""
    cfg = compute_cfg_from_blocks(blocks)
    uses, defs = analysis.compute_use_defs(blocks)
    live = analysis.compute_live_map(cfg, blocks, uses, defs)
    dead = analysis.compute_dead_maps(cfg, blocks, live, defs)
    internal = {label: dead.internal[label] & variables for label in blocks}
    escaping = {label: dead.escaping[label] & variables for label in blocks}
    # as Numba's parfor_insert_dels does; the twin holds no dels yet (the
    # function's dels in a parfor body are of variables dead after the parfor,
    # live throughout its loop), which _patch_var_dels would drop
    postproc.PostProcessor(_BlocksOnly(blocks))._patch_var_dels(internal, escaping)


class _BlocksOnly:
    """What ``PostProcessor._patch_var_dels`` reads of a function's IR."""

    def __init__(self, blocks: dict[int, ir.Block]) -> None:
        self.blocks = blocks
