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

One kind of read beyond the iteration's own is allowed: Floyd–Warshall's
``path[i, :] = np.minimum(path[i, :], path[i, k] + path[k, :])`` and Gaussian
elimination's ``A[i, :] = A[i, :] - f * A[k, :]`` read, in every iteration,
the hyperplane ``path[k]``: the elements at an index from outside the loop
(``k``) at a dimension the writes own, which only the iteration owning it
(``i == k``) may write. The index may be any expression whose value is the
same in every iteration: a constant (``A[0, :]``), or integer variables from
outside the loop, dimensions of arrays from there and constants under ``+``,
``-`` and ``*`` (``A[k + 1, :]``, ``A[n - 1 - k, :]``, ``A[A.shape[0] - 1, :]``),
computed in the body or before it; the host computes it again, as a
polynomial of those variables and dimensions (IterationOwnership.invariants).
One that depends on the loop's index or on memory stays refused.

Where every read of the array is the iteration's own or such a hyperplane,
and an iteration stores each element at most once (``_stored_once``), the
host keeps a copy of each hyperplane before the launch and compares it, bit
for bit, after (shared_hyperplanes.py). Unchanged, its elements never changed
while the loop ran (each stored once, with the bits it held), so every
iteration read what it reads in the sequential loop, before or after its
owner: the answer is the sequential one. Changed, the call raises
UnsupportedError naming the read's line: the answer would depend on the order
the iterations run in.

Updates made atomic (``h[idx[i]] += w[i]``, parfor_updates.py) and reductions
into arrays (``acc += row``, rules/array_reductions.py) are left to their
rules; stores to an array the body does not read (``a[idx[i]] = x``) stay
allowed, as in Numba.
"""

from __future__ import annotations

from dataclasses import dataclass

from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks
from numba.parfors import array_analysis
from numba.parfors.parfor import Parfor, unwrap_parfor_blocks, wrap_parfor_blocks

from ..errors import UnsupportedError
from .parfor_updates import (
    IterationOwnership,
    OwnedItem,
    body_statements,
    range_call,
    reads_metadata,
    root_variable,
)
from .translation import (
    FrozenPolynomial,
    SeparateArrays,
    Translation,
    dimension_of_factor,
    index_of,
    user_names,
)
from .user_locations import where

# calls that read an array's shape, no element
_METADATA_CALLS = {len, array_analysis.assert_equiv}


@dataclass(frozen=True)
class _Access:
    """A read or a write of an array from outside the body: where, the
    items of its index that are the iteration's own, by dimension, and the
    items whose value is the same in every iteration (as polynomials of
    variables from outside the loop), by dimension."""
    loc: ir.Loc
    writes: bool
    owned: frozenset[tuple[int, OwnedItem]]
    invariant: frozenset[tuple[int, FrozenPolynomial]] = frozenset()

    def owners(self) -> set[str]:
        """The parfor indices that own one of the access's dimensions."""
        return {item.owner for _, item in self.owned}


@dataclass(frozen=True)
class ReadHyperplane:
    """The elements of ``array`` whose index at ``axis`` is the value of
    ``index`` (a polynomial of integer variables from outside the loop, the
    same in every iteration), which every iteration may read and the one
    that owns them may write: the host compares them before and after the
    loop and raises ``message`` where they changed (shared_hyperplanes.py)."""
    array: str
    axis: int
    index: FrozenPolynomial
    message: str


def check_loop_carried(t: Translation) -> tuple[ReadHyperplane, ...]:
    """Refuse an array that ``t``'s parfor body writes and reads at elements
    other iterations may touch, but in hyperplanes one iteration owns, which
    are returned."""
    accesses = _body_accesses(t)
    conflict = _loop_carried(t, accesses)
    if conflict is None:
        _keep_arrays_apart(t, accesses)
        return _read_hyperplanes(t, accesses)
    array, read, write = conflict
    raise UnsupportedError(
        f"{where(read.loc)}: '{user_names([array])}' read here and written on line "
        f"{write.loc.line} in the same prange at elements that other iterations may "
        "touch (a loop-carried dependence: the result would depend on the order the "
        "iterations run in); every access to an array the loop both reads and writes "
        "must index one dimension by the same item the iteration owns (the loop's index)")


def _keep_arrays_apart(t: Translation, accesses: dict[str, list[_Access]]) -> None:
    """Have the host check, before the launch, each array the body writes
    against each other one it touches: two arguments may be views of one
    array (``f(a[1:], a[:-1])`` of ``x[i] = y[i] + 1``), whose iterations
    then read what others write, a loop-carried dependence no name shows.
    Where the accesses to both, taken as one array's, are each iteration's
    own, the two may be the very same array (``f(a, a)``). An array the
    parfor allocates (an array expression's result) meets no other."""
    own = _own_indices(t)
    apart = {name for name, use in t.arrays.items() if use.fresh} | set(t.parfor.redvars)
    for written, found in accesses.items():
        if written in apart or not any(a.writes for a in found):
            continue
        for other, found_too in accesses.items():
            if other == written or other in apart:
                continue
            shared = frozenset.intersection(*(a.owned for a in [*found, *found_too]))
            alike = own <= {item.owner for _, item in shared}
            # one dimension the single loop index owns in every access to both
            own_axis = min((axis for axis, item in shared if {item.owner} == own),
                           default=None) if alike and len(own) == 1 else None
            access = next((a for a in found_too if not a.writes), found_too[0])
            first_write = next(a for a in found if a.writes)
            names = user_names([written]), user_names([other])
            t.keep_separate(SeparateArrays(written, other, alike, (
                f"{where(access.loc)}: '{names[0]}' and '{names[1]}' share memory in this "
                f"call, and the prange writes '{names[0]}' (line {first_write.loc.line}) at "
                f"elements other iterations may touch through '{names[1]}' here (a loop-"
                "carried dependence: the result would depend on the order the iterations run "
                "in): pass arrays that do not overlap"), own_axis))


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
        if own <= {item.owner for _, item in shared} or \
                _hyperplanes_read(t, array, writes, reads) is not None:
            continue
        read = next((a for a in reads if not own <= a.owners()), reads[0])
        write = next((a for a in writes if not own <= a.owners()), writes[0])
        return array, read, write
    return None


def _hyperplanes_read(t: Translation, array: str, writes: list[_Access], reads: list[_Access]
                      ) -> list[tuple[int, FrozenPolynomial, _Access]] | None:
    """``(axis, index, read)`` of each hyperplane of ``array`` that a read
    touches beyond the iteration's own elements, where every write is owned
    by each index of the nest, every read is owned where the writes are or
    indexed there by a value the same in every iteration, and each element is
    stored at most once in an iteration; None otherwise."""
    owned = frozenset.intersection(*(a.owned for a in writes))
    if not _own_indices(t) <= {item.owner for _, item in owned} or not _stored_once(t, array):
        return None
    planes = []
    for read in reads:
        invariant = dict(read.invariant)
        for axis, item in sorted(owned, key=lambda pair: pair[0]):
            if (axis, item) in read.owned:
                continue
            if axis not in invariant:
                return None
            planes.append((axis, invariant[axis], read))
    return planes


def _read_hyperplanes(t: Translation, accesses: dict[str, list[_Access]]
                      ) -> tuple[ReadHyperplane, ...]:
    """The hyperplanes that the reads of ``t``'s parfor touch beyond the
    iteration's own elements, each once."""
    found: dict[tuple[str, int, FrozenPolynomial], ReadHyperplane] = {}
    for array, listed in accesses.items():
        writes = [a for a in listed if a.writes]
        reads = [a for a in listed if not a.writes]
        if array in t.parfor.redvars or not writes or not reads:
            continue
        for axis, index, read in _hyperplanes_read(t, array, writes, reads) or ():
            if (array, axis, index) in found:
                continue
            ndim = t.typemap[array].ndim
            plane = ", ".join(_written(index) if k == axis else ":" for k in range(ndim))
            found[array, axis, index] = ReadHyperplane(array, axis, index, (
                f"{where(read.loc)}: '{user_names([array])}[{plane}]', which other iterations "
                f"of the prange read here, was changed by the iteration that writes it (line "
                f"{writes[0].loc.line}): the result would depend on the order the iterations "
                "run in"))
    return tuple(found.values())


def _written(polynomial: FrozenPolynomial) -> str:
    """A polynomial as the user would write it: ``k + 1``, ``n - k - 1``,
    ``A.shape[0] - 1``."""
    terms = sorted(polynomial, key=lambda term: (not term[0], term[1] < 0, term[0]))
    text = ""
    for names, k in terms:
        factors = [user_names([name]) if dimension is None
                   else f"{user_names([dimension[0]])}.shape[{dimension[1]}]"
                   for name, dimension in ((name, dimension_of_factor(name)) for name in names)]
        if abs(k) != 1 or not factors:
            factors.insert(0, str(abs(k)))
        sign = ("-" if k < 0 else "") if not text else (" - " if k < 0 else " + ")
        text += sign + " * ".join(factors)
    return text or "0"


def _stored_once(t: Translation, array: str) -> bool:
    """Whether an iteration of ``t``'s parfor stores each element of
    ``array`` at most once: the body has one store to it (a copy back of an
    in-place operator's result, ``v[j] = (v -= x)[j]``, stores nothing new),
    run once in an iteration (in no loop of the body), or in a loop that
    stores each element once: a nested parfor storing at its own index, or a
    serial ``for j in range(...)`` loop storing at an index item ``j``."""
    stores = [(stmt, block) for stmt, block in body_statements(t.parfor)
              if array_written(t, stmt) == array and not _stores_back(t, stmt)]
    if len(stores) != 1:
        return False
    store, block = stores[0]
    body = t.parfor.loop_body
    nested = next((stmt for b in body.values() for stmt in b.body if isinstance(stmt, Parfor)
                   and any(inner is block for inner in stmt.loop_body.values())), None)
    if nested is not None:
        where_run = next(label for label, b in body.items() if nested in b.body)
        if not (isinstance(store, ir.SetItem) and len(nested.loop_body) == 1
                and _index_items(t, store) == [nest.index_variable.name
                                               for nest in nested.loop_nests]):
            return False
    else:
        where_run = next((label for label, b in body.items() if b is block), None)
        if where_run is None:  # in a nested parfor's init block, or deeper
            return False
    loops = _loops_around(t.parfor, where_run)
    if not loops:
        return nested is not None or not isinstance(store, (ir.SetItem, ir.StaticSetItem)) \
            or all(isinstance(t.typemap.get(item), (types.Integer, types.SliceType))
                   for item in _index_items(t, store))
    if nested is not None or len(loops) != 1:
        return False
    defined_in_loop = {stmt.target.name for label in loops[0].body
                       for stmt in body[label].body if isinstance(stmt, ir.Assign)}
    return any(name in defined_in_loop and range_call(t, ir.Var(None, name, store.loc)) is not None
               for name in _index_items(t, store))


def _loops_around(parfor: Parfor, label: int) -> list:
    """The loops of ``parfor``'s body (not the parfor's own) that run the
    block ``label``."""
    blocks = wrap_parfor_blocks(parfor)
    try:
        loops = compute_cfg_from_blocks(blocks).loops().values()
    finally:
        unwrap_parfor_blocks(parfor)
    return [loop for loop in loops if label in loop.body and loop.header != min(parfor.loop_body)]


def _index_items(t: Translation, store: ir.Stmt) -> list[str | None]:
    """The names of the items of a store's index (copies followed); None for
    an item that is not a variable."""
    index = index_of(store)
    if not isinstance(index, ir.Var):
        return [None]
    definition = t.definition(root_variable(t, index))
    items = definition.items if isinstance(definition, ir.Expr) and \
        definition.op == "build_tuple" else [index]
    return [root_variable(t, item).name if isinstance(item, ir.Var) else None
            for item in items]


def _stores_back(t: Translation, store: ir.Stmt) -> bool:
    """Whether ``store`` is ``v[j] = u[j]`` with ``u`` the result of an
    in-place operator on a view made as ``v`` is (Numba's store of
    ``A[i, :] -= x`` back into ``A[i, :]``): it stores what ``v[j]`` holds."""
    if not isinstance(store, ir.SetItem):
        return False
    loaded = t.definition(store.value)
    if not (isinstance(loaded, ir.Expr) and loaded.op == "getitem"
            and getattr(loaded.index, "name", None) == getattr(store.index, "name", False)):
        return False
    update = t.definition(root_variable(t, loaded.value))
    if not (isinstance(update, ir.Expr) and update.op == "inplace_binop"):
        return False
    views = [t.definition(root_variable(t, var)) for var in (update.lhs, store.target)]
    return all(isinstance(view, ir.Expr) and view.op == "getitem" for view in views) and \
        len({(view.value.name, view.index.name) for view in views}) == 1


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
            found.append((base[0], _access(t, ownership, stmt, base[1], stmt, True)))
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
                found.append((base[0], _access(t, ownership, value, base[1], stmt, False)))
            used = [var for var in used if var.name != value.value.name]
        if isinstance(value, ir.Expr) and value.op == "call" and \
                getattr(t.typemap[value.func.name], "typing_key", None) in _METADATA_CALLS:
            return []
    for var in used:  # an array passed whole, or a view of one
        base = _base(t, var)
        if base is not None:
            found.append((base[0], _access(t, ownership, None, base[1], stmt, False)))
    return found


def _access(t: Translation, ownership: IterationOwnership, indexing: object, view: object,
            stmt: ir.Stmt, writes: bool) -> _Access:
    """The access of ``indexing`` (a getitem or a setitem, or None for a use
    of the array as a whole) into the array, or into its view ``view`` (the
    getitem that made it), which then bounds it."""
    bound = view if view is not None else indexing
    items = ownership.items(index_of(bound)) if bound is not None else []
    invariants = ownership.invariants(index_of(bound)) if bound is not None else []
    return _Access(stmt.loc, writes,
                   frozenset((dim, item) for dim, item in enumerate(items) if item is not None),
                   frozenset((dim, value) for dim, value in enumerate(invariants)
                             if value is not None))


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
