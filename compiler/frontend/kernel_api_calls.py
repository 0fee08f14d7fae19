"""numba-dpex's kernel API (``xpuc.kernel_api``) inside explicit kernels: the
kernel-side names (the item a kernel takes first, its group, ``AtomicRef``,
``PrivateArray``, ``group_barrier``, ``atomic_fence``, the memory enums) and
the pass that rewrites their uses in a kernel's untyped Numba IR into xpuc's
own intrinsics (kernel_intrinsics.py, kernel_atomics.py,
kernel_work_group.py), which then type and translate as they always do.

How the kernel is launched (``KernelApiLaunch``: ``xpuc.call_kernel`` with a
``Range`` or an ``NdRange``, its ``LocalAccessor`` arguments) decides what
its parameters are: the first is the item, which the launch does not pass;
a local accessor's parameter becomes the work-group's local array.
"""

from __future__ import annotations

import enum
import inspect
import operator
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np
from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.consts import ConstantInferenceError
from numba.core.ir_utils import build_definitions, mk_unique_var, replace_var_names

from ..errors import UnsupportedError
from . import kernel_atomics
from .kernel_intrinsics import (
    get_global_id,
    get_global_linear_id,
    get_global_linear_size,
    get_global_size,
    get_group_id,
    get_group_linear_id,
    get_linear_num_groups,
    get_local_id,
    get_local_linear_id,
    get_local_linear_size,
    get_local_size,
    get_num_groups,
    local_array,
    outside_kernel,
    private_array,
)
from .kernel_work_group import GLOBAL_MEM_FENCE, LOCAL_MEM_FENCE, atomic_fence, barrier
from .user_locations import where

# ---- the kernel-side names ---------------------------------------------------------


class MemoryOrder(enum.IntEnum):
    RELAXED = 0
    ACQUIRE = 1
    CONSUME_UNSUPPORTED = 2
    RELEASE = 3
    ACQ_REL = 4
    SEQ_CST = 5


class MemoryScope(enum.IntEnum):
    WORK_ITEM = 0
    SUB_GROUP = 1
    WORK_GROUP = 2
    DEVICE = 3
    SYSTEM = 4


class AddressSpace(enum.IntEnum):
    PRIVATE = 0
    GLOBAL = 1
    CONSTANT = 2
    LOCAL = 3
    GENERIC = 4


class _KernelOnly:
    """A kernel-API object that exists only inside a kernel (its methods are
    rewritten into xpuc's intrinsics there)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise outside_kernel(f"kernel_api.{type(self).__name__}")


class Item(_KernelOnly):
    """The work-item of a kernel launched over a ``Range``: ``get_id(d)``,
    ``get_range(d)``."""


class NdItem(_KernelOnly):
    """The work-item of a kernel launched over an ``NdRange``:
    ``get_global_id(d)``, ``get_local_id(d)``, ``get_global_range(d)``,
    ``get_local_range(d)``, ``get_group()``."""


class Group(_KernelOnly):
    """An ``NdItem``'s work-group: ``get_group_id(d)``, ``get_local_range(d)``."""


class AtomicRef(_KernelOnly):
    """Atomic operations on ``ref[index]`` (``fetch_add``, ``load``, ...)."""


def _atomic_ref_parameters(ref, index, memory_order=MemoryOrder.RELAXED,
                           memory_scope=MemoryScope.DEVICE, address_space=None) -> None:
    """How ``AtomicRef(...)`` binds its arguments."""


def PrivateArray(shape: int | tuple[int, ...], dtype: object,  # noqa: N802  (numba-dpex's name)
                 fill_zeros: bool = False) -> object:
    """An array of the work-item's own (``xpuc.private.array``)."""
    raise outside_kernel("kernel_api.PrivateArray")


def group_barrier(group: Group, fence_scope: MemoryScope = MemoryScope.WORK_GROUP) -> None:
    """Wait for every work-item of ``group``; their memory writes before it
    are visible after it."""
    raise outside_kernel("kernel_api.group_barrier")


def kernel_api_atomic_fence(memory_order: MemoryOrder, memory_scope: MemoryScope) -> None:
    """A memory fence (``xpuc.atomic_fence``'s sequentially consistent,
    device-wide one, which orders at least as much as any asked for)."""
    raise outside_kernel("kernel_api.atomic_fence")


# ---- how a kernel is launched --------------------------------------------------------


@dataclass(frozen=True)
class KernelApiLaunch:
    """A kernel as ``call_kernel`` launches it: its first parameter is the
    ``item`` (``Item`` or ``NdItem``), and the parameters at the positions of
    ``accessors`` (position, shape, NumPy scalar type) are local arrays.
    The launch passes the other parameters."""

    item: type
    accessors: tuple[tuple[int, tuple[int, ...], type], ...] = ()

    def passed(self, parameters: list[str]) -> list[str]:
        """The parameters the launch's arguments fill."""
        given = {position for position, _, _ in self.accessors} | {0}
        return [name for i, name in enumerate(parameters) if i not in given]

    def all_argument_types(self, passed: tuple[types.Type, ...]) -> tuple[types.Type, ...]:
        """Numba's argument types of every parameter, from those passed: the
        item and the accessors, which the kernel's IR no longer reads
        (``RewriteKernelApi``), are ``none``."""
        found, passed = [types.none], list(passed)
        given = {position for position, _, _ in self.accessors}
        for position in range(1, len(passed) + len(given) + 1):
            found.append(types.none if position in given else passed.pop(0))
        return tuple(found)


# ---- the rewrite -------------------------------------------------------------------


@dataclass
class _Callee:
    """A kernel-API callee (``AtomicRef``, ``group_barrier``...)."""

    value: object


@dataclass
class _AtomicRef:
    """``AtomicRef(array, index)``, its operands copied where it was made."""

    array: ir.Var
    index: ir.Var


@dataclass
class _Method:
    """A method of an atomic reference: its calls take the reference's operands first."""

    ref: _AtomicRef
    stub: Callable


# what each item-like value's methods are: an intrinsic of the same
# arguments, or (None) the item's group
_ITEM_METHODS: dict[type, dict[str, Callable | None]] = {
    Item: {"get_id": get_global_id, "get_range": get_global_size,
           "get_linear_id": get_global_linear_id, "get_linear_range": get_global_linear_size},
    NdItem: {"get_global_id": get_global_id, "get_local_id": get_local_id,
             "get_global_range": get_global_size, "get_local_range": get_local_size,
             "get_global_linear_id": get_global_linear_id,
             "get_local_linear_id": get_local_linear_id,
             "get_global_linear_range": get_global_linear_size,
             "get_local_linear_range": get_local_linear_size, "get_group": None},
    Group: {"get_group_id": get_group_id, "get_local_range": get_local_size,
             "get_group_range": get_num_groups, "get_group_linear_id": get_group_linear_id,
             "get_local_linear_range": get_local_linear_size,
             "get_group_linear_range": get_linear_num_groups},
}

_ATOMIC_METHODS: dict[str, Callable] = {
    "fetch_add": kernel_atomics.add, "fetch_sub": kernel_atomics.sub,
    "fetch_min": kernel_atomics.min, "fetch_max": kernel_atomics.max,
    "fetch_and": kernel_atomics.and_, "fetch_or": kernel_atomics.or_,
    "fetch_xor": kernel_atomics.xor, "load": kernel_atomics.load,
    "store": kernel_atomics.store, "exchange": kernel_atomics.exchange,
    "compare_exchange": kernel_atomics.compare_exchange,
}


def _compare_exchange_parameters(expected, desired, expected_idx=0) -> None:
    """How ``AtomicRef.compare_exchange(...)`` binds its arguments."""

_CALLEES = (AtomicRef, PrivateArray, group_barrier, kernel_api_atomic_fence)


def _name(value: object) -> str:
    """A kernel-API value as the user wrote it, for error messages."""
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, (_AtomicRef, _Method)):
        return "AtomicRef"
    if isinstance(value, _Callee):
        return {Group: "NdItem.get_group", kernel_api_atomic_fence: "atomic_fence"}.get(
            value.value, getattr(value.value, "__name__", ""))
    return type(value).__name__


class _Rewrite:
    """One kernel's rewrite; ``values`` holds what each variable bound to a
    kernel-API object is."""

    def __init__(self, func_ir: ir.FunctionIR, launch: KernelApiLaunch) -> None:
        self.func_ir = func_ir
        self.launch = launch
        self.values: dict[str, object] = {}
        # the operands the intrinsics do not take (a fence's memory order...)
        self.dropped: list[ir.Var] = []

    def run(self) -> None:
        renamed = {}
        for label in sorted(self.func_ir.blocks):
            block = self.func_ir.blocks[label]
            body = []
            for stmt in block.body:
                body += self.statement(stmt, block.scope, renamed)
            block.body = body
        self.remove_dropped_operands()
        # an accessor's parameter is typed none (KernelApiLaunch): its local
        # array is another variable
        replace_var_names(self.func_ir.blocks, renamed)
        self.func_ir._definitions = build_definitions(self.func_ir.blocks)

    def statement(self, stmt: ir.Stmt, scope: ir.Scope, renamed: dict) -> list[ir.Stmt]:
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Arg):
            return self.argument(stmt, renamed)
        if isinstance(stmt, ir.Assign):
            value = stmt.value
            if isinstance(value, ir.Var) and value.name in self.values:  # a copy
                self.values[stmt.target.name] = self.values[value.name]
                return []
            if isinstance(value, (ir.Global, ir.FreeVar)) or (
                    isinstance(value, ir.Expr) and value.op == "getattr"
                    and value.value.name not in self.values):
                callee = self.callee(value)
                if any(callee is known for known in _CALLEES):
                    self.values[stmt.target.name] = _Callee(callee)
                    return []
            if isinstance(value, ir.Expr) and value.op == "getattr":
                return self.attribute(stmt, value)
            if isinstance(value, ir.Expr) and value.op == "call" \
                    and value.func.name in self.values:
                return self.call(stmt, value, scope)
        if isinstance(stmt, ir.Del) and stmt.value in self.values:
            return []
        used = [v.name for v in stmt.list_vars() if v.name in self.values]
        if used:
            raise UnsupportedError(
                f"{where(stmt.loc)}: kernel_api.{_name(self.values[used[0]])} used as a value; "
                "a kernel calls its methods (xpuc's kernel API: docs/spec.md)")
        return [stmt]

    def remove_dropped_operands(self) -> None:
        """The definitions of the dropped operands (``kapi.MemoryOrder.RELAXED``)
        that nothing else reads, and those of what they read in turn: they
        name Python objects a kernel has no values for."""
        uses: Counter[str] = Counter()
        definitions: dict[str, list[tuple[ir.Block, ir.Assign]]] = {}
        for block in self.func_ir.blocks.values():
            for stmt in block.body:
                uses.update(v.name for v in stmt.list_vars())
                if isinstance(stmt, ir.Assign):  # its target is not a use
                    definitions.setdefault(stmt.target.name, []).append((block, stmt))
                    uses[stmt.target.name] -= 1
        pending = [var.name for var in self.dropped]
        while pending:
            name = pending.pop()
            found = definitions.get(name, [])
            if uses[name] or len(found) != 1:
                continue
            block, stmt = found[0]
            value = stmt.value
            if isinstance(value, (ir.Global, ir.FreeVar, ir.Const)):
                block.body.remove(stmt)
            elif isinstance(value, ir.Expr) and value.op == "getattr":
                block.body.remove(stmt)
                for read in value.list_vars():
                    uses[read.name] -= 1
                    pending.append(read.name)

    def callee(self, value: ir.Global | ir.FreeVar | ir.Expr) -> object:
        """What a global, or a module's attribute (``kapi.AtomicRef``), is."""
        if isinstance(value, (ir.Global, ir.FreeVar)):
            return value.value
        try:
            module = self.func_ir.infer_constant(value.value)
        except ConstantInferenceError:
            return None
        return getattr(module, value.attr, None) if isinstance(module, ModuleType) else None

    def argument(self, stmt: ir.Assign, renamed: dict) -> list[ir.Stmt]:
        index = stmt.value.index
        if index == 0:
            self.values[stmt.target.name] = self.launch.item
            return []
        for position, shape, dtype in self.launch.accessors:
            if position == index:
                local = ir.Var(stmt.target.scope, mk_unique_var(stmt.target.name), stmt.loc)
                renamed[stmt.target.name] = local.name
                function, shape_var, dtype_var = (
                    ir.Var(stmt.target.scope, mk_unique_var(f"$local_{what}"), stmt.loc)
                    for what in ("array", "shape", "dtype"))
                return [self.global_of(function, local_array, stmt.loc),
                        ir.Assign(ir.Const(shape, stmt.loc), shape_var, stmt.loc),
                        self.global_of(dtype_var, dtype, stmt.loc),
                        ir.Assign(ir.Expr.call(function, (shape_var, dtype_var), (), stmt.loc),
                                  local, stmt.loc)]
        return [stmt]

    def attribute(self, stmt: ir.Assign, value: ir.Expr) -> list[ir.Stmt]:
        held = self.values.get(value.value.name)
        if held is None:
            return [stmt]
        kind = held if isinstance(held, type) else type(held)
        if kind in _ITEM_METHODS:
            methods = _ITEM_METHODS[kind]
            if value.attr not in methods:
                raise UnsupportedError(
                    f"{where(stmt.loc)}: kernel_api.{_name(held)}.{value.attr} is not "
                    f"supported (supported: {', '.join(methods)})")
            method = methods[value.attr]
            if method is None:
                self.values[stmt.target.name] = _Callee(Group)  # calls of it give the group
                return []
            return [self.global_of(stmt.target, method, stmt.loc)]
        if isinstance(held, _AtomicRef):
            if value.attr not in _ATOMIC_METHODS:
                raise UnsupportedError(
                    f"{where(stmt.loc)}: kernel_api.AtomicRef.{value.attr} is not supported "
                    f"(supported: {', '.join(_ATOMIC_METHODS)})")
            self.values[stmt.target.name] = _Method(held, _ATOMIC_METHODS[value.attr])
            return [self.global_of(stmt.target, _ATOMIC_METHODS[value.attr], stmt.loc)]
        raise UnsupportedError(f"{where(stmt.loc)}: kernel_api.{_name(held)}.{value.attr} is "
                               "not supported")

    def call(self, stmt: ir.Assign, call: ir.Expr, scope: ir.Scope) -> list[ir.Stmt]:
        held = self.values[call.func.name]
        if isinstance(held, _Method) and held.stub is kernel_atomics.compare_exchange:
            return self.compare_exchange(stmt, call, held.ref, scope)
        if isinstance(held, _Method):
            operands = list(call.args)
            for name, var in call.kws:  # numba-dpex names the operand val
                if name != "val" or operands:
                    raise UnsupportedError(f"{where(stmt.loc)}: kernel_api.AtomicRef: "
                                           f"unexpected argument {name!r}")
                operands.append(var)
            call.args, call.kws = [held.ref.array, held.ref.index, *operands], []
            return [stmt]
        callee = held.value
        if callee is Group:
            self.values[stmt.target.name] = Group
            return []
        if callee is PrivateArray:
            return self.private_array(stmt, call, scope)
        if callee is AtomicRef:
            return self.atomic_ref(stmt, call, scope)
        if callee is group_barrier:
            return self.group_barrier(stmt, call, scope)
        # atomic_fence: xpuc's fence, whatever order and scope are asked for
        self.dropped += [*call.args, *(var for _, var in call.kws)]
        function = ir.Var(scope, mk_unique_var("$atomic_fence"), stmt.loc)
        return [self.global_of(function, atomic_fence, stmt.loc),
                ir.Assign(ir.Expr.call(function, (), (), call.loc), stmt.target, stmt.loc)]

    def atomic_ref(self, stmt: ir.Assign, call: ir.Expr, scope: ir.Scope) -> list[ir.Stmt]:
        try:
            bound = inspect.signature(_atomic_ref_parameters).bind(*call.args, **dict(call.kws))
        except TypeError as error:
            raise UnsupportedError(f"{where(stmt.loc)}: kernel_api.AtomicRef: {error}") from None
        for name in ("memory_order", "memory_scope"):
            if name in bound.arguments:
                raise UnsupportedError(
                    f"{where(stmt.loc)}: kernel_api.AtomicRef's {name}: xpuc's atomics are "
                    "relaxed, device-wide on global memory")
        # copied here, so that the reference keeps them if the variables change
        operands = []
        for name in ("ref", "index"):
            copy = ir.Var(scope, mk_unique_var(f"$atomic_{name}"), stmt.loc)
            operands.append(ir.Assign(bound.arguments[name], copy, stmt.loc))
        self.values[stmt.target.name] = _AtomicRef(operands[0].target, operands[1].target)
        self.dropped += [bound.arguments[name] for name in bound.arguments
                         if name not in ("ref", "index")]
        return operands

    def private_array(self, stmt: ir.Assign, call: ir.Expr, scope: ir.Scope) -> list[ir.Stmt]:
        """``PrivateArray(shape, dtype, fill_zeros)``: xpuc's private array, or
        ``np.zeros`` of the shape where ``fill_zeros`` is true."""
        try:
            bound = inspect.signature(PrivateArray).bind(*call.args, **dict(call.kws))
        except TypeError as error:
            raise UnsupportedError(f"{where(stmt.loc)}: kernel_api.PrivateArray: {error}"
                                   ) from None
        fill_zeros = bound.arguments.get("fill_zeros")
        zeros = False
        if fill_zeros is not None:
            try:
                zeros = bool(self.func_ir.infer_constant(fill_zeros))
            except ConstantInferenceError:
                raise UnsupportedError(f"{where(stmt.loc)}: kernel_api.PrivateArray's "
                                       "fill_zeros must be a constant") from None
            self.dropped.append(fill_zeros)
        function = ir.Var(scope, mk_unique_var("$private_array"), stmt.loc)
        return [self.global_of(function, np.zeros if zeros else private_array, stmt.loc),
                ir.Assign(ir.Expr.call(function, (bound.arguments["shape"],
                                                  bound.arguments["dtype"]), (), call.loc),
                          stmt.target, stmt.loc)]

    def compare_exchange(self, stmt: ir.Assign, call: ir.Expr, ref: _AtomicRef,
                         scope: ir.Scope) -> list[ir.Stmt]:
        """numba-dpex's ``ref.compare_exchange(expected, desired, expected_idx)``:
        ``expected[expected_idx]`` is the value expected and gets the value
        held (unchanged where it was the one expected); true where it was.
        ``xpuc.atomic.compare_exchange`` compares floats by their bits, the
        result by value."""
        try:
            bound = inspect.signature(_compare_exchange_parameters).bind(*call.args,
                                                                         **dict(call.kws))
        except TypeError as error:
            raise UnsupportedError(f"{where(stmt.loc)}: kernel_api.AtomicRef.compare_exchange: "
                                   f"{error}") from None
        loc = stmt.loc
        expected_array = bound.arguments["expected"]
        position = bound.arguments.get("expected_idx")
        variables = [ir.Var(scope, mk_unique_var(f"$compare_exchange_{what}"), loc)
                     for what in ("function", "position", "expected", "held")]
        function, position_var, expected, held = variables
        statements = [self.global_of(function, kernel_atomics.compare_exchange, loc)]
        if position is None:
            statements.append(ir.Assign(ir.Const(0, loc), position_var, loc))
        else:
            statements.append(ir.Assign(position, position_var, loc))
        return [*statements,
                ir.Assign(ir.Expr.getitem(expected_array, position_var, loc), expected, loc),
                ir.Assign(ir.Expr.call(function, (ref.array, ref.index, expected,
                                                  bound.arguments["desired"]), (), call.loc),
                          held, loc),
                ir.SetItem(expected_array, position_var, held, loc),
                ir.Assign(ir.Expr.binop(operator.eq, held, expected, loc), stmt.target, loc)]

    def group_barrier(self, stmt: ir.Assign, call: ir.Expr, scope: ir.Scope) -> list[ir.Stmt]:
        group = call.args[0] if call.args else dict(call.kws).get("group")
        if group is None or self.values.get(group.name) is not Group:
            raise UnsupportedError(f"{where(stmt.loc)}: kernel_api.group_barrier takes the "
                                   "work-group, nd_item.get_group()")
        # SYCL's group barrier fences every memory of the group
        self.dropped += [var for _, var in call.kws if var is not group]
        function = ir.Var(scope, mk_unique_var("$barrier"), stmt.loc)
        flags = ir.Var(scope, mk_unique_var("$fence_flags"), stmt.loc)
        return [self.global_of(function, barrier, stmt.loc),
                ir.Assign(ir.Const(LOCAL_MEM_FENCE | GLOBAL_MEM_FENCE, stmt.loc), flags,
                          stmt.loc),
                ir.Assign(ir.Expr.call(function, (flags,), (), call.loc), stmt.target, stmt.loc)]

    @staticmethod
    def global_of(target: ir.Var, value: object, loc: ir.Loc) -> ir.Assign:
        return ir.Assign(ir.Global(getattr(value, "__name__", str(value)), value, loc), target,
                         loc)


@register_pass(mutates_CFG=False, analysis_only=False)
class RewriteKernelApi(FunctionPass):
    """Rewrite a kernel's uses of numba-dpex's kernel API into xpuc's
    intrinsics, for the launch ``state.xpuc_kernel_api`` describes."""

    _name = "xpuc_rewrite_kernel_api"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        _Rewrite(state.func_ir, state.xpuc_kernel_api).run()
        return True
