"""An inner loop of a parfor body made another level of the parfor's loop nest.

``for i in prange(n): for j in range(m): out[i, j] = f(i, j)`` is n work-items
each running m iterations: a few thousand long threads where a GPU wants one
per (i, j). When the body is scalar statements (the prefix, recomputed by
every work-item) then one counted loop ``for j in range(start, stop)`` and
nothing after it, the loop becomes a parallel dimension of its own, provided:

- its bounds are the same in every iteration of the parfor: values from
  outside the body, or the prefix's integer arithmetic of them (an array's
  shape), which the host then computes once, before the launch;
- its iterations are independent: the loop is left only through its header
  (no ``break``), no scalar it assigns is read before it assigns it in the
  same iteration (a running sum, a value carried to the next ``j``), and
  nothing after the loop reads its scalars; the arrays the body writes and
  reads are left to parfor_dependences.iterations_independent, asked of the
  widened nest once the body is translated.

Whether a device gains from the extra dimension is its Target's decision
(``Target.parallel_inner_loops``), never this module's.
"""

from __future__ import annotations

import copy
import operator
from dataclasses import dataclass

from numba.core import ir, types
from numba.core.analysis import compute_use_defs
from numba.parfors.parfor import LoopNest, Parfor

# what a prefix statement may compute: scalars, with no effect
_PREFIX_EXPRESSIONS = {"binop", "unary", "getattr", "static_getitem", "getitem", "build_tuple"}
_BOUND_OPERATORS = {operator.add, operator.sub, operator.mul, operator.floordiv}


@dataclass(frozen=True)
class WidenedParfor:
    """A copy of a parfor whose inner loop is the last level of its nest."""

    parfor: Parfor
    # the statements computing the inner loop's bounds, which the host runs
    # before the launch (the copy's body no longer does)
    bounds: tuple[ir.Assign, ...]


def widened_parfor(parfor: Parfor, typemap: dict) -> WidenedParfor | None:
    """``parfor`` with its body's inner loop as another parallel level, when
    its shape allows it (see the module's docstring), else None."""
    # a reduction, or a variable read after the loop (its last value, which
    # a prefix recomputed by every (i, j) would overwrite), keeps the nest
    if parfor.redvars or parfor.races or any(isinstance(stmt, Parfor)
                             for block in parfor.loop_body.values() for stmt in block.body):
        return None
    blocks = parfor.loop_body
    entry = blocks[min(blocks)]
    loop = _counted_loop(entry, blocks, typemap)
    if loop is None:
        return None
    loop_blocks = _loop_blocks(blocks, loop.body, loop.header)
    if loop_blocks is None or set(blocks) != {min(blocks), loop.header, loop.exit, *loop_blocks} \
            or not _only_deletions(blocks[loop.exit], blocks):
        return None
    if _carried_scalars(blocks, loop_blocks, loop.body):
        return None
    iterating = {id(stmt) for stmt in loop.iterator}
    prefix = [stmt for stmt in entry.body[:-1] if id(stmt) not in iterating]
    if not all(_is_scalar_statement(stmt, typemap) for stmt in prefix):
        return None
    assigned: dict[str, ir.Assign | None] = {}  # None: assigned more than once
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                name = stmt.target.name
                assigned[name] = None if name in assigned else stmt
    own = {nest.index_variable.name for nest in parfor.loop_nests}
    hoisted: dict[str, ir.Assign] = {}
    for bound in (loop.start, loop.stop):
        if isinstance(bound, ir.Var) and not _host_computable(bound, assigned, prefix, own,
                                                              typemap, hoisted):
            return None
    on_host = {id(stmt) for stmt in hoisted.values()}
    widened = copy.copy(parfor)
    widened._kws = dict(parfor._kws)  # an ir.Expr keeps its attributes there, shared by copy.copy
    widened.loop_nests = [*parfor.loop_nests, LoopNest(loop.index, loop.start, loop.stop, 1)]
    widened.loop_body = _without_loop(blocks, min(blocks), loop, loop_blocks,
                                      [stmt for stmt in prefix if id(stmt) not in on_host])
    used = {var.name for block in widened.loop_body.values() for stmt in block.body
            for var in stmt.list_vars()}
    widened.params = set(parfor.params) | (set(hoisted) & used)
    return WidenedParfor(widened, tuple(stmt for stmt in prefix if id(stmt) in on_host))


@dataclass(frozen=True)
class _CountedLoop:
    """``for index in range(start, stop)``, as Numba's blocks have it."""

    header: int  # the block that steps the iterator and branches
    index: ir.Var
    iterator: tuple[ir.Assign, ...]  # the statements making the range and its iterator
    start: ir.Var | int
    stop: ir.Var
    body: int  # the first block of an iteration
    exit: int  # the block after the loop


def _counted_loop(entry: ir.Block, blocks: dict[int, ir.Block],
                  typemap: dict) -> _CountedLoop | None:
    """The loop ``entry`` jumps to, when it is ``for j in range(...)``."""
    if not isinstance(entry.terminator, ir.Jump) or entry.terminator.target not in blocks:
        return None
    header = entry.terminator.target
    stmts = [stmt for stmt in blocks[header].body if not isinstance(stmt, ir.Del)]
    if len(stmts) != 4 or not all(isinstance(stmt, ir.Assign) for stmt in stmts[:3]) \
            or not isinstance(stmts[3], ir.Branch):
        return None
    step, first, second, branch = stmts
    if not (all(isinstance(stmt.value, ir.Expr) for stmt in (step, first, second))
            and step.value.op == "iternext"
            and first.value.op == "pair_first" and second.value.op == "pair_second"
            and branch.cond.name == second.target.name
            and isinstance(typemap[first.target.name], types.Integer)):
        return None
    definitions = {stmt.target.name: stmt for stmt in entry.body if isinstance(stmt, ir.Assign)}
    getiter = definitions.get(step.value.value.name)
    call = definitions.get(getiter.value.value.name) if (
        getiter is not None and isinstance(getiter.value, ir.Expr)
        and getiter.value.op == "getiter") else None
    if call is None or not (isinstance(call.value, ir.Expr) and call.value.op == "call"
                            and getattr(typemap[call.value.func.name], "typing_key", None)
                            is range and not call.value.kws and call.value.vararg is None
                            and len(call.value.args) in (1, 2)):
        return None
    args = call.value.args
    start, stop = (0, args[0]) if len(args) == 1 else (args[0], args[1])
    return _CountedLoop(header, first.target, (getiter, call), start, stop, branch.truebr,
                        branch.falsebr)


def _successors(block: ir.Block) -> list[int]:
    term = block.terminator if block.is_terminated else None
    if isinstance(term, ir.Jump):
        return [term.target]
    if isinstance(term, ir.Branch):
        return [term.truebr, term.falsebr]
    return []


def _loop_blocks(blocks: dict[int, ir.Block], body: int, header: int) -> set[int] | None:
    """The blocks the loop's body reaches before it returns to ``header``;
    None when one leaves the loop otherwise (a ``break``, the body's end)."""
    found, pending = set(), [body]
    while pending:
        label = pending.pop()
        if label == header or label in found:
            continue
        if label not in blocks or not blocks[label].is_terminated or \
                not isinstance(blocks[label].terminator, (ir.Jump, ir.Branch)):
            return None
        found.add(label)
        pending += _successors(blocks[label])
    return found


def _only_deletions(block: ir.Block, blocks: dict[int, ir.Block]) -> bool:
    """Whether ``block`` ends the body doing nothing (what follows the loop)."""
    return all(isinstance(stmt, (ir.Del, ir.Jump)) for stmt in block.body) and \
        all(label not in blocks for label in _successors(block))


def _carried_scalars(blocks: dict[int, ir.Block], loop_blocks: set[int], body: int) -> set[str]:
    """Variables the loop assigns that an iteration reads before assigning
    them: what one iteration carries to the next."""
    loop = {label: blocks[label] for label in loop_blocks}
    usedefs = compute_use_defs(loop)
    live_in = {label: set(usedefs.usemap[label]) for label in loop}
    changed = True
    while changed:  # liveness within one iteration: returning to the header ends it
        changed = False
        for label in loop:
            live_out = set().union(*(live_in[s] for s in _successors(loop[label]) if s in loop))
            new = usedefs.usemap[label] | (live_out - usedefs.defmap[label])
            if new != live_in[label]:
                live_in[label], changed = new, True
    assigned = set().union(*usedefs.defmap.values())
    return live_in[body] & assigned


def _is_scalar_statement(stmt: ir.Stmt, typemap: dict) -> bool:
    """Whether ``stmt`` of the prefix only computes a scalar (no store, no
    call, no array), so that every work-item may compute it again."""
    if isinstance(stmt, ir.Del):
        return True
    if not isinstance(stmt, ir.Assign) or isinstance(typemap[stmt.target.name], types.Array):
        return False
    value = stmt.value
    return isinstance(value, (ir.Const, ir.Var, ir.Global, ir.FreeVar)) or (
        isinstance(value, ir.Expr) and value.op in _PREFIX_EXPRESSIONS)


def _host_computable(var: ir.Var, assigned: dict[str, ir.Assign | None], prefix: list[ir.Stmt],
                     own: set[str], typemap: dict, hoisted: dict[str, ir.Assign]) -> bool:
    """Whether ``var`` is the same in every iteration and the host can compute
    it: a value from outside the body, or the prefix's integer arithmetic of
    such values; the prefix's statements it needs are added to ``hoisted``."""
    if var.name in own or isinstance(typemap[var.name], types.Array):
        return False
    if var.name not in assigned or var.name in hoisted:
        return True
    stmt = assigned[var.name]
    if stmt is None or not any(stmt is s for s in prefix) or \
            not isinstance(typemap[var.name], (types.Integer, types.UniTuple)):
        return False
    value = stmt.value
    if isinstance(value, ir.Expr) and value.op == "getattr":
        # the shape of an array from outside the body
        if value.attr != "shape" or value.value.name in assigned:
            return False
        operands = []
    elif isinstance(value, ir.Expr) and (value.op == "static_getitem" or (
            value.op == "binop" and value.fn in _BOUND_OPERATORS)):
        operands = value.list_vars()
    elif isinstance(value, ir.Var):
        operands = [value]
    elif isinstance(value, ir.Const):
        operands = []
    else:
        return False
    if not all(_host_computable(v, assigned, prefix, own, typemap, hoisted) for v in operands):
        return False
    hoisted[var.name] = stmt
    return True


def _without_loop(blocks: dict[int, ir.Block], entry: int, loop: _CountedLoop,
                  loop_blocks: set[int], prefix: list[ir.Stmt]) -> dict[int, ir.Block]:
    """The body run once per point of the widened nest: the prefix, then one
    iteration of the loop's body, whose returns to the header end it."""
    header, body, exit = loop.header, loop.body, loop.exit

    def retargeted(label: int) -> int:
        return exit if label == header else label

    new_entry = ir.Block(blocks[entry].scope, blocks[entry].loc)
    new_entry.body = [*prefix, ir.Jump(body, blocks[entry].terminator.loc)]
    result = {entry: new_entry, exit: blocks[exit]}
    for label in loop_blocks:
        block = blocks[label]
        term = block.terminator
        if header not in _successors(block):
            result[label] = block
            continue
        copied = ir.Block(block.scope, block.loc)
        if isinstance(term, ir.Jump):
            new_term = ir.Jump(retargeted(term.target), term.loc)
        else:
            new_term = ir.Branch(term.cond, retargeted(term.truebr), retargeted(term.falsebr),
                                 term.loc)
        copied.body = [*block.body[:-1], new_term]
        result[label] = copied
    return result
