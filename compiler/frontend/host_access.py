"""Host code's use of array elements in an offloaded function.

Kernels' results stay on the device between parfors (SPEC rule 5), so before
a host statement that reads or writes an array's elements the host code asks
the runtime to sync that array (``HostAccess``, lowered to
``xpuc_host_access``). Which statements need it is decided here from the IR.
The same analysis refuses host element access to ``usm_type="device"``
arrays (rule 10), which the host cannot address.
"""

from __future__ import annotations

import numpy as np
from numba.core import ir, types
from numba.parfors.parfor_lowering import ParforLower

from ..errors import UnsupportedError
from .runtime_calls import I32, call_runtime, host_extent
from .user_locations import described, inlined_call
from .usm import DeviceUSMArray

READ, WRITE, USE = "reads", "writes", "uses"  # USE: may read or write (a call)

# Callees that look only at their array arguments' shapes, or make views of
# them (Numba's np.reshape and np.transpose are the array methods, which
# touch no element).
_SHAPE_ONLY_CALLEES = (len, np.empty_like, np.shape, np.ndim, np.size, np.reshape,
                       np.transpose)
# Array methods that make a view of the same elements, touching none.
_VIEW_METHODS = ("reshape", "transpose", "view")


class HostAccess(ir.Stmt):
    """Host code is about to read (or write) the elements of ``array``."""

    def __init__(self, array: ir.Var, writes: bool, loc: ir.Loc) -> None:
        self.array = array
        self.writes = writes
        self.loc = loc

    def list_vars(self) -> list[ir.Var]:
        return [self.array]

    def __repr__(self) -> str:
        return f"xpuc.host_access({self.array}, {WRITE if self.writes else READ})"


def _accesses(stmt: ir.Stmt, typemap: dict) -> list[tuple[ir.Var, str]]:
    """The arrays whose elements ``stmt`` uses, and how."""
    def is_array(var: ir.Var) -> bool:
        return isinstance(typemap.get(var.name), types.Array)

    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        uses = [(stmt.target, WRITE)]
        if is_array(stmt.value):
            uses.append((stmt.value, READ))
        return uses
    if isinstance(stmt, ir.Print):
        return [(v, READ) for v in stmt.args if is_array(v)]
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)):
        return []  # plain assignments, returns, branches, dels
    expr, result = stmt.value, typemap.get(stmt.target.name)
    if expr.op in ("getitem", "static_getitem", "typed_getitem"):
        # a slice makes a view (no element touched); an index reads one
        return [] if isinstance(result, types.Array) or not is_array(expr.value) else [
            (expr.value, READ)]
    if expr.op == "getattr":
        # metadata is free, and so are views; another bound method (a.sum,
        # a.fill) will use the data
        bound = isinstance(result, types.BoundFunction) and expr.attr not in _VIEW_METHODS
        return [(expr.value, USE)] if bound and is_array(expr.value) else []
    if expr.op in ("cast", "build_tuple", "exhaust_iter", "pair_first", "pair_second"):
        return []
    if expr.op == "call" and getattr(typemap.get(expr.func.name), "typing_key",
                                     None) in _SHAPE_ONLY_CALLEES:
        return []
    if expr.op in ("binop", "unary"):
        return [(v, READ) for v in expr.list_vars() if is_array(v)]
    if expr.op == "inplace_binop":
        return [(v, WRITE if v is expr.lhs else READ) for v in (expr.lhs, expr.rhs)
                if is_array(v)]
    # calls and anything else: the callee may read or write what it is given
    return [(v, USE) for v in expr.list_vars() if is_array(v)]


def insert_host_accesses(typemap: dict, blocks: list[list[ir.Stmt]]) -> None:
    """Put a HostAccess before each statement of ``blocks`` (statement lists,
    edited in place) that uses an array's elements; refuse host access to
    device USM arrays."""
    for body in blocks:
        new_body = []
        for stmt in body:
            for var, how in _accesses(stmt, typemap):
                if isinstance(typemap[var.name], DeviceUSMArray):
                    call = inlined_call(stmt.loc)
                    code = "host code" if call is None else f"{call}, run on the host,"
                    raise UnsupportedError(
                        f"{stmt.loc.filename}:{stmt.loc.line}: {code} {how} elements of "
                        f"the usm_type='device' array{_named(var)}, which the host cannot "
                        "access; do this in a parfor (prange or an array expression) or use "
                        "usm_type='shared' or 'host'")
                new_body.append(HostAccess(var, how != READ, stmt.loc))
            new_body.append(stmt)
        body[:] = new_body


def _named(var: ir.Var) -> str:
    """`` 'a'``, `` computed by np.sum(...)`` or nothing for a temporary."""
    call = inlined_call(var.loc)
    if call is not None:
        return f" computed by {call}"
    name = described(var, "")
    return f" {name}" if name else ""


class OffloadLower(ParforLower):
    """Numba's lowering of functions with parfors, which also lowers
    HostAccess statements."""

    def lower_inst(self, inst: ir.Stmt) -> None:
        if not isinstance(inst, HostAccess):
            return super().lower_inst(inst)
        start, nbytes, _ = host_extent(self.context, self.builder,
                                       self.fndesc.typemap[inst.array.name],
                                       self.loadvar(inst.array.name))
        call_runtime(self.context, self.builder, "xpuc_host_access", start, nbytes,
                     I32(int(inst.writes)))
