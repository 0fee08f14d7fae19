"""Translate one Numba parfor into the MLIR of its kernel (the ``linalg`` stage).

A parfor becomes a ``func.func`` whose body is one ``scf.parallel`` over the
parfor's loop nest. Its arguments are what the host passes: a flat memref per
array, index values (loop bounds, array dimensions) and scalars; ``KernelParam``
records where the host finds each. Numba IR nodes are translated by a table of
rules keyed by node kind (below); operators and callees by the dialects' table.
Anything outside both tables raises ``UnsupportedError`` with the source line.
"""

from __future__ import annotations

import builtins
import dataclasses
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
from numba.core import ir, types
from numba.core.typing import Signature, npydecl
from numba.np.numpy_support import ufunc_find_matching_loop
from numba.parfors.parfor import Parfor

from ..dialects import (
    BOOL,
    F32,
    F64,
    INDEX,
    Builder,
    ScalarType,
    Value,
    arith,
    lookup_rule,
    memref,
    scf,
)
from ..errors import UnsupportedError


@dataclass(frozen=True)
class KernelParam:
    """One argument of the kernel function and where the host gets it.

    kind: ``array`` (device copy of array ``var``), ``partials`` (a device buffer
    of REDUCTION_WORK_ITEMS partial results of reduction variable ``var``),
    ``dim`` (``var.shape[axis]``),
    ``stride`` (``var.strides[axis]`` in elements), ``start``/``stop`` (bound of
    loop nest ``axis``, held in ``var``), ``scalar``, ``tuple_item`` (item
    ``axis`` of a tuple of scalars), ``pointer`` (array ``var`` again, as a
    SPIR-V pointer for atomics).
    """

    kind: str
    var: str
    mlir_type: str
    axis: int = 0


@dataclass
class ArrayUse:
    var: str
    reads: bool = False
    writes: bool = False
    # allocated in the parfor's init block (array-expression results): every
    # element is written, so the host has nothing to copy in
    fresh: bool = False


@dataclass(frozen=True)
class Reduction:
    """A reduction variable: each of the kernel's REDUCTION_WORK_ITEMS work-items
    reduces a share of the iterations into ``partials[w]`` (see _reduction_loop),
    and the host combines those with the variable's value from before the loop."""

    var: str
    combine: Callable[[object, object], object]  # Python, compiled into the host code


# work-items of a reduction kernel: enough to fill the device's vector lanes and
# cores, few enough that the host's final combine is cheap. They are laid out
# as chunks of the iterations, each read by as many neighbouring work-items as
# the device runs in one vector (``Target.vector_lanes``): on the OpenCL CPU
# device, which vectorizes across work-items, fewer lanes than its vector
# width left the kernel scalar (half the bandwidth with 8 lanes on AVX-512),
# and more made each vector of lanes stride through its chunk while the
# others waited their turn (also about half).
REDUCTION_WORK_ITEMS = 4096


def reduction_lanes(target_lanes: int) -> int:
    """The lanes of a reduction kernel for a device that runs ``target_lanes``
    work-items in one vector: a power of two dividing REDUCTION_WORK_ITEMS."""
    lanes = 1
    while lanes * 2 <= min(target_lanes, REDUCTION_WORK_ITEMS):
        lanes *= 2
    return lanes


@dataclass
class ParforKernel:
    name: str
    mlir: str
    params: tuple[KernelParam, ...]
    arrays: dict[str, ArrayUse]
    ndim: int
    reductions: tuple[Reduction, ...] = ()


def scalar_type(nbtype: types.Type, what: str, loc: ir.Loc) -> ScalarType:
    """The ScalarType of a Numba scalar type, or UnsupportedError."""
    nbtype = types.unliteral(nbtype)
    if isinstance(nbtype, types.Array) and nbtype.ndim == 0:
        # what NumPy functions of scalars return (np.where): a scalar in a body
        nbtype = nbtype.dtype
    if isinstance(nbtype, types.Boolean):
        return BOOL
    if isinstance(nbtype, types.Integer):
        return ScalarType("i" if nbtype.signed else "u", nbtype.bitwidth)
    if isinstance(nbtype, types.Float):
        return F32 if nbtype.bitwidth == 32 else F64
    raise UnsupportedError(f"{_where(loc)}: {what} of type {nbtype} in a parfor")


def _where(loc: ir.Loc) -> str:
    return f"{loc.filename}:{loc.line}"


# Values the body's variables can hold besides scalar SSA values
@dataclass(frozen=True)
class _Array:
    var: str
    memref: str  # SSA name of the flat memref argument
    dtype: ScalarType
    dims: tuple[Value, ...]  # index values
    # element strides (index values) of a view; None for C-contiguous arrays,
    # whose strides follow from dims with a unit innermost stride the device
    # compiler can vectorize on
    strides: tuple[Value, ...] | None = None
    memref_type: str | None = None  # when not memref<?xT> (work-group local memory)


@dataclass(frozen=True)
class _Callee:
    obj: object  # a module or function, before or after attribute lookup


@dataclass(frozen=True)
class _Tuple:
    items: tuple[object, ...]


@dataclass(frozen=True)
class _Range:
    start: Value
    stop: Value
    step: Value


@dataclass(frozen=True)
class _RangeIterator:
    slot: str  # memref<i64> holding the next value
    range: _Range


@dataclass(frozen=True)
class _Pair:  # what iternext gives: the value and whether it is valid
    first: Value
    second: Value


@dataclass
class _Translation:
    """State of one parfor's translation. The body becomes its own function
    with one block per Numba IR block; scalar variables live in stack slots
    (memref.alloca) that the linalg stage's mem2reg turns back into SSA values
    before lift-cf-to-scf structures the branches into scf.if / scf.while."""

    parfor: Parfor
    typemap: dict
    calltypes: dict
    b: Builder = field(default_factory=Builder)
    env: dict[str, object] = field(default_factory=dict)
    args: list[tuple[str, KernelParam]] = field(default_factory=list)  # (ssa, param)
    arrays: dict[str, ArrayUse] = field(default_factory=dict)
    slots: dict[str, str] = field(default_factory=dict)  # variable -> its alloca
    allocas: list[str] = field(default_factory=list)  # entry-block lines
    local: set[str] = field(default_factory=set)  # scalars current in this block

    def add_param(self, param: KernelParam) -> str:
        name = f"%arg{len(self.args)}"
        self.args.append((name, param))
        return name

    def alloca(self, type: ScalarType) -> str:
        slot = self.b.fresh()
        self.allocas.append(f"{slot} = memref.alloca() : memref<{type.mlir}>")
        return slot

    def define(self, var: ir.Var, held: object) -> None:
        """Bind a body variable; a scalar also goes to its slot, where other
        blocks find it."""
        if isinstance(held, Value):
            held = arith.cast(self.b, held, self.typed(var))
            if var.name not in self.slots:
                self.slots[var.name] = self.alloca(held.type)
            self.b.emit(f"memref.store {held.name}, {self.slots[var.name]}[] "
                        f": memref<{held.type.mlir}>")
            self.local.add(var.name)
        self.env[var.name] = held

    def lookup(self, var: ir.Var) -> object:
        if var.name in self.slots and var.name not in self.local:
            scalar = self.typed(var)
            self.env[var.name] = self.b.op(
                f"memref.load {self.slots[var.name]}[] : memref<{scalar.mlir}>", scalar)
            self.local.add(var.name)
        return self.env.get(var.name)

    def value(self, var: ir.Var) -> Value:
        found = self.lookup(var)
        if not isinstance(found, Value):
            raise UnsupportedError(
                f"{_where(var.loc)}: '{var.name}' of type {self.typemap.get(var.name)} "
                "used as a scalar in a parfor"
            )
        return found

    def typed(self, var: ir.Var) -> ScalarType:
        return scalar_type(self.typemap[var.name], f"'{var.name}'", var.loc)


# ---- statement and expression rules, keyed by node kind -----------------------

_StmtRule = Callable[[_Translation, ir.Stmt], None]
_ExprRule = Callable[[_Translation, ir.Expr, ir.Var], object]
_STMT_RULES: dict[type, _StmtRule] = {}
_EXPR_RULES: dict[str, _ExprRule] = {}
# calls whose translation needs more than their operands' values (range, the
# work-item functions of explicit kernels): given the translation and the node
CALL_RULES: dict[object, _ExprRule] = {}


def call_rule(*callees: object):
    def register(fn: _ExprRule) -> _ExprRule:
        for callee in callees:
            CALL_RULES[callee] = fn
        return fn

    return register


def _stmt_rule(kind: type):
    def register(fn: _StmtRule) -> _StmtRule:
        _STMT_RULES[kind] = fn
        return fn

    return register


def _expr_rule(*ops: str):
    def register(fn: _ExprRule) -> _ExprRule:
        for op in ops:
            _EXPR_RULES[op] = fn
        return fn

    return register


def _translate_stmt(t: _Translation, stmt: ir.Stmt) -> None:
    handler = _STMT_RULES.get(type(stmt))
    if handler is None:
        raise UnsupportedError(f"{_where(stmt.loc)}: {type(stmt).__name__} in a parfor body")
    handler(t, stmt)


@_stmt_rule(ir.Del)
def _del(t: _Translation, stmt: ir.Del) -> None:
    pass


@_stmt_rule(ir.Assign)
def _assign(t: _Translation, stmt: ir.Assign) -> None:
    rhs, target = stmt.value, stmt.target
    if isinstance(rhs, ir.Var):
        t.define(target, t.lookup(rhs))
    elif isinstance(rhs, (ir.Const, ir.Global, ir.FreeVar)):
        t.define(target, _literal(t, rhs.value, target, stmt.loc))
    elif isinstance(rhs, ir.Expr):
        handler = _EXPR_RULES.get(rhs.op)
        if handler is None:
            raise UnsupportedError(f"{_where(stmt.loc)}: expression '{rhs.op}' in a parfor body")
        t.define(target, handler(t, rhs, target))
    else:
        raise UnsupportedError(f"{_where(stmt.loc)}: {type(rhs).__name__} in a parfor body")


def _literal(t: _Translation, value: object, target: ir.Var, loc: ir.Loc) -> object:
    """A constant or global: a number becomes an SSA constant, a module or
    function a callee to look up rules by."""
    if value is None:
        return None
    if isinstance(value, (np.bool_, np.integer, np.floating)):  # np.int64(3) made outside
        value = value.item()
    if isinstance(value, (bool, int, float)):
        return t.b.constant(value, t.typed(target))
    if isinstance(value, tuple) and all(isinstance(v, (bool, int, float)) for v in value):
        item_types = t.typemap[target.name].types  # a tuple constant: `x, y = 0.0, 1`
        return _Tuple(tuple(
            t.b.constant(v, scalar_type(ty, "tuple item", loc)) for v, ty in zip(value, item_types)
        ))
    if callable(value) or isinstance(value, ModuleType):
        return _Callee(value)
    raise UnsupportedError(f"{_where(loc)}: constant {value!r} in a parfor body")


def _apply_rule(t: _Translation, key: object, operands: list[Value], expr: ir.Expr,
                what: str) -> Value:
    rule = lookup_rule(key)
    if rule is None:
        raise UnsupportedError(f"{_where(expr.loc)}: {what} in a parfor body")
    sig = t.calltypes[expr]
    result = scalar_type(sig.return_type, what, expr.loc)
    if len(operands) > 1 and len(sig.args) == 1 and isinstance(sig.args[0], types.BaseTuple):
        # a *args callee (min, max): its operands meet in the result type
        arg_types = [result] * len(operands)
    else:
        arg_types = [scalar_type(a, what, expr.loc) for a in _computed_in(key, sig)]
    cast_operands = [arith.cast(t.b, v, ty) for v, ty in zip(operands, arg_types)]
    try:
        value = rule(t.b, cast_operands, result)
    except UnsupportedError as exc:
        raise UnsupportedError(f"{_where(expr.loc)}: {exc} in a parfor body") from None
    return arith.cast(t.b, value, result)


# The ufunc of an operator (np.greater for ``>``), to compare mixed types as
# NumPy does
_UFUNC_OF_OPERATOR = {
    op: getattr(np, name)
    for op, name in {**npydecl.NumpyRulesArrayOperator._op_map,
                     **npydecl.NumpyRulesInplaceArrayOperator._op_map}.items()
}


def _computed_in(key: object, sig: Signature) -> tuple[types.Type, ...]:
    """The types a callee computes in. A ufunc's are those of the loop NumPy
    picks (np.minimum of float32 and float64 runs in float64), which Numba's
    call signature leaves as the arguments' own. An operator gets arguments
    of one type from Numba's scalar typing, but an array expression's keep
    theirs (uint8 // int64): Numba's CPU then converts them to the result
    type, or compares them as the operator's ufunc does."""
    arg_types = sig.args
    if not isinstance(key, np.ufunc) and len(set(arg_types)) > 1 \
            and key in _UFUNC_OF_OPERATOR:
        if not isinstance(sig.return_type, types.Boolean):
            return (sig.return_type,) * len(arg_types)
        key = _UFUNC_OF_OPERATOR[key]
    if isinstance(key, np.ufunc):
        loop = ufunc_find_matching_loop(key, arg_types)
        if loop is not None:
            return tuple(loop.inputs)
    return arg_types


@_expr_rule("binop", "inplace_binop")
def _binop(t: _Translation, expr: ir.Expr, target: ir.Var) -> Value:
    if expr.fn in (operator.is_, operator.is_not):
        return _identity_test(t, expr, target)
    operands = [t.value(expr.lhs), t.value(expr.rhs)]
    return _apply_rule(t, expr.fn, operands, expr, f"operator {_name(expr.fn)}")


def _identity_test(t: _Translation, expr: ir.Expr, target: ir.Var) -> Value:
    """``x is None`` / ``x is not None``: decided by the operands' types (a
    value of another type is never None)."""
    nones = [isinstance(t.typemap[v.name], (types.NoneType, types.Omitted))
             for v in (expr.lhs, expr.rhs)]
    if not any(nones):
        raise UnsupportedError(f"{_where(expr.loc)}: 'is' between values in a parfor body")
    same = all(nones)
    return t.b.constant(same if expr.fn is operator.is_ else not same, BOOL)


@_expr_rule("unary")
def _unary(t: _Translation, expr: ir.Expr, target: ir.Var) -> Value:
    return _apply_rule(t, expr.fn, [t.value(expr.value)], expr, f"operator {_name(expr.fn)}")


@_expr_rule("call")
def _call(t: _Translation, expr: ir.Expr, target: ir.Var) -> Value:
    if expr.kws or expr.vararg or expr.varkwarg:
        raise UnsupportedError(f"{_where(expr.loc)}: call with keyword or * arguments")
    callee = t.lookup(expr.func)
    fntype = t.typemap[expr.func.name]
    key = getattr(fntype, "typing_key", callee.obj if isinstance(callee, _Callee) else None)
    try:
        special = CALL_RULES.get(key)
    except TypeError:  # an unhashable typing key has no rule
        special = None
    if special is not None:
        return special(t, expr, target)
    operands = [t.value(a) for a in expr.args]
    return _apply_rule(t, key, operands, expr, f"call to {_name(key)}")


def _name(obj: object) -> str:
    module = getattr(obj, "__module__", None) or ("numpy" if isinstance(obj, np.ufunc) else "")
    name = getattr(obj, "__name__", repr(obj))
    return f"{module}.{name}" if module and module != "builtins" else name


@_expr_rule("getattr")
def _getattr(t: _Translation, expr: ir.Expr, target: ir.Var) -> object:
    base = t.lookup(expr.value)
    if isinstance(base, _Callee):
        # a module's constants (np.inf, math.pi) are numbers, the rest callees
        return _literal(t, getattr(base.obj, expr.attr), target, expr.loc)
    if isinstance(base, _Array) and expr.attr == "shape":
        return _Tuple(tuple(arith.cast(t.b, d, ScalarType("i", 64)) for d in base.dims))
    raise UnsupportedError(f"{_where(expr.loc)}: attribute '{expr.attr}' in a parfor body")


@_expr_rule("cast")
def _cast(t: _Translation, expr: ir.Expr, target: ir.Var) -> object:
    return t.lookup(expr.value)


@_expr_rule("build_tuple")
def _build_tuple(t: _Translation, expr: ir.Expr, target: ir.Var) -> _Tuple:
    return _Tuple(tuple(t.lookup(item) for item in expr.items))


@_expr_rule("exhaust_iter")
def _exhaust_iter(t: _Translation, expr: ir.Expr, target: ir.Var) -> _Tuple:
    held = t.lookup(expr.value)
    if not isinstance(held, _Tuple) or len(held.items) != expr.count:
        raise UnsupportedError(f"{_where(expr.loc)}: unpacking anything but a tuple")
    return held


@_expr_rule("getitem", "static_getitem")
def _getitem(t: _Translation, expr: ir.Expr, target: ir.Var) -> Value:
    base = t.lookup(expr.value)
    if isinstance(base, _Tuple) and expr.op == "static_getitem" and isinstance(expr.index, int):
        return base.items[expr.index]
    if not isinstance(base, _Array):
        raise UnsupportedError(f"{_where(expr.loc)}: indexing a non-array in a parfor body")
    array = base
    note_use(t, array, reads=True)
    return memref.load(t.b, array.memref, array.dtype, _element_offset(t, array, expr),
                       array.memref_type)


@call_rule(range)
def _range(t: _Translation, expr: ir.Expr, target: ir.Var) -> _Range:
    """``range(stop)``, ``range(start, stop)``, ``range(start, stop, step)``."""
    i64 = ScalarType("i", 64)
    bounds = [arith.cast(t.b, t.value(a), i64) for a in expr.args]
    if len(bounds) == 1:
        bounds = [t.b.constant(0, i64), bounds[0]]
    if len(bounds) == 2:
        bounds.append(t.b.constant(1, i64))
    return _Range(*bounds)


@_expr_rule("getiter")
def _getiter(t: _Translation, expr: ir.Expr, target: ir.Var) -> _RangeIterator:
    source = t.lookup(expr.value)
    if not isinstance(source, _Range):
        raise UnsupportedError(f"{_where(expr.loc)}: iterating over anything but range()")
    slot = t.alloca(source.start.type)
    t.b.emit(f"memref.store {source.start.name}, {slot}[] : memref<i64>")
    return _RangeIterator(slot, source)


@_expr_rule("iternext")
def _iternext(t: _Translation, expr: ir.Expr, target: ir.Var) -> _Pair:
    iterator = t.lookup(expr.value)
    b, r = t.b, iterator.range
    current = b.op(f"memref.load {iterator.slot}[] : memref<i64>", r.start.type)
    upward = arith.compare(b, "gt", r.step, b.constant(0, r.step.type))
    valid = arith.select(b, upward, arith.compare(b, "lt", current, r.stop),
                         arith.compare(b, "gt", current, r.stop))
    following = arith.binary(b, "arith.addi", current, r.step)
    b.emit(f"memref.store {following.name}, {iterator.slot}[] : memref<i64>")
    return _Pair(current, valid)


@_expr_rule("pair_first", "pair_second")
def _pair_item(t: _Translation, expr: ir.Expr, target: ir.Var) -> Value:
    pair = t.lookup(expr.value)
    return pair.first if expr.op == "pair_first" else pair.second


def _element_offset(t: _Translation, array: _Array, node: ir.Expr | ir.Stmt) -> Value:
    """Offset of ``array[index]`` for a getitem/setitem node: one integer index per
    dimension, negative ones wrapping around as in Python."""
    static = isinstance(node, ir.StaticSetItem) or (
        isinstance(node, ir.Expr) and node.op == "static_getitem"
    )
    index = node.index
    index_var = node.index_var if static else index
    if index_var is not None:
        held = t.lookup(index_var)
        indices = list(held.items) if isinstance(held, _Tuple) else [held]
    else:  # a constant index of a static_getitem / static_setitem
        constants = index if isinstance(index, tuple) else (index,)
        indices = [t.b.constant(c, ScalarType("i", 64)) if isinstance(c, int) else c
                   for c in constants]
    return element_offset(t, array, indices, node.loc)


def element_offset(t: _Translation, array: _Array, indices: list, loc: ir.Loc) -> Value:
    """Offset of the element at ``indices`` (one integer value per dimension)."""
    if len(indices) != len(array.dims) or not all(isinstance(i, Value) for i in indices):
        raise UnsupportedError(
            f"{_where(loc)}: array '{array.var}' indexed with anything but one "
            f"integer per dimension (slices or partial indexing) in a parfor body"
        )
    b = t.b
    positions = []
    for i, dim in zip(indices, array.dims):
        if i.type.is_float:
            raise UnsupportedError(f"{_where(loc)}: float used as an index")
        pos = arith.cast(b, i, INDEX)
        if i.type.is_signed:
            negative = arith.compare(b, "lt", pos, b.index_constant(0))
            pos = arith.select(b, negative, arith.binary(b, "arith.addi", pos, dim), pos)
        positions.append(pos)
    if array.strides is not None:
        return memref.strided_offset(b, positions, array.strides)
    return memref.linear_index(b, positions, array.dims)


def note_use(t: _Translation, array: _Array, reads: bool = False, writes: bool = False) -> None:
    """Record how the kernel uses an argument array (local arrays are its own)."""
    use = t.arrays.get(array.var)
    if use is not None:
        use.reads |= reads
        use.writes |= writes


def _setitem(t: _Translation, stmt: ir.SetItem | ir.StaticSetItem) -> None:
    array = t.lookup(stmt.target)
    if not isinstance(array, _Array):
        raise UnsupportedError(f"{_where(stmt.loc)}: item assignment to a non-array")
    note_use(t, array, writes=True)
    value = arith.cast(t.b, t.value(stmt.value), array.dtype)
    memref.store(t.b, value, array.memref, array.dtype, _element_offset(t, array, stmt),
                 array.memref_type)


_stmt_rule(ir.SetItem)(_setitem)
_stmt_rule(ir.StaticSetItem)(_setitem)


# ---- the parfor as a whole --------------------------------------------------------


def _allocated_in_init_block(t: _Translation) -> set[str]:
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


def _bind_params(t: _Translation) -> None:
    """Make a kernel argument of every variable the body uses from outside."""
    fresh = _allocated_in_init_block(t)
    for name in sorted(t.parfor.params):
        bind_param(t, name, t.parfor.loc)
        if name in t.arrays:
            t.arrays[name].fresh = name in fresh


def bind_param(t: _Translation, name: str, loc: ir.Loc) -> None:
    """Make kernel arguments of variable ``name``, which the body uses from
    outside: an array's memref, dimensions and (for views) strides; a scalar."""
    nbtype = t.typemap[name]
    if isinstance(nbtype, types.Array):
        dtype = scalar_type(nbtype.dtype, f"array '{name}'", loc)
        ssa = t.add_param(KernelParam("array", name, memref.memref_type(dtype)))
        dims = tuple(
            Value(t.add_param(KernelParam("dim", name, "index", axis)), INDEX)
            for axis in range(nbtype.ndim)
        )
        strides = None if nbtype.layout == "C" else tuple(
            Value(t.add_param(KernelParam("stride", name, "index", axis)), INDEX)
            for axis in range(nbtype.ndim)
        )
        t.env[name] = _Array(name, ssa, dtype, dims, strides)
        t.arrays[name] = ArrayUse(name)
    elif isinstance(nbtype, (types.Function, types.Module, types.NumberClass)):
        t.env[name] = _Callee(getattr(nbtype, "typing_key", None))
    elif isinstance(nbtype, types.BaseTuple):  # of scalars: one argument per item
        t.env[name] = _Tuple(tuple(
            _scalar_param(t, KernelParam("tuple_item", name, "", k), item, loc)
            for k, item in enumerate(nbtype)))
    else:
        t.env[name] = _scalar_param(t, KernelParam("scalar", name, ""), nbtype, loc)


def _scalar_param(t: _Translation, param: KernelParam, nbtype: types.Type,
                  loc: ir.Loc) -> Value:
    """A scalar kernel argument (bools travel as bytes)."""
    ty = scalar_type(nbtype, f"variable '{param.var}'", loc)
    ssa = t.add_param(dataclasses.replace(param, mlir_type=ty.storage))
    stored = Value(ssa, ScalarType("u", 8) if ty.kind == "b" else ty)
    return arith.cast(t.b, stored, ty) if ty.kind == "b" else stored


_Bound = int | str  # a constant, or the SSA name of an index argument


def _loop_bounds(t: _Translation) -> list[tuple[_Bound, _Bound]]:
    """(start, stop) of each loop nest, outermost first; variables become arguments."""
    bounds = []
    for axis, nest in enumerate(t.parfor.loop_nests):
        if nest.step != 1:
            raise UnsupportedError(f"{_where(t.parfor.loc)}: prange with a step other than 1")
        pair = []
        for kind, bound in (("start", nest.start), ("stop", nest.stop)):
            pair.append(bound if isinstance(bound, int)
                        else t.add_param(KernelParam(kind, bound.name, "index", axis)))
        bounds.append((pair[0], pair[1]))
    return bounds


def _bound(b: Builder, bound: _Bound) -> Value:
    return b.index_constant(bound) if isinstance(bound, int) else Value(bound, INDEX)


def _emit_blocks(t: _Translation, blocks: dict[int, ir.Block], after: str) -> None:
    """Numba's body blocks joined by cf branches; leaving the body goes to ``after``."""
    b = t.b
    b.emit(f"cf.br ^bb{min(blocks)}")
    for label in sorted(blocks):
        block = blocks[label]
        b.emit(f"^bb{label}:", indent=-1)
        t.local = set()
        for stmt in block.body:
            if not isinstance(stmt, ir.Terminator):
                _translate_stmt(t, stmt)
        term = block.terminator if block.is_terminated else None
        if term is None or isinstance(term, ir.Return):  # the body ends
            b.emit(f"cf.br {after}")
        elif isinstance(term, ir.Jump):
            b.emit(f"cf.br {_successor(blocks, term.target, after)}")
        elif isinstance(term, ir.Branch):
            cond = arith.cast(b, t.value(term.cond), BOOL)
            b.emit(f"cf.cond_br {cond.name}, {_successor(blocks, term.truebr, after)}, "
                   f"{_successor(blocks, term.falsebr, after)}")
        else:
            raise UnsupportedError(
                f"{_where(term.loc)}: {type(term).__name__.lower()} in a parfor body")


@_stmt_rule(Parfor)
def _nested_parfor(t: _Translation, inner: Parfor) -> None:
    """A prange inside a prange body runs as serial loops inside the outer
    kernel's work-item (the outer loop is the parallel one)."""
    for stmt in inner.init_block.body:
        _translate_stmt(t, stmt)
    _serial_nest(t, inner, 0)


def _serial_nest(t: _Translation, inner: Parfor, axis: int) -> None:
    b, nest = t.b, inner.loop_nests[axis]
    if nest.step != 1:
        raise UnsupportedError(f"{_where(inner.loc)}: prange with a step other than 1")
    start, stop = (b.index_constant(bound) if isinstance(bound, int)
                   else arith.cast(b, t.value(bound), INDEX) for bound in (nest.start, nest.stop))
    label = f"^loop{len(t.allocas)}"  # unique: every loop adds a slot
    position = t.alloca(INDEX)
    b.emit(f"memref.store {start.name}, {position}[] : memref<index>")
    b.emit(f"cf.br {label}_head")
    b.emit(f"{label}_head:", indent=-1)
    current = b.op(f"memref.load {position}[] : memref<index>", INDEX)
    more = arith.compare(b, "lt", current, stop)
    b.emit(f"cf.cond_br {more.name}, {label}_body, {label}_after")
    b.emit(f"{label}_body:", indent=-1)
    following = arith.binary(b, "arith.addi", current, b.index_constant(1))
    b.emit(f"memref.store {following.name}, {position}[] : memref<index>")
    t.local = set()
    t.define(nest.index_variable, current)
    if axis + 1 < len(inner.loop_nests):
        _serial_nest(t, inner, axis + 1)
        b.emit(f"cf.br {label}_head")
    else:
        _emit_blocks(t, inner.loop_body, f"{label}_head")
    b.emit(f"{label}_after:", indent=-1)
    t.local = set()


def _define_indices(t: _Translation, indices: list[Value]) -> None:
    for nest, index in zip(t.parfor.loop_nests, indices):
        t.define(nest.index_variable, index)


def _extents(b: Builder, bounds: list[tuple[_Bound, _Bound]]) -> list[Value]:
    return [arith.binary(b, "arith.maxsi", arith.binary(b, "arith.subi", _bound(b, high),
                                                        _bound(b, low)), b.index_constant(0))
            for low, high in bounds]


def _iteration_count(b: Builder, bounds: list[tuple[_Bound, _Bound]]) -> Value:
    total, *rest = _extents(b, bounds)
    for extent in rest:
        total = arith.binary(b, "arith.muli", total, extent)
    return total


def _delinearize(b: Builder, flat: Value, bounds: list[tuple[_Bound, _Bound]]) -> list[Value]:
    """The loop indices of the ``flat``-th point (row-major) of the nest ``bounds``."""
    indices, rest = [], flat
    extents = _extents(b, bounds[1:])
    for (low, _), extent in reversed(list(zip(bounds[1:], extents))):
        offset = arith.binary(b, "arith.remui", rest, extent)
        indices.insert(0, arith.binary(b, "arith.addi", offset, _bound(b, low)))
        rest = arith.binary(b, "arith.divui", rest, extent)
    # what remains is the outermost index: ``flat`` is within the nest
    return [arith.binary(b, "arith.addi", rest, _bound(b, bounds[0][0]))] + indices


# kernels have at most 3 dimensions: deeper nests fold their outer loops into one
_MAX_KERNEL_DIMS = 3


def _kernel_nest(bounds: list[tuple[_Bound, _Bound]]) -> tuple[list, list]:
    """The loops that make the kernel's first dimension (one loop, or the outer
    loops a nest deeper than a kernel folds together) and the loops after them."""
    cut = max(len(bounds) - _MAX_KERNEL_DIMS + 1, 1)
    return bounds[:cut], bounds[cut:]


def _translate_map_body(t: _Translation, ivs: list[Value],
                        bounds: list[tuple[_Bound, _Bound]]) -> None:
    """One call of the body per point of the iteration space; in a nest deeper
    than a kernel, the first index counts the points of the folded outer loops."""
    folded, _ = _kernel_nest(bounds)
    if len(folded) > 1:
        ivs = _delinearize(t.b, ivs[0], folded) + ivs[1:]
    _define_indices(t, ivs)
    _emit_blocks(t, t.parfor.loop_body, "^exit")
    t.b.emit("^exit:", indent=-1)
    t.b.emit("return")


def _translate_reduction_body(t: _Translation, flat: Value, bounds: list[tuple[_Bound, _Bound]],
                              reductions: list[_ReductionArg]) -> list[Value]:
    """One call per iteration, the ``flat``-th of the nest (row-major): the
    reduction variables come in as arguments and go out as results."""
    b = t.b
    accumulators = [Value(f"%acc{k}", r.dtype) for k, r in enumerate(reductions)]
    for r, acc in zip(reductions, accumulators):
        t.define(_var(t, r.reduction.var), acc)
    _define_indices(t, _delinearize(b, flat, bounds))
    _emit_blocks(t, t.parfor.loop_body, "^exit")
    b.emit("^exit:", indent=-1)
    t.local = set()
    results = [t.value(_var(t, r.reduction.var)) for r in reductions]
    b.emit(f"return {', '.join(v.name for v in results)} : "
           f"{', '.join(v.type.mlir for v in results)}")
    return accumulators


def _var(t: _Translation, name: str) -> ir.Var:
    return ir.Var(t.parfor.init_block.scope, name, t.parfor.loc)


def _reduction_loop(b: Builder, body: str, operands: list[tuple[str, str]],
                    bounds: list[tuple[_Bound, _Bound]], reductions: list[_ReductionArg],
                    lane_count: int, inner_strides: list[str]) -> None:
    """Work-item ``(c, l)`` of a C x L parallel loop (C * L =
    REDUCTION_WORK_ITEMS, L = ``lane_count``) runs the iterations ``r * L + l``
    for the rows ``r`` of chunk ``c`` (the iterations as rows of L, cut into C
    chunks of consecutive rows), carrying the reduction variables from their
    start values (float sums with compensated steps), and stores its partial
    results at ``c * L + l``; chunk 0 also takes the iterations of the last,
    partial row.

    This is the shape a device that vectorizes across work-items (the x
    dimension, here the lanes) reads at full bandwidth: the lanes load
    neighbouring elements, at an offset from a row counter that is the same
    in all of them, and each chunk streams through memory of its own. Strided
    shares (work-item w runs w, w + W, ...) made the OpenCL CPU device gather
    element by element, 5x slower than this. Views run as in ``_map_loop``.
    """
    total = _iteration_count(b, bounds)
    chunks = b.index_constant(REDUCTION_WORK_ITEMS // lane_count)
    lanes = b.index_constant(lane_count)
    rows = arith.binary(b, "arith.divui", total, lanes)
    rows_per_chunk = arith.binary(b, "arith.ceildivui", rows, chunks)
    # what each work-item carries from one iteration to the next, per
    # reduction: its running value, and for a compensated sum the rounding
    # error not yet in it
    starts = [b.constant(r.identity, r.dtype) if r.identity is not None else r.variable
              for r in reductions]
    initial = [v for r, start in zip(reductions, starts)
               for v in ([start, b.constant(0, r.dtype)] if r.compensated else [start])]
    types = ", ".join(r.dtype.mlir for r in reductions)
    state_types = ", ".join(v.type.mlir for v in initial)
    argument_types = ", ".join([type for _, type in operands] + ["index"]
                               + [r.dtype.mlir for r in reductions])

    def iteration(flat: Value, state: list[Value], replaced: dict[str, str]) -> list[Value]:
        """The state after the ``flat``-th iteration: the body carries each
        reduction on, but gives a compensated sum's term alone (what it adds
        to zero), which a compensated step then adds."""
        rest = iter(state)
        held = [(next(rest), next(rest)) if r.compensated else (next(rest),)
                for r in reductions]
        carried = [start.name if r.compensated else value[0].name
                   for r, start, value in zip(reductions, starts, held)]
        results = b.fresh()
        arguments = ", ".join([replaced.get(name, name) for name, _ in operands] + [flat.name]
                              + carried)
        b.emit(f"{results}:{len(reductions)} = func.call @{body}({arguments}) : "
               f"({argument_types}) -> ({types})")
        following = []
        for k, (r, value) in enumerate(zip(reductions, held)):
            result = Value(f"{results}#{k}", r.dtype)
            following += _compensated_add(b, *value, result) if r.compensated else [result]
        return following

    def yield_(state: list[Value]) -> None:
        b.emit(f"scf.yield {', '.join(v.name for v in state)} : {state_types}")

    def results(name: str) -> list[Value]:
        return [Value(f"{name}#{k}", v.type) for k, v in enumerate(initial)]

    def reduce_share(chunk: Value, lane: Value, replaced: dict[str, str]) -> None:
        """Work-item (chunk, lane): its share of the iterations, stored."""
        first_row = arith.binary(b, "arith.muli", chunk, rows_per_chunk)
        end_row = arith.binary(b, "arith.minui", arith.binary(
            b, "arith.addi", first_row, rows_per_chunk), rows)
        loop, row = b.fresh(), Value(b.fresh(), INDEX)
        carried = [Value(b.fresh(), v.type) for v in initial]
        iter_args = ", ".join(f"{c.name} = {v.name}" for c, v in zip(carried, initial))
        with b.region(f"{loop}:{len(initial)} = scf.for {row.name} = {first_row.name} "
                      f"to {end_row.name} step {b.index_constant(1).name} "
                      f"iter_args({iter_args}) -> ({state_types})", "}"):
            row_start = arith.binary(b, "arith.muli", row, lanes)
            yield_(iteration(arith.binary(b, "arith.addi", row_start, lane), carried, replaced))
        last = arith.binary(b, "arith.addi", arith.binary(b, "arith.muli", rows, lanes), lane)
        takes_last = arith.binary(b, "arith.andi", arith.compare(b, "eq", chunk, zero),
                                  arith.compare(b, "lt", last, total))
        work_item = arith.binary(b, "arith.addi",
                                 arith.binary(b, "arith.muli", chunk, lanes), lane)

        def store(state: list[Value]) -> None:
            rest = iter(state)
            for r in reductions:
                value = next(rest)
                if r.compensated:  # the sum with the error it has not taken in yet
                    value = arith.binary(b, "arith.subf", value, next(rest))
                memref.store(b, value, r.partials, r.dtype, work_item)

        # each branch stores its own results: an scf.if that yielded them made
        # the OpenCL CPU device's vectorizer carry a loop-invariant float sum
        # (``s += 1.0``) from one work-item into the next
        with b.region(f"scf.if {takes_last.name}"):
            store(iteration(last, results(loop), replaced))
            b.emit("} else {", indent=-1)
            store(results(loop))

    zero = b.index_constant(0)
    with scf.parallel(b, [zero, zero], [chunks, lanes]) as (chunk, lane):
        _by_inner_strides(b, inner_strides, lambda replaced: reduce_share(chunk, lane, replaced))


def _compensated_add(b: Builder, total: Value, error: Value, term: Value) -> list[Value]:
    """Kahan's step: ``total + term``, and the rounding error of the sum so far
    (``total - error`` is the sum), so that a work-item's share of a float sum
    is exact to a few ulps however many terms it adds."""
    corrected = arith.binary(b, "arith.subf", term, error)
    following = arith.binary(b, "arith.addf", total, corrected)
    lost = arith.binary(b, "arith.subf", arith.binary(b, "arith.subf", following, total),
                        corrected)
    # past an infinity (or an overflow) there is no error to carry, and
    # carrying inf - inf would make the sum NaN
    magnitude = b.op(f"math.absf {lost.name} : {lost.type.mlir}", lost.type)
    finite = arith.compare(b, "lt", magnitude, b.constant(float("inf"), lost.type))
    return [following, arith.select(b, finite, lost, b.constant(0, lost.type))]


def _successor(blocks: dict, label: int, after: str) -> str:
    # a jump out of the body is the end of one iteration
    return f"^bb{label}" if label in blocks else after


def _add(a, b):
    return a + b


def _multiply(a, b):
    return a * b


# how partial results combine, by Numba's reduction operator: a work-item's
# ``t -= x`` accumulates -sum(x) from 0, so partials add; ``t /= x`` multiplies
_COMBINE_BY_OPERATOR = {
    operator.iadd: (_add, 0), operator.isub: (_add, 0),
    operator.imul: (_multiply, 1), operator.itruediv: (_multiply, 1),
}


def _min(a, b):
    return min(a, b)


def _max(a, b):
    return max(a, b)


def _minimum(a, b):
    return np.minimum(a, b)


def _maximum(a, b):
    return np.maximum(a, b)


def _fmin(a, b):
    return np.fmin(a, b)


def _fmax(a, b):
    return np.fmax(a, b)


# min/max-like reductions start from the variable's own value (they are
# idempotent) and combine with the function they use (each its own Python
# function: Numba caches what it compiles into the host code by code object)
_COMBINE_BY_CALLEE = {
    builtins.min: _min, builtins.max: _max, np.minimum: _minimum, np.maximum: _maximum,
    np.fmin: _fmin, np.fmax: _fmax,
}


@dataclass(frozen=True)
class _ReductionArg:
    reduction: Reduction
    dtype: ScalarType
    partials: str  # SSA name of the partial results' memref argument
    variable: Value  # the variable's value before the loop (an argument)
    identity: int | None  # what work-items start from; None: from ``variable``
    compensated: bool  # a float sum, whose work-items add in compensated steps


def _reductions(t: _Translation) -> list[_ReductionArg]:
    """Each reduction variable, its partials argument and the value its
    work-items start from."""
    found = []
    for name in t.parfor.redvars:
        info = t.parfor.reddict[name]
        dtype = scalar_type(t.typemap[name], f"reduction variable '{_user_names([name])}'",
                            t.parfor.loc)
        if dtype.kind == "b":
            raise UnsupportedError(
                f"{_where(t.parfor.loc)}: reduction into {_user_names([name])} of type bool")
        if info.redop in _COMBINE_BY_OPERATOR:
            combine, identity = _COMBINE_BY_OPERATOR[info.redop]
        else:
            combine, identity = _min_max_callee(t, info.reduce_nodes), None
            if combine is None:
                raise UnsupportedError(
                    f"{_where(t.parfor.loc)}: reduction into {_user_names([name])} with an "
                    "operator other than +=, -=, *=, /=, min or max")
        partials = t.add_param(KernelParam("partials", name, memref.memref_type(dtype)))
        compensated = dtype.is_float and info.redop in (operator.iadd, operator.isub)
        found.append(_ReductionArg(Reduction(name, combine), dtype, partials, t.env[name],
                                   identity, compensated))
    return found


def _min_max_callee(t: _Translation, nodes: list) -> Callable | None:
    for node in nodes:
        if isinstance(node, ir.Assign) and isinstance(node.value, ir.Expr) \
                and node.value.op == "call":
            key = getattr(t.typemap[node.value.func.name], "typing_key", None)
            if key in _COMBINE_BY_CALLEE:
                return _COMBINE_BY_CALLEE[key]
    return None


def _user_names(names: object) -> str:
    """Variable names as the user wrote them (Numba renames ``s`` to ``s.2``)."""
    return ", ".join(sorted({name.split(".")[0] for name in names}))


def translate_parfor(parfor: Parfor, typemap: dict, calltypes: dict, name: str,
                     vector_lanes: int) -> ParforKernel:
    """The kernel MLIR of ``parfor`` and what the host must pass to it, for a
    device that runs ``vector_lanes`` work-items in one vector."""
    if parfor.races:
        raise UnsupportedError(
            f"{_where(parfor.loc)}: variable(s) {_user_names(parfor.races)} assigned in "
            "the loop and read after it"
        )
    t = _Translation(parfor, typemap, calltypes)
    # the body goes in its own function, called by the parallel loop
    main, body = t.b, Builder()
    t.b = body
    _bind_params(t)
    bounds = _loop_bounds(t)
    reductions = _reductions(t)
    operands = [(ssa, p.mlir_type) for ssa, p in t.args]
    if reductions:
        flat = Value("%iv0", INDEX)
        accumulators = _translate_reduction_body(t, flat, bounds, reductions)
        body_args = [flat] + accumulators
        results = f" -> ({', '.join(r.dtype.mlir for r in reductions)})"
        t.b = main
        _reduction_loop(main, f"{name}_body", operands, bounds, reductions,
                        reduction_lanes(vector_lanes), _inner_strides(t))
        ndim = 2  # chunks x lanes
    else:
        ndim = 1 + len(_kernel_nest(bounds)[1])
        body_args = [Value(f"%iv{axis}", INDEX) for axis in range(ndim)]
        _translate_map_body(t, body_args, bounds)
        results = ""
        t.b = main
        _map_loop(main, f"{name}_body", operands, bounds, _inner_strides(t))
    signature = ", ".join(f"{ssa}: {type}" for ssa, type in operands)
    body_signature = ", ".join([f"{ssa}: {type}" for ssa, type in operands]
                               + [f"{v.name}: {v.type.mlir}" for v in body_args])
    body_text = "\n".join(["    " + line for line in t.allocas] + body.lines)
    text = (
        f"module {{\n  func.func @{name}({signature}) {{\n" + "\n".join(main.lines)
        + f"\n    return\n  }}\n  func.func private @{name}_body({body_signature}){results} {{\n"
        + body_text + "\n  }\n}\n"
    )
    return ParforKernel(name, text, tuple(p for _, p in t.args), t.arrays, ndim,
                        tuple(r.reduction for r in reductions))


def _map_loop(b: Builder, body: str, operands: list[tuple[str, str]],
              bounds: list[tuple[_Bound, _Bound]], inner_strides: list[str]) -> None:
    """The parallel loop over the iteration space, calling the body at each point.

    Views (``a[1:-1, 1:-1]``) come with their strides as arguments, and an
    innermost stride the device compiler cannot see makes it gather and
    scatter element by element. When every view's innermost stride
    (``inner_strides``) is 1, as for slices of rows, the body is called with
    the constant 1 in their place, so that its copy inlined there reads and
    writes neighbouring elements in neighbouring work-items; the test is the
    same in every work-item, so the device runs one version or the other."""
    folded, rest = _kernel_nest(bounds)
    if len(folded) > 1:  # the folded outer loops count their points from 0
        lower, upper = [b.index_constant(0)], [_iteration_count(b, folded)]
    else:
        lower, upper = [_bound(b, folded[0][0])], [_bound(b, folded[0][1])]
    lower += [_bound(b, low) for low, _ in rest]
    upper += [_bound(b, high) for _, high in rest]
    types = [type for _, type in operands] + ["index"] * len(lower)

    def call(ivs: list[Value], replaced: dict[str, str]) -> None:
        arguments = [replaced.get(name, name) for name, _ in operands] + [iv.name for iv in ivs]
        b.emit(f"func.call @{body}({', '.join(arguments)}) : ({', '.join(types)}) -> ()")

    with scf.parallel(b, lower, upper) as ivs:
        _by_inner_strides(b, inner_strides, lambda replaced: call(ivs, replaced))


def _by_inner_strides(b: Builder, inner_strides: list[str],
                      emit: Callable[[dict[str, str]], None]) -> None:
    """``emit(replaced)``, code that calls the body with the arguments that
    ``replaced`` maps replaced: with none, or, when some arguments are the
    innermost strides of views, as two versions, the first run when they all
    are 1 and given the constant 1 for them."""
    if not inner_strides:
        emit({})
        return
    one = b.index_constant(1)
    unit = arith.compare(b, "eq", Value(inner_strides[0], INDEX), one)
    for stride in inner_strides[1:]:
        unit = arith.binary(b, "arith.andi", unit,
                            arith.compare(b, "eq", Value(stride, INDEX), one))
    with b.region(f"scf.if {unit.name}"):
        emit({stride: one.name for stride in inner_strides})
        b.emit("} else {", indent=-1)
        emit({})


def _inner_strides(t: _Translation) -> list[str]:
    """The arguments that hold the innermost stride of an array view."""
    return [ssa for ssa, param in t.args
            if param.kind == "stride" and param.axis == t.typemap[param.var].ndim - 1]


def kernel_name(function_name: str, ordinal: int) -> str:
    """A symbol for the ordinal-th parfor of a function (never the process-wide
    Parfor.id, which would make the same code hash differently)."""
    base = re.sub(r"\W", "_", function_name.split(".")[-1]) or "fn"
    return f"{base}_parfor{ordinal}"
