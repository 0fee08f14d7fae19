"""Element updates in a parfor body that several iterations may make at once.

``for i in prange(n): h[idx[i]] += w[i]`` updates one element from many
iterations: as plain loads and stores, the work-items running at once lose
each other's updates (Numba's threads and numba-dpex do). Here each
``a[k] = f(a[k], x)``, f being ``+``, ``-``, ``*``, ``min``, ``max``,
``np.minimum`` or ``np.maximum``, whose index ``k`` does not hold every index
of the parfor's loop nest, is found for the setitem rule to make atomic
(``rules/arrays.py``). One at the iteration's own element (``h[i] += x[i]``,
``h[i, j] += ...`` inside a serial ``j`` loop) stays a plain store.

What cannot be made atomic is refused, naming the line: a read-modify-write
of a shared element in any other form, the element's old or new value used
besides the update, and any other read or write of an array that such
updates change (it would read elements while other work-items change them).
"""

from __future__ import annotations

import builtins
import operator

import numpy as np
from numba.core import ir
from numba.parfors.parfor import Parfor

from ..errors import UnsupportedError
from .translation import SharedUpdate, Translation, described, index_of, where

# the callees of an update ``a[k] = f(a[k], x)``
_UPDATE_OPERATORS = {operator.add, operator.iadd, operator.sub, operator.isub, operator.mul,
                     operator.imul}
_UPDATE_CALLEES = {builtins.min, builtins.max, np.minimum, np.maximum}


def _statements(parfor: Parfor) -> list[tuple[ir.Stmt, ir.Block]]:
    """The statements of ``parfor``'s body, of the parfors nested in it too
    (serial loops in its work-items), with their blocks."""
    found = []
    blocks = list(parfor.loop_body.values())
    while blocks:
        block = blocks.pop()
        for stmt in block.body:
            if isinstance(stmt, Parfor):
                blocks += [stmt.init_block, *stmt.loop_body.values()]
            found.append((stmt, block))
    return found


def find_shared_updates(t: Translation) -> dict[ir.Stmt, SharedUpdate]:
    """The setitems of ``t``'s parfor that update an element several
    iterations may share, each with what the update combines; every update of
    an array that has one is among them (``h[i] += 1`` beside ``h[idx[i]] += 1``
    too), so that no plain store races with an atomic one."""
    statements = _statements(t.parfor)
    own = {nest.index_variable.name for nest in t.parfor.loop_nests}
    updates: dict[ir.Stmt, SharedUpdate] = {}
    shared_arrays: dict[str, ir.Stmt] = {}
    for stmt, block in statements:
        if not isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            continue
        array = _root(t, stmt.target).name
        if array not in t.arrays:  # made in the body: the work-item's own
            continue
        update = _update(t, stmt, block)
        shared = not own <= _index_names(t, stmt)
        if update is None:
            if shared and _reads_element(t, stmt.value, stmt, set()):
                raise UnsupportedError(
                    f"{where(stmt.loc)}: {described(stmt.target)} read and written at an index "
                    "that several iterations may share: only updates with +=, -=, *=, min "
                    "and max can be made atomic")
            continue
        updates[stmt] = update
        if shared:
            shared_arrays.setdefault(array, stmt)
    updates = {stmt: u for stmt, u in updates.items()
               if _root(t, stmt.target).name in shared_arrays}
    _check_no_other_use(t, statements, updates, shared_arrays)
    return updates


def _check_no_other_use(t: Translation, statements: list[tuple[ir.Stmt, ir.Block]],
                        updates: dict[ir.Stmt, SharedUpdate],
                        shared_arrays: dict[str, ir.Stmt]) -> None:
    """Refuse a use of an array updated atomically, or of an update's old or
    new value, anywhere but in its update."""
    reads = {u.read.name: stmt for stmt, u in updates.items()}
    results = {u.result.name: stmt for stmt, u in updates.items()}
    for stmt, _ in statements:
        if isinstance(stmt, (ir.Del, Parfor)) or stmt in updates:
            continue
        assigned = stmt.target.name if isinstance(stmt, ir.Assign) else None
        if assigned in reads or _reads_metadata(stmt):  # no other use of the elements
            continue
        for var in stmt.list_vars():
            update = reads.get(var.name) or results.get(var.name)
            if update is not None and assigned != update.value.name:
                raise UnsupportedError(
                    f"{where(stmt.loc)}: the value of {described(update.target)}'s element "
                    f"updated on line {update.loc.line} used besides that update, which is "
                    "atomic (several iterations may update the element at once)")
            first = shared_arrays.get(_root(t, var).name)
            if first is not None:
                raise UnsupportedError(
                    f"{where(stmt.loc)}: {described(var)} used here and updated on line "
                    f"{first.loc.line} at an index that several iterations may share: "
                    "an array updated atomically can be used in the loop only by such "
                    "updates (+=, -=, *=, min, max)")


def _reads_metadata(stmt: ir.Stmt) -> bool:
    """Whether ``stmt`` reads an array's metadata (``h.shape``), no element."""
    return (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
            and stmt.value.op == "getattr" and stmt.value.attr in _METADATA)


_METADATA = {"shape", "size", "ndim", "strides", "dtype", "itemsize"}


def _root(t: Translation, var: ir.Var) -> ir.Var:
    """The variable ``var`` is a copy of (``h`` for ``h2 = h``), or ``var``."""
    definition = t.definition(var)
    return _root(t, definition) if isinstance(definition, ir.Var) else var


def _index_names(t: Translation, stmt: ir.SetItem | ir.StaticSetItem) -> set[str]:
    """The variables an index is made of, each followed to what it copies."""
    index = index_of(stmt)
    if not isinstance(index, ir.Var):
        return set()
    definition = t.definition(_root(t, index))
    items = definition.items if (isinstance(definition, ir.Expr)
                                 and definition.op == "build_tuple") else [index]
    return {_root(t, item).name for item in items}


def _update(t: Translation, stmt: ir.SetItem | ir.StaticSetItem,
            block: ir.Block) -> SharedUpdate | None:
    """The update ``stmt`` makes, when it stores ``f(a[k], x)`` computed in its
    block from a read of the element it stores to."""
    combine = t.definition(stmt.value)
    if not isinstance(combine, ir.Expr) or not _assigned_in(stmt.value, block):
        return None
    if combine.op in ("binop", "inplace_binop") and combine.fn in _UPDATE_OPERATORS:
        operands = [combine.lhs, combine.rhs]
    elif combine.op == "call" and len(combine.args) == 2 and not combine.kws \
            and getattr(t.typemap[combine.func.name], "typing_key", None) in _UPDATE_CALLEES:
        operands = list(combine.args)
    else:
        return None
    for operand in operands:
        if _assigned_in(operand, block) and _reads_same_element(t, operand, stmt):
            return SharedUpdate(operand, stmt.value, combine)
    return None


def _assigned_in(var: ir.Var, block: ir.Block) -> bool:
    return any(isinstance(s, ir.Assign) and s.target.name == var.name for s in block.body)


def _reads_same_element(t: Translation, var: ir.Var, stmt: ir.SetItem | ir.StaticSetItem) -> bool:
    """Whether ``var`` is assigned a read of the element ``stmt`` stores to."""
    read = t.definition(var)
    return (isinstance(read, ir.Expr) and read.op in ("getitem", "static_getitem")
            and _root(t, read.value).name == _root(t, stmt.target).name
            and _same_index(t, index_of(read), index_of(stmt)))


def _reads_element(t: Translation, var: ir.Var, stmt: ir.SetItem | ir.StaticSetItem,
                   seen: set[str]) -> bool:
    """Whether ``var``'s value is computed from a read of the element ``stmt``
    stores to (through the expressions that compute it in the body)."""
    if var.name in seen:
        return False
    seen.add(var.name)
    if _reads_same_element(t, var, stmt):
        return True
    definition = t.definition(var)
    return isinstance(definition, ir.Expr) and any(
        _reads_element(t, operand, stmt, seen) for operand in definition.list_vars())


def _same_index(t: Translation, first: object, second: object) -> bool:
    """Whether two indices are the same value: one variable, equal constants,
    or expressions of the same op on the same values (``idx[i]`` computed
    twice, as ``h[idx[i]] = max(h[idx[i]], v)`` does)."""
    if not (isinstance(first, ir.Var) and isinstance(second, ir.Var)):
        return first == second
    first, second = _root(t, first), _root(t, second)
    if first.name == second.name:
        return True
    one, other = t.definition(first), t.definition(second)
    if isinstance(one, ir.Const) and isinstance(other, ir.Const):
        return one.value == other.value
    if not (isinstance(one, ir.Expr) and isinstance(other, ir.Expr) and one.op == other.op
            and one.op in ("getitem", "static_getitem", "build_tuple", "binop", "cast")):
        return False
    constants = {"binop": ("fn",), "static_getitem": ("index",)}.get(one.op, ())
    one_vars, other_vars = one.list_vars(), other.list_vars()
    return (all(getattr(one, k) == getattr(other, k) for k in constants)
            and len(one_vars) == len(other_vars)
            and all(_same_index(t, a, b) for a, b in zip(one_vars, other_vars)))
