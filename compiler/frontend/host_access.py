"""Host code's use of array elements in an offloaded function.

Kernels' results stay on the device between parfors (SPEC rule 5), so before
a host statement that reads or writes an array's elements the host code asks
the runtime to sync that array (``HostAccess``, lowered to
``xpuc_host_access``). Which statements need it is decided here from the IR.
Host code cannot address ``usm_type="device"`` arrays: one element read or
written (``x = a[i, j]``, ``a[0] = x``) becomes a copy of that element between
the device and the host (``DeviceElementRead``, ``DeviceElementWrite``,
lowered to ``xpuc_element_copy``); any other use of their elements is refused
(rule 10). Its lowering class, ``OffloadLower``, also gives the function the
CPython entry that runs it within a runtime call.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir as llvm
from numba.core import cgutils, ir, types
from numba.core.callwrapper import PyCallWrapper
from numba.parfors.parfor_lowering import ParforLower

from ..errors import UnsupportedError
from .runtime_calls import I8P, I32, I64, call_runtime, host_extent, within_a_call
from .translation import index_of
from .user_locations import described, inlined_call, is_library_code
from .usm import DeviceUSMArray, USMArray, span_copy

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


class DeviceElementRead(ir.Assign):
    """``target = array[index]`` of one element of a usm_type="device" array:
    the element copied to the host (an Assign, as Numba's lowering counts
    assignments)."""


class DeviceElementWrite(ir.Stmt):
    """``array[index] = value`` of one element of a usm_type="device" array:
    the value copied to the device."""

    def __init__(self, setitem: ir.SetItem | ir.StaticSetItem) -> None:
        self.setitem = setitem
        self.loc = setitem.loc

    def list_vars(self) -> list[ir.Var]:
        return self.setitem.list_vars()

    def __repr__(self) -> str:
        return f"xpuc.device_element_write({self.setitem})"


def _is_element_index(index: ir.Var | object, array: types.Array, typemap: dict) -> bool:
    """Whether ``index`` picks one element of ``array``: an integer per dimension."""
    if isinstance(index, ir.Var):
        nbtype = typemap[index.name]
        items = list(nbtype) if isinstance(nbtype, types.BaseTuple) else [nbtype]
        return len(items) == array.ndim and all(isinstance(i, types.Integer) for i in items)
    items = index if isinstance(index, tuple) else (index,)
    return len(items) == array.ndim and all(isinstance(i, int) for i in items)


def _device_element_copy(stmt: ir.Stmt, typemap: dict) -> ir.Stmt | None:
    """The copy that does ``stmt``'s read or write of one element of a
    usm_type="device" array, in the user's own code, or None (library code
    inlined for a call, whose loops over the elements one copy each would
    make slow, stays refused)."""
    if is_library_code(stmt.loc):
        return None
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        array = typemap[stmt.target.name]
        if (isinstance(array, DeviceUSMArray) and _is_element_index(index_of(stmt), array, typemap)
                and isinstance(typemap[stmt.value.name], (types.Number, types.Boolean))):
            return DeviceElementWrite(stmt)
    elif (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
          and stmt.value.op in ("getitem", "static_getitem")):
        array = typemap.get(stmt.value.value.name)
        if isinstance(array, DeviceUSMArray) and _is_element_index(index_of(stmt.value), array,
                                                                   typemap):
            return DeviceElementRead(stmt.value, stmt.target, stmt.loc)
    return None


def _accesses(stmt: ir.Stmt, typemap: dict) -> list[tuple[ir.Var, str]]:
    """The arrays whose elements ``stmt`` uses, and how."""
    def is_array(var: ir.Var) -> bool:
        return isinstance(typemap.get(var.name), types.Array)

    def index_array(node) -> list[tuple[ir.Var, str]]:
        """The index array or mask of ``a[idx]``, ``a[mask] = v``, read."""
        index = index_of(node)
        return [(index, READ)] if isinstance(index, ir.Var) and is_array(index) else []

    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        # a store into a list or a dict touches no array's elements
        uses = [(stmt.target, WRITE)] if is_array(stmt.target) else []
        if is_array(stmt.value):
            uses.append((stmt.value, READ))
        return uses + index_array(stmt)
    if isinstance(stmt, ir.Print):
        return [(v, READ) for v in stmt.args if is_array(v)]
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)):
        return []  # plain assignments, returns, branches, dels
    expr, result = stmt.value, typemap.get(stmt.target.name)
    if expr.op in ("getitem", "static_getitem", "typed_getitem"):
        if index_array(expr) and is_array(expr.value):
            # ``a[idx]``, ``a[mask]``: a copy of the elements the index selects
            return [(expr.value, READ), *index_array(expr)]
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
    callee = getattr(typemap.get(expr.func.name), "typing_key", None) \
        if expr.op == "call" else None
    if callee in _SHAPE_ONLY_CALLEES:
        return []
    if callee is span_copy:
        # a USM array's bytes are copied device to device; a NumPy array's on the host
        return [(v, READ) for v in expr.args if not isinstance(typemap[v.name], USMArray)]
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
            copy = _device_element_copy(stmt, typemap)
            if copy is not None:
                new_body.append(copy)
                continue
            for var, how in _accesses(stmt, typemap):
                array = typemap[var.name]
                if isinstance(array, DeviceUSMArray):
                    call = inlined_call(stmt.loc)
                    code = "host code" if call is None else f"{call}, run on the host,"
                    raise UnsupportedError(
                        f"{stmt.loc.filename}:{stmt.loc.line}: {code} {how} elements of "
                        f"the {array.described}{_named(var)}, which the host cannot access; "
                        f"do this in a parfor (prange or an array expression)"
                        f"{array.host_alternative}")
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

    def create_cpython_wrapper(self, release_gil: bool = False) -> None:
        """Numba's CPython entry, calling the function within a runtime call
        (``within_a_call``): whatever calls the entry (Numba's dispatcher, a
        call plan) brackets it no further."""
        if self.genlower:
            return super().create_cpython_wrapper(release_gil)
        module = self.context.create_module("wrapper")
        callee = within_a_call(self.context, module, self.fndesc)
        PyCallWrapper(self.context, module, callee, self.fndesc, self.env,
                      call_helper=self.call_helper, release_gil=release_gil).build()
        self.library.add_ir_module(module)
        return None

    def lower_inst(self, inst: ir.Stmt) -> None:
        if isinstance(inst, DeviceElementRead):
            return self._read_element(inst)
        if isinstance(inst, DeviceElementWrite):
            return self._write_element(inst.setitem)
        if not isinstance(inst, HostAccess):
            return super().lower_inst(inst)
        start, nbytes, _ = host_extent(self.context, self.builder,
                                       self.fndesc.typemap[inst.array.name],
                                       self.loadvar(inst.array.name))
        call_runtime(self.context, self.builder, "xpuc_host_access", start, nbytes,
                     I32(int(inst.writes)))

    def _element(self, array: ir.Var, index: ir.Var | object) -> tuple[llvm.Value, types.Type]:
        """The device address of ``array[index]`` (negative indices count
        from the end) and the element's type."""
        context, builder = self.context, self.builder
        nbtype = self.fndesc.typemap[array.name]
        ary = context.make_array(nbtype)(context, builder, value=self.loadvar(array.name))
        if isinstance(index, ir.Var):
            index_type = self.fndesc.typemap[index.name]
            value = self.loadvar(index.name)
            if isinstance(index_type, types.BaseTuple):
                items = zip(cgutils.unpack_tuple(builder, value, len(index_type)), index_type)
            else:
                items = [(value, index_type)]
            indices = [context.cast(builder, v, t, types.intp) for v, t in items]
        else:
            indices = [context.get_constant(types.intp, i)
                       for i in (index if isinstance(index, tuple) else (index,))]
        pointer = cgutils.get_item_pointer2(
            context, builder, data=ary.data, shape=cgutils.unpack_tuple(builder, ary.shape),
            strides=cgutils.unpack_tuple(builder, ary.strides), layout=nbtype.layout,
            inds=indices, wraparound=True)
        return pointer, nbtype.dtype

    def _copy(self, element: llvm.Value, dtype: types.Type, slot: llvm.Value,
              to_device: bool) -> None:
        nbytes = self.context.get_abi_sizeof(self.context.get_data_type(dtype))
        host, device = self.builder.bitcast(slot, I8P), self.builder.bitcast(element, I8P)
        call_runtime(self.context, self.builder, "xpuc_element_copy",
                     *((device, host) if to_device else (host, device)), I64(nbytes),
                     I32(int(to_device)))

    def _read_element(self, inst: DeviceElementRead) -> None:
        element, dtype = self._element(inst.value.value, index_of(inst.value))
        slot = cgutils.alloca_once(self.builder, self.context.get_data_type(dtype))
        self._copy(element, dtype, slot, to_device=False)
        value = self.context.unpack_value(self.builder, dtype, slot)
        self.storevar(self.context.cast(self.builder, value, dtype,
                                        self.fndesc.typemap[inst.target.name]),
                      inst.target.name)

    def _write_element(self, setitem: ir.SetItem | ir.StaticSetItem) -> None:
        element, dtype = self._element(setitem.target, index_of(setitem))
        value = self.context.cast(self.builder, self.loadvar(setitem.value.name),
                                  self.fndesc.typemap[setitem.value.name], dtype)
        slot = cgutils.alloca_once(self.builder, self.context.get_data_type(dtype))
        self.context.pack_value(self.builder, dtype, value, slot)
        self._copy(element, dtype, slot, to_device=True)
