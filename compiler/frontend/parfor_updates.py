"""Element updates in a parfor body that several iterations may make at once.

``for i in prange(n): h[idx[i]] += w[i]`` updates one element from many
iterations: as plain loads and stores, the work-items running at once lose
each other's updates (Numba's threads and numba-dpex do). Here each
``a[k] = f(a[k], x)``, f being ``+``, ``-``, ``*``, ``min``, ``max``,
``np.minimum`` or ``np.maximum``, at an element that is not the iteration's
own, is found for the setitem rule to make atomic (``rules/arrays.py``). One
at the iteration's own element stays a plain store.

An element is the iteration's own when, for each index ``p`` of the parfor's
loop nest, one item of its index is ``a * x + r``: ``a`` a nonzero integer
constant, ``r`` made of values from outside the loop and constants with ``+``,
``-`` and ``*``, and ``x`` either ``p`` itself (``h[i]``, ``h[2 * i + 1]``,
``h[i, k]`` with ``k`` from a serial loop) or the variable of a serial loop
``for x in range(start, stop[, step])`` whose ranges are disjoint across the
iterations of ``p``: ``start`` is ``p * s + c`` (``s`` and ``c`` as ``r``), and
``start`` of the next iteration minus ``stop`` (``start(p + 1) - stop(p)``) is
a constant ``>= 0``, for each value ``stop`` may be assigned, except a value
assigned only under ``p + 1 == n`` (or ``p == n - 1``), ``n`` the prange's
stop: the last iteration's range may end anywhere (``stop`` may also be a
``min(...)`` with such an argument). ``step``, when given, is a positive
constant. So ``for j in range(i * b, i * b + b)`` and dbscan's
``stop = n if i + 1 == nblocks else start + b`` own ``s[j]``; ``range(i * b,
i * b + b + 1)`` shares one element between neighbours. Why it holds: for
``p < q``, ``stop(p) <= start(p + 1) <= start(q)`` when ``s >= 0``, and when
``s < 0`` every range but the last is empty. ``IterationOwnership`` answers
this for other checks too.

What cannot be made atomic is refused, naming the line: a read-modify-write
of a shared element in any other form, the element's old or new value used
besides the update, and any other read or write of an array that such
updates change (it would read elements while other work-items change them).
"""

from __future__ import annotations

import builtins
import itertools
import operator
from dataclasses import dataclass

import numpy as np
from numba.core import ir, types
from numba.parfors.parfor import Parfor

from ..errors import UnsupportedError
from .translation import (
    FrozenPolynomial,
    SharedUpdate,
    Translation,
    constant_value,
    described,
    dimension_of_factor,
    index_of,
    nested_statements,
    shape_factor,
)
from .user_locations import where

# the callees of an update ``a[k] = f(a[k], x)``
_UPDATE_OPERATORS = {operator.add, operator.iadd, operator.sub, operator.isub, operator.mul,
                     operator.imul}
_UPDATE_CALLEES = {builtins.min, builtins.max, np.minimum, np.maximum}


def body_statements(parfor: Parfor) -> list[tuple[ir.Stmt, ir.Block]]:
    """The statements of ``parfor``'s body, of the parfors nested in it too
    (serial loops in its work-items), with their blocks."""
    return list(nested_statements(parfor.loop_body.values()))



def find_shared_updates(t: Translation) -> dict[ir.Stmt, SharedUpdate]:
    """The setitems of ``t``'s parfor that update an element several
    iterations may share, each with what the update combines; every update of
    an array that has one is among them (``h[i] += 1`` beside ``h[idx[i]] += 1``
    too), so that no plain store races with an atomic one."""
    statements = body_statements(t.parfor)
    ownership = IterationOwnership(t)
    own = {nest.index_variable.name for nest in t.parfor.loop_nests}
    updates: dict[ir.Stmt, SharedUpdate] = {}
    shared_arrays: dict[str, ir.Stmt] = {}
    for stmt, block in statements:
        if not isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            continue
        array = root_variable(t, stmt.target).name
        if array not in t.arrays:  # made in the body: the work-item's own
            continue
        update = _update(t, stmt, block)
        shared = not own <= ownership.owners(index_of(stmt))
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
               if root_variable(t, stmt.target).name in shared_arrays}
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
        if assigned in reads or reads_metadata(stmt):  # no other use of the elements
            continue
        for var in stmt.list_vars():
            update = reads.get(var.name) or results.get(var.name)
            if update is not None and assigned != update.value.name:
                raise UnsupportedError(
                    f"{where(stmt.loc)}: the value of {described(update.target)}'s element "
                    f"updated on line {update.loc.line} used besides that update, which is "
                    "atomic (several iterations may update the element at once)")
            first = shared_arrays.get(root_variable(t, var).name)
            if first is not None:
                raise UnsupportedError(
                    f"{where(stmt.loc)}: {described(var)} used here and updated on line "
                    f"{first.loc.line} at an index that several iterations may share: "
                    "an array updated atomically can be used in the loop only by such "
                    "updates (+=, -=, *=, min, max)")


def reads_metadata(stmt: ir.Stmt) -> bool:
    """Whether ``stmt`` reads an array's metadata (``h.shape``), no element."""
    return (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
            and stmt.value.op == "getattr" and stmt.value.attr in _METADATA)


_METADATA = {"shape", "size", "ndim", "strides", "dtype", "itemsize"}


def root_variable(t: Translation, var: ir.Var) -> ir.Var:
    """The variable ``var`` is a copy of (``h`` for ``h2 = h``), or ``var``."""
    definition = t.definition(var)
    return root_variable(t, definition) if isinstance(definition, ir.Var) else var


# an integer polynomial: each monomial (the sorted names of the variables it
# multiplies) with its coefficient
Polynomial = dict[tuple[str, ...], int]

_POLYNOMIAL_OPERATORS = {operator.add: 1, operator.iadd: 1, operator.sub: -1, operator.isub: -1,
                         operator.mul: 0, operator.imul: 0}  # the sign of a sum's term, or 0


@dataclass(frozen=True)
class OwnedItem:
    """An item of an index whose values each iteration of the parfor's loop
    ``owner`` has to itself (the module's rule): accesses whose items have one
    ``value`` touch, in one iteration, elements that no other iteration
    touches through that value."""

    owner: str  # the loop's index variable
    value: FrozenPolynomial  # the item as a polynomial


class IterationOwnership:
    """Which items of indices in ``t``'s parfor body are the iteration's own:
    each item as a polynomial of variables from outside the loop, of the
    parfor's indices, and of serial loop variables whose ranges are disjoint
    across iterations."""

    def __init__(self, t: Translation) -> None:
        self.t = t
        self.nests = {nest.index_variable.name: nest for nest in t.parfor.loop_nests}
        # every assignment in the body, by variable: one not assigned there
        # has the same value in every iteration
        self.assignments: dict[str, list[tuple[object, ir.Block | None]]] = {}
        for stmt, block in body_statements(t.parfor):
            if isinstance(stmt, ir.Assign):
                self.assignments.setdefault(stmt.target.name, []).append((stmt.value, block))
            elif isinstance(stmt, Parfor):  # a nested prange's index: no polynomial
                for nest in stmt.loop_nests:
                    self.assignments[nest.index_variable.name] = [(None, None)]
        self.loop_owners: dict[str, str | None] = {}  # serial loop variable -> parfor index

    def items(self, index: object) -> list[OwnedItem | None]:
        """Each item of ``index`` (a getitem's or setitem's index: one, or a
        tuple's), as owned, or None."""
        return [self._owned(item) for item in self._index_items(index)]

    def invariants(self, index: object) -> list[FrozenPolynomial | None]:
        """Each item of ``index`` as ``invariant`` gives it."""
        return [self.invariant(item) for item in self._index_items(index)]

    def invariant(self, var: ir.Var) -> FrozenPolynomial | None:
        """``var`` as a polynomial of integer variables from outside the loop
        and dimensions of arrays from there when its value is the same in
        every iteration (constants, such variables and dimensions and ``+``,
        ``-``, ``*`` of them, copies followed: ``k + 1``, ``n - 1 - k``,
        ``0``, ``A.shape[0] - 1``), else None."""
        polynomial = self._polynomial(var)
        if polynomial is None or not all(self._from_outside(name)
                                         for names in polynomial for name in names):
            return None
        return frozenset(polynomial.items())

    def _from_outside(self, factor: str) -> bool:
        """Whether a polynomial's factor is an integer variable from outside
        the loop or a dimension of an array from there, which the body does
        not assign: the host can compute it before the loop."""
        dimension = dimension_of_factor(factor)
        name, kind = (factor, types.Integer) if dimension is None else (dimension[0], types.Array)
        return name in self.t.parfor.params and name not in self.assignments and \
            isinstance(self.t.typemap[name], kind)

    def _index_items(self, index: object) -> list[ir.Var]:
        if not isinstance(index, ir.Var):
            return []
        definition = self.t.definition(root_variable(self.t, index))
        return definition.items if (isinstance(definition, ir.Expr)
                                    and definition.op == "build_tuple") else [index]

    def owners(self, index: object) -> set[str]:
        """The parfor indices by which some item of ``index`` is the iteration's own."""
        return {item.owner for item in self.items(index) if item is not None}

    def _owned(self, item: ir.Var) -> OwnedItem | None:
        """``item`` when it is ``a * x + r`` with ``x`` own to each iteration
        of a loop, ``a`` a nonzero constant, ``r`` the same in all."""
        polynomial = self._polynomial(item)
        if polynomial is None:
            return None
        varying = [names for names in polynomial if not self._invariant(names)]
        if len(varying) != 1 or len(varying[0]) != 1:
            return None
        name = varying[0][0]
        owner = name if name in self.nests else self.loop_owners[name]
        return OwnedItem(owner, frozenset(polynomial.items()))

    def _invariant(self, names: tuple[str, ...]) -> bool:
        return not any(name in self.nests or self.loop_owners.get(name) for name in names)

    def _polynomial(self, var: ir.Var) -> Polynomial | None:
        var = root_variable(self.t, var)
        name = var.name
        if name in self.nests or name not in self.assignments or self._loop_owner(var):
            return {(name,): 1}
        return self._polynomial_of(self.t.definition(var))

    def _polynomial_of(self, value: object) -> Polynomial | None:
        """``value`` (an assigned variable's value) as a polynomial, or None."""
        if isinstance(value, ir.Var):
            return self._polynomial(value)
        if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)) and type(value.value) is int:
            return {(): value.value}
        dimension = self._dimension(value)
        if dimension is not None:
            return {(shape_factor(*dimension),): 1}
        if not (isinstance(value, ir.Expr) and value.op in ("binop", "inplace_binop")
                and value.fn in _POLYNOMIAL_OPERATORS):
            return None
        lhs, rhs = self._polynomial(value.lhs), self._polynomial(value.rhs)
        if lhs is None or rhs is None:
            return None
        sign = _POLYNOMIAL_OPERATORS[value.fn]
        if sign:
            return _sum(lhs, rhs) if sign > 0 else _difference(lhs, rhs)
        product: Polynomial = {}
        for (left, j), (right, k) in itertools.product(lhs.items(), rhs.items()):
            product = _sum(product, {tuple(sorted(left + right)): j * k})
        return product

    def _dimension(self, value: object) -> tuple[str, int] | None:
        """``(A, k)`` where ``value`` is ``A.shape[k]`` of an array ``A``
        (copies followed, ``k`` a constant, counted from the end where
        negative), else None."""
        if not (isinstance(value, ir.Expr) and value.op in ("static_getitem", "getitem")):
            return None
        axis = value.index if value.op == "static_getitem" else \
            constant_value(self.t, value.index)
        shape = self.t.definition(root_variable(self.t, value.value))
        if type(axis) is not int or not (isinstance(shape, ir.Expr) and shape.op == "getattr"
                                         and shape.attr == "shape"):
            return None
        array = root_variable(self.t, shape.value).name
        nbtype = self.t.typemap[array]
        if not isinstance(nbtype, types.Array) or not -nbtype.ndim <= axis < nbtype.ndim:
            return None
        return array, axis % nbtype.ndim

    def _loop_owner(self, var: ir.Var) -> str | None:
        """The parfor index across whose iterations the ranges of the serial
        loop variable ``var`` are disjoint, when it is one."""
        if var.name not in self.loop_owners:
            self.loop_owners[var.name] = None  # while finding out
            self.loop_owners[var.name] = self._find_loop_owner(var)
        return self.loop_owners[var.name]

    def _find_loop_owner(self, var: ir.Var) -> str | None:
        call = range_call(self.t, var)
        if call is None or len(call.args) < 2:
            return None
        if len(call.args) == 3:
            step = constant_value(self.t, call.args[2])
            if type(step) is not int or step <= 0:
                return None
        start = self._polynomial(call.args[0])
        return next((index for index in self.nests if start is not None
                     and self._ranges_disjoint(index, start, call.args[1])), None)

    def _ranges_disjoint(self, index: str, start: Polynomial, stop: ir.Var) -> bool:
        """Whether ``range(start, stop)`` of an iteration of ``index`` ends
        where the next iteration's starts or before (the last's may end
        anywhere), ``start`` being linear in ``index``."""
        following = dict(start)  # the next iteration's start
        for names, k in start.items():
            rest = tuple(name for name in names if name != index)
            if len(rest) < len(names) - 1 or not self._invariant(rest):
                return False
            if len(rest) < len(names):
                following = _sum(following, {rest: k})
        if following == start:  # the same range in every iteration
            return False
        stop = root_variable(self.t, stop)
        for value, block in self.assignments.get(stop.name, [(stop, None)]):
            gaps = [_difference(following, end) for end in self._bounds(value)]
            if not (any(set(gap) <= {()} and gap.get((), 0) >= 0 for gap in gaps)
                    or self._in_last_iteration_only(index, block)):
                return False
        return True

    def _bounds(self, value: object) -> list[Polynomial]:
        """Polynomials that ``value`` is at most: its own, or each argument's
        of a ``min(...)`` it is."""
        call = self.t.definition(root_variable(self.t, value)) if isinstance(
            value, ir.Var) else value
        if isinstance(call, ir.Expr) and call.op == "call" and not call.vararg \
                and _callee(self.t, call) is builtins.min:
            return [bound for argument in call.args for bound in self._bounds(argument)]
        polynomial = self._polynomial_of(value)
        return [] if polynomial is None else [polynomial]

    def _in_last_iteration_only(self, index: str, block: ir.Block | None) -> bool:
        """Whether ``block`` runs only in the last iteration of ``index``:
        its one way in is a branch on ``index + 1 == n``, ``n`` the stop of
        ``index``'s loop (or on ``!=``, its other way)."""
        body = self.t.parfor.loop_body
        label = next((label for label, b in body.items() if b is block), None)
        if label is None or label == min(body):  # the entry is entered from outside too
            return False
        ways_in = [b.body[-1] for b in body.values() if b.body and isinstance(
            b.body[-1], (ir.Jump, ir.Branch)) and label in b.body[-1].get_targets()]
        if len(ways_in) != 1 or not isinstance(ways_in[0], ir.Branch):
            return False
        branch, test = ways_in[0], self.t.definition(ways_in[0].cond)
        if isinstance(test, ir.Expr) and test.op == "call" and _callee(self.t, test) is bool:
            test = self.t.definition(test.args[0])
        if not (isinstance(test, ir.Expr) and test.op == "binop"
                and test.fn in (operator.eq, operator.ne)):
            return False
        taken = branch.truebr if test.fn is operator.eq else branch.falsebr
        nest = self.nests[index]
        stop = {(): nest.stop} if isinstance(nest.stop, int) else self._polynomial(nest.stop)
        lhs, rhs = self._polynomial(test.lhs), self._polynomial(test.rhs)
        if nest.step != 1 or taken != label or branch.truebr == branch.falsebr \
                or None in (stop, lhs, rhs):
            return False
        last = _difference({(index,): 1, (): 1}, stop)  # 0 in the last iteration alone
        return _difference(lhs, rhs) in (last, _difference({}, last))


def _sum(first: Polynomial, second: Polynomial) -> Polynomial:
    total = dict(first)
    for names, k in second.items():
        total[names] = total.get(names, 0) + k
    return {names: k for names, k in total.items() if k}


def _difference(first: Polynomial, second: Polynomial) -> Polynomial:
    return _sum(first, {names: -k for names, k in second.items()})


def range_call(t: Translation, var: ir.Var) -> ir.Expr | None:
    """The ``range(...)`` call of the serial loop whose variable ``var`` is
    (Numba's ``pair_first(iternext(getiter(range(...))))``)."""
    node = t.definition(var)
    for op in ("pair_first", "iternext", "getiter"):
        if not (isinstance(node, ir.Expr) and node.op == op):
            return None
        node = t.definition(node.value)
    return node if (isinstance(node, ir.Expr) and node.op == "call" and not node.kws
                    and not node.vararg and _callee(t, node) is range) else None


def _callee(t: Translation, call: ir.Expr) -> object:
    """What a call calls, by its type (``range``, ``bool``, ``np.maximum``)."""
    return getattr(t.typemap[call.func.name], "typing_key", None)


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
            and _callee(t, combine) in _UPDATE_CALLEES:
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
            and root_variable(t, read.value).name == root_variable(t, stmt.target).name
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
    first, second = root_variable(t, first), root_variable(t, second)
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
