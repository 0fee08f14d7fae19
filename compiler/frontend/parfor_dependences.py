"""Arrays a parfor body reads where other iterations write (a loop-carried
dependence, which a prange must not have).

dpbench's cholesky, ``for j in prange(i): A[i, j] -= np.dot(A[i, :j], A[j, :j])``,
reads in iteration j the elements ``A[i, :j]`` that iterations before it
write: its answer depends on the order the work-items run in, and is wrong
under Numba's threads as on a device. An array from outside the loop that
the body both writes (a store, a slice store) and reads (an element, a view
passed on, the whole array) is refused, unless every access to it is owned
by the iteration: at one dimension, every access's index item is one value
that is the iteration's own (parfor_updates.IterationOwnership: the loop's
index, copies followed, or a serial loop's variable over ranges disjoint
across iterations, as dbscan's), so that iterations touch disjoint
hyperplanes (``a[i] = a[i] * 2``, ``A[i, k + 1] = A[i, k]`` in a serial k
loop, whole rows ``A[i, :]``). In a nest of parallel loops, each of their
indices must own a dimension so: iterations that differ in any one of them
then touch disjoint elements.

Updates made atomic (``h[idx[i]] += w[i]``, parfor_updates.py) and reductions
into arrays (``acc += row``, rules/array_reductions.py) are left to their
rules; stores to an array the body does not read (``a[idx[i]] = x``) stay
allowed, as in Numba.
"""

from __future__ import annotations

from dataclasses import dataclass

from numba.core import ir, types
from numba.parfors import array_analysis
from numba.parfors.parfor import Parfor

from ..errors import UnsupportedError
from .parfor_updates import (
    IterationOwnership,
    OwnedItem,
    body_statements,
    reads_metadata,
    root_variable,
)
from .translation import Translation, index_of, user_names, where

# calls that read an array's shape, no element
_METADATA_CALLS = {len, array_analysis.assert_equiv}


@dataclass(frozen=True)
class _Access:
    """A read or a write of an array from outside the body: where, and the
    items of its index that are the iteration's own, by dimension."""
    loc: ir.Loc
    writes: bool
    owned: frozenset[tuple[int, OwnedItem]]

    def owners(self) -> set[str]:
        """The parfor indices that own one of the access's dimensions."""
        return {item.owner for _, item in self.owned}


def check_loop_carried(t: Translation) -> None:
    """Refuse an array that ``t``'s parfor body writes and reads at elements
    other iterations may touch."""
    conflict = _loop_carried(t, _body_accesses(t))
    if conflict is None:
        return
    array, read, write = conflict
    raise UnsupportedError(
        f"{where(read.loc)}: '{user_names([array])}' read here and written on line "
        f"{write.loc.line} in the same prange at elements that other iterations may "
        "touch (a loop-carried dependence: the result would depend on the order the "
        "iterations run in); every access to an array the loop both reads and writes "
        "must index one dimension by the same item the iteration owns (the loop's index)")


def iterations_independent(t: Translation) -> bool:
    """Whether the iterations of ``t``'s parfor touch disjoint elements of
    every array from outside the body that it writes: each write indexes a
    dimension by an item each index of the nest owns (distinct iterations
    write distinct elements), and no read meets another iteration's write.
    (A loop of a body made a level of the nest, inner_loops.py, asks it of
    the widened nest.)"""
    own = _own_indices(t)
    accesses = _body_accesses(t)
    return all(own <= a.owners() for array, found in accesses.items()
               if array not in t.parfor.redvars for a in found if a.writes) \
        and _loop_carried(t, accesses) is None


def _own_indices(t: Translation) -> set[str]:
    return {nest.index_variable.name for nest in t.parfor.loop_nests}


def _body_accesses(t: Translation) -> dict[str, list[_Access]]:
    """The accesses of ``t``'s parfor body to arrays from outside it, by
    array, but for updates made atomic."""
    ownership = IterationOwnership(t)
    accesses: dict[str, list[_Access]] = {}
    for stmt, _ in body_statements(t.parfor):
        if stmt in t.shared_updates:
            continue
        for array, access in _accesses(t, ownership, stmt):
            accesses.setdefault(array, []).append(access)
    return accesses


def _loop_carried(t: Translation, accesses: dict[str, list[_Access]]
                  ) -> tuple[str, _Access, _Access] | None:
    """An array read and written at elements other iterations may touch, with
    such a read and write, if any."""
    own = _own_indices(t)
    for array, found in accesses.items():
        if array in t.parfor.redvars:  # acc += row: rules/array_reductions.py
            continue
        writes = [a for a in found if a.writes]
        reads = [a for a in found if not a.writes]
        if not writes or not reads:
            continue
        shared = frozenset.intersection(*(a.owned for a in found))
        if own <= {item.owner for _, item in shared}:
            continue
        read = next((a for a in reads if not own <= a.owners()), reads[0])
        write = next((a for a in writes if not own <= a.owners()), writes[0])
        return array, read, write
    return None


def written_arrays(t: Translation) -> set[str]:
    """The arrays from outside the body that ``t``'s parfor body writes (a
    store, a slice store, an in-place operator on a view), and the arrays the
    body makes that it stores into."""
    if t.written is None:
        t.written = {array for stmt, _ in body_statements(t.parfor)
                     if (array := array_written(t, stmt)) is not None}
    return t.written


def array_written(t: Translation, stmt: ir.Stmt) -> str | None:
    """The array ``stmt`` writes (through a view too), if any."""
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        written = stmt.target
    elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
            stmt.value.op == "inplace_binop" and \
            isinstance(t.typemap[stmt.value.lhs.name], types.Array):  # v += x of a view v
        written = stmt.value.lhs
    else:
        return None
    base = _base(t, written)
    return base[0] if base is not None else root_variable(t, written).name


def _accesses(t: Translation, ownership: IterationOwnership,
              stmt: ir.Stmt) -> list[tuple[str, _Access]]:
    """The accesses ``stmt`` makes to arrays from outside the body."""
    if isinstance(stmt, (ir.Del, Parfor)) or reads_metadata(stmt):
        return []
    found = []
    used = stmt.list_vars()
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        base = _base(t, stmt.target)
        if base is not None:
            found.append((base[0], _access(ownership, stmt, base[1], stmt, True)))
        used = [var for var in used if var.name != stmt.target.name]
    elif isinstance(stmt, ir.Assign):
        value = stmt.value
        if isinstance(value, ir.Var):  # a copy: its uses are the accesses
            return []
        if isinstance(value, ir.Expr) and value.op in ("getitem", "static_getitem"):
            base = _base(t, value.value)
            if base is not None:
                if isinstance(t.typemap[stmt.target.name], types.Array):
                    return []  # a view: its uses are the accesses
                found.append((base[0], _access(ownership, value, base[1], stmt, False)))
            used = [var for var in used if var.name != value.value.name]
        if isinstance(value, ir.Expr) and value.op == "call" and \
                getattr(t.typemap[value.func.name], "typing_key", None) in _METADATA_CALLS:
            return []
    for var in used:  # an array passed whole, or a view of one
        base = _base(t, var)
        if base is not None:
            found.append((base[0], _access(ownership, None, base[1], stmt, False)))
    return found


def _access(ownership: IterationOwnership, indexing: object, view: object, stmt: ir.Stmt,
            writes: bool) -> _Access:
    """The access of ``indexing`` (a getitem or a setitem, or None for a use
    of the array as a whole) into the array, or into its view ``view`` (the
    getitem that made it), which then bounds it."""
    bound = view if view is not None else indexing
    items = ownership.items(index_of(bound)) if bound is not None else []
    return _Access(stmt.loc, writes,
                   frozenset((dim, item) for dim, item in enumerate(items) if item is not None))


def _base(t: Translation, var: ir.Var) -> tuple[str, object] | None:
    """``(array, view)`` when ``var`` is an array from outside the body
    (``view`` None) or a view of one, ``view`` then the getitem of the array
    that made the outermost view."""
    root = root_variable(t, var)
    if root.name in t.arrays:
        return root.name, None
    definition = t.definition(root)
    if not (isinstance(definition, ir.Expr) and definition.op in ("getitem", "static_getitem")
            and isinstance(t.typemap.get(root.name), types.Array)):
        return None
    base = _base(t, definition.value)
    if base is None:
        return None
    return base if base[1] is not None else (base[0], definition)
