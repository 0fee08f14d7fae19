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
import contextlib
import dataclasses
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import ClassVar

import numba
import numpy as np
from numba.core import ir, types
from numba.core.typing import Signature, npydecl
from numba.core.typing.builtins import IndexValue, IndexValueType
from numba.np.numpy_support import ufunc_find_matching_loop
from numba.parfors.parfor import Parfor

from ..dialects import (
    BOOL,
    F32,
    F64,
    I64,
    INDEX,
    Builder,
    Complex,
    ScalarType,
    Value,
    arith,
    lookup_complex_rule,
    lookup_rule,
    memref,
    scf,
)
from ..errors import UnsupportedError


@dataclass(frozen=True)
class KernelParam:
    """One argument of the kernel function and where the host gets it.

    kind: ``array`` (device copy of array ``var``), ``partials`` (a device buffer
    of REDUCTION_WORK_ITEMS partial results of reduction variable ``var``, of
    its part ``axis`` for an IndexValue, a complex number or a variable whose
    last assignment the kernel reports),
    ``dim`` (``var.shape[axis]``),
    ``stride`` (``var.strides[axis]`` in elements), ``start``/``stop`` (bound of
    loop nest ``axis``, held in ``var``), ``scalar``, ``tuple_item`` (item
    ``axis`` of a tuple of scalars, an IndexValue or a complex number),
    ``num_threads`` (what ``numba.get_num_threads()`` gives at the launch),
    ``pointer`` (array ``var`` again, as a SPIR-V pointer for atomics).
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
    # a variable the loop assigns and the code after it reads: the kernel
    # carries the iteration and the value of its last assignment (as an
    # IndexValue), and the latest assignment wins, as in a serial loop
    last_value: bool = False


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
    # element offset of a view's first element (``a[i]``, ``a[1:3]`` in a body)
    offset: Value | None = None
    # of complex numbers: element k is dtype's floats 2k (real) and 2k+1 (imag)
    is_complex: bool = False


@dataclass(frozen=True)
class _Callee:
    obj: object  # a module or function, before or after attribute lookup


@dataclass(frozen=True)
class _Tuple:
    items: tuple[object, ...]


@dataclass(frozen=True)
class _IndexValue:
    """Numba's ``IndexValue(index, value)``, what np.argmin / np.argmax reduce."""

    index: Value
    value: Value
    PARTS: ClassVar[tuple[str, str]] = ("index", "value")  # in the order of its struct


def composite_of(nbtype: types.Type | None) -> type | None:
    """The value class of a Numba type held as two scalars (IndexValue,
    complex), or None."""
    if isinstance(nbtype, IndexValueType):
        return _IndexValue
    if isinstance(nbtype, types.Complex):
        return Complex
    return None


def scalar_items(nbtype: types.Type) -> tuple[types.Type, ...]:
    """The scalars a tuple, an IndexValue or a complex number is made of, in order."""
    if isinstance(nbtype, IndexValueType):
        return (types.intp, nbtype.val_typ)
    if isinstance(nbtype, types.Complex):
        return (nbtype.underlying_float,) * 2
    return tuple(nbtype)


@dataclass(frozen=True)
class _Slice:
    """``slice(start, stop, step)``; None where the slice leaves a part out."""

    start: Value | None
    stop: Value | None
    step: int | None  # a constant: the view's shape depends on its sign


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
    threads: str | None = None  # the slot of get_num_threads() in the body
    # variables whose last assignment the kernel reports -> their "assigned in
    # this iteration" flag slot
    assigned: dict[str, str] = field(default_factory=dict)

    def add_param(self, param: KernelParam) -> str:
        name = f"%arg{len(self.args)}"
        self.args.append((name, param))
        return name

    def alloca(self, type: ScalarType) -> str:
        slot = self.b.fresh()
        self.allocas.append(f"{slot} = memref.alloca() : memref<{type.mlir}>")
        return slot

    def define(self, var: ir.Var, held: object) -> None:
        """Bind a body variable; a scalar (each part of an IndexValue or a
        complex number) also goes to its slot, where other blocks find it."""
        composite = composite_of(self.typemap.get(var.name))
        if composite is Complex and isinstance(held, Value):  # x = 1.0 of a complex x
            held = _as_complex(self.b, held, self._part_types(var)[0])
        if isinstance(held, Value):
            held = arith.cast(self.b, held, self.typed(var))
            self._store(var.name, held)
        elif isinstance(held, (_IndexValue, Complex)):
            held = type(held)(*(arith.cast(self.b, getattr(held, part), ty) for part, ty in
                                zip(held.PARTS, self._part_types(var))))
            for part in held.PARTS:
                self._store(f"{var.name}.{part}", getattr(held, part))
        if isinstance(held, (Value, _IndexValue, Complex)):
            self.local.add(var.name)
        if var.name in self.assigned:
            self.b.emit(f"memref.store {self.b.constant(True, BOOL).name}, "
                        f"{self.assigned[var.name]}[] : memref<i1>")
        self.env[var.name] = held

    def _store(self, slot_name: str, value: Value) -> None:
        if slot_name not in self.slots:
            self.slots[slot_name] = self.alloca(value.type)
        self.b.emit(f"memref.store {value.name}, {self.slots[slot_name]}[] "
                    f": memref<{value.type.mlir}>")

    def _load(self, slot_name: str, type: ScalarType) -> Value:
        return self.b.op(f"memref.load {self.slots[slot_name]}[] : memref<{type.mlir}>", type)

    def _part_types(self, var: ir.Var) -> list[ScalarType]:
        return [scalar_type(ty, f"'{var.name}'", var.loc)
                for ty in scalar_items(self.typemap[var.name])]

    def lookup(self, var: ir.Var) -> object:
        if var.name not in self.local:
            composite = composite_of(self.typemap.get(var.name))
            if var.name in self.slots:
                self.env[var.name] = self._load(var.name, self.typed(var))
                self.local.add(var.name)
            elif composite is not None and f"{var.name}.{composite.PARTS[0]}" in self.slots:
                self.env[var.name] = composite(*(
                    self._load(f"{var.name}.{part}", ty)
                    for part, ty in zip(composite.PARTS, self._part_types(var))))
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
    static = _static_value(t.typemap.get(target.name))
    if static is not None:
        t.define(target, static)
    elif isinstance(rhs, ir.Var):
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


def _static_value(nbtype: types.Type | None) -> _Callee | None:
    """What a variable holds when its type alone says what it is (a scalar
    type such as ``np.float64`` or ``a.dtype.type``, a dtype, a literal string):
    nothing is computed for it at run time, so neither is it in the kernel."""
    if isinstance(nbtype, types.NumberClass):
        return _Callee(nbtype.instance_type)  # called, it converts
    if isinstance(nbtype, (types.DType, types.StringLiteral)):
        return _Callee(nbtype)
    return None


def _literal(t: _Translation, value: object, target: ir.Var, loc: ir.Loc) -> object:
    """A constant or global: a number becomes an SSA constant, a module or
    function a callee to look up rules by."""
    if value is None:
        return None
    if isinstance(value, (np.bool_, np.number)):  # np.int64(3) made outside
        value = value.item()
    if isinstance(value, complex):
        part = scalar_type(t.typemap[target.name].underlying_float, "constant", loc)
        return Complex(t.b.constant(value.real, part), t.b.constant(value.imag, part))
    if isinstance(value, (bool, int, float)):
        return t.b.constant(value, t.typed(target))
    if isinstance(value, tuple) and all(isinstance(v, (bool, int, float)) for v in value):
        item_types = t.typemap[target.name].types  # a tuple constant: `x, y = 0.0, 1`
        return _Tuple(tuple(
            t.b.constant(v, scalar_type(ty, "tuple item", loc)) for v, ty in zip(value, item_types)
        ))
    if isinstance(value, slice):  # a[1:3] with constant bounds
        bounds = [None if v is None else t.b.constant(v, ScalarType("i", 64))
                  for v in (value.start, value.stop)]
        return _slice_of(*bounds, value.step, loc)
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
    return _operate(t, expr.fn, [expr.lhs, expr.rhs], expr, f"operator {_name(expr.fn)}")


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
    return _operate(t, expr.fn, [expr.value], expr, f"operator {_name(expr.fn)}")


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
    return _call_on_scalars(t, expr, key)


def _call_on_scalars(t: _Translation, expr: ir.Expr, key: object) -> object:
    return _operate(t, key, expr.args, expr, f"call to {_name(key)}")


def _operate(t: _Translation, key: object, args: list[ir.Var], expr: ir.Expr,
             what: str) -> object:
    """An operator or callee on scalar or complex operands."""
    result = t.calltypes[expr].return_type
    if not any(isinstance(ty, types.Complex)
               for ty in [result, *(t.typemap[a.name] for a in args)]):
        return _apply_rule(t, key, [t.value(a) for a in args], expr, what)
    rule = lookup_complex_rule(key)
    if rule is None:
        raise UnsupportedError(f"{_where(expr.loc)}: {what} on complex numbers in a parfor body")
    widest = max((ty for ty in [result, *(t.typemap[a.name] for a in args)]
                  if isinstance(ty, types.Complex)), key=lambda ty: ty.bitwidth)
    part = scalar_type(widest.underlying_float, what, expr.loc)
    value = rule(t.b, [_as_complex(t.b, t.lookup(a), part) for a in args])
    if isinstance(result, types.Complex):
        return _as_complex(t.b, value, scalar_type(result.underlying_float, what, expr.loc))
    return arith.cast(t.b, value, scalar_type(result, what, expr.loc))


def _as_complex(b: Builder, held: object, part: ScalarType) -> Complex:
    """``held`` (a complex or real value) as a complex of ``part`` floats."""
    if isinstance(held, Complex):
        return Complex(*(arith.cast(b, getattr(held, p), part) for p in Complex.PARTS))
    if not isinstance(held, Value):
        raise UnsupportedError(f"{held!r} used as a number in a parfor body")
    return Complex(arith.cast(b, held, part), b.constant(0.0, part))


@call_rule(builtins.float)
def _float(t: _Translation, expr: ir.Expr, target: ir.Var) -> Value:
    """``float(x)``; of a string literal (``float('inf')``), the constant it
    names, as Numba's CPU code computes it once."""
    arg_type = t.typemap[expr.args[0].name] if len(expr.args) == 1 else None
    if isinstance(arg_type, types.StringLiteral):
        try:
            value = float(arg_type.literal_value)
        except ValueError:
            raise UnsupportedError(f"{_where(expr.loc)}: float({arg_type.literal_value!r}) "
                                   "is not a number") from None
        return t.b.constant(value, t.typed(target))
    return _call_on_scalars(t, expr, builtins.float)


@call_rule(IndexValue)
def _index_value(t: _Translation, expr: ir.Expr, target: ir.Var) -> _IndexValue:
    index, value = (t.value(a) for a in expr.args)
    return _IndexValue(index, value)


@call_rule(builtins.min, builtins.max)
def _min_max(t: _Translation, expr: ir.Expr, target: ir.Var) -> object:
    """min/max of scalars, or of two IndexValues as Numba orders them
    (numba/cpython/builtins.py, indval_min/indval_max): a NaN value wins,
    equal values go to the smaller index."""
    key = t.typemap[expr.func.name].typing_key
    if not isinstance(t.typemap[target.name], IndexValueType):
        return _call_on_scalars(t, expr, key)
    first, second = (t.lookup(a) for a in expr.args)
    b = t.b
    nan = [arith.compare(b, "ne", v.value, v.value) if v.value.type.is_float
           else b.constant(False, BOOL) for v in (first, second)]
    ahead = arith.compare(b, "lt" if key is builtins.min else "gt", second.value, first.value)
    tie = arith.compare(b, "eq", second.value, first.value)
    earlier = arith.compare(b, "le", second.index, first.index)
    # a NaN second wins unless the first is a NaN too, at an earlier index; a
    # number second wins if it is ahead, or equal with an earlier index (both
    # compares are false against a NaN first, which then stays)
    first_is_number = arith.binary(b, "arith.xori", nan[0], b.constant(True, BOOL))
    takes_second = arith.select(
        b, nan[1], arith.binary(b, "arith.ori", first_is_number, earlier),
        arith.binary(b, "arith.ori", ahead, arith.binary(b, "arith.andi", tie, earlier)))
    return _IndexValue(*(arith.select(b, takes_second, getattr(second, part), getattr(first, part))
                         for part in _IndexValue.PARTS))


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
    if isinstance(base, (_IndexValue, Complex)) and expr.attr in base.PARTS:
        return getattr(base, expr.attr)
    if isinstance(base, Value) and expr.attr in Complex.PARTS:  # of a real number
        return base if expr.attr == "real" else t.b.constant(0, base.type)
    fields = getattr(t.typemap[expr.value.name], "fields", ())
    if isinstance(base, _Tuple) and expr.attr in fields:  # a namedtuple's field
        return base.items[fields.index(expr.attr)]
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
def _getitem(t: _Translation, expr: ir.Expr, target: ir.Var) -> object:
    base = t.lookup(expr.value)
    if isinstance(base, _Tuple) and expr.op == "static_getitem" and isinstance(expr.index, int):
        return base.items[expr.index]
    if isinstance(base, _Tuple) and expr.op == "getitem":
        return _tuple_item(t, base, t.lookup(expr.index), expr.loc)
    if not isinstance(base, _Array):
        raise UnsupportedError(f"{_where(expr.loc)}: indexing a non-array in a parfor body")
    array, indices = base, _indices(t, expr)
    if len(indices) < len(array.dims) or any(isinstance(i, _Slice) for i in indices):
        return _view(t, array, indices, expr.loc)
    note_use(t, array, reads=True)
    offsets = _float_offsets(t.b, array, element_offset(t, array, indices, expr.loc))
    loaded = [memref.load(t.b, array.memref, array.dtype, at, array.memref_type)
              for at in offsets]
    return Complex(*loaded) if array.is_complex else loaded[0]


def _float_offsets(b: Builder, array: _Array, offset: Value) -> list[Value]:
    """Where element ``offset`` is in the memref: one offset, or for complex
    numbers those of its real and imaginary parts."""
    if not array.is_complex:
        return [offset]
    real = arith.binary(b, "arith.muli", offset, b.index_constant(2))
    return [real, arith.binary(b, "arith.addi", real, b.index_constant(1))]


def _tuple_item(t: _Translation, held: _Tuple, index: object, loc: ir.Loc) -> Value:
    """``tup[i]`` of a tuple of scalars of one type, for a variable ``i``: a
    select among the items (negative ``i`` counts from the end; like array
    indexing in a kernel, there is no bounds check)."""
    items = held.items
    if not (items and isinstance(index, Value) and all(isinstance(v, Value) for v in items)
            and len({v.type for v in items}) == 1):
        raise UnsupportedError(
            f"{_where(loc)}: indexing a tuple with a variable unless its items are scalars "
            "of one type")
    b = t.b
    position = _position(b, index, b.index_constant(len(items)), loc)
    chosen = items[0]
    for k, item in enumerate(items[1:], start=1):
        chosen = arith.select(b, arith.compare(b, "eq", position, b.index_constant(k)), item,
                              chosen)
    return chosen


def _thread_count_slot(t: _Translation) -> str:
    """The slot that holds each iteration's thread count: Numba's workers
    start with the launching thread's, set_num_threads in the body changes
    it for the rest of the iteration (a thread-local setting in Numba)."""
    if t.threads is None:
        launching = t.add_param(KernelParam("num_threads", "", "i64"))
        t.threads = t.alloca(I64)
        t.allocas.append(f"memref.store {launching}, {t.threads}[] : memref<i64>")
    return t.threads


@call_rule(numba.get_num_threads)
def _get_num_threads(t: _Translation, expr: ir.Expr, target: ir.Var) -> Value:
    return t.b.op(f"memref.load {_thread_count_slot(t)}[] : memref<i64>", I64)


@call_rule(numba.set_num_threads)
def _set_num_threads(t: _Translation, expr: ir.Expr, target: ir.Var) -> None:
    # unchecked: a kernel cannot raise Numba's ValueError for a count out of
    # 1..NUMBA_NUM_THREADS
    (count,) = expr.args
    value = arith.cast(t.b, t.value(count), I64)
    t.b.emit(f"memref.store {value.name}, {_thread_count_slot(t)}[] : memref<i64>")


def _constant(t: _Translation, var: ir.Var) -> object:
    """The value of ``var`` when compiling: a literal, a constant, or a tuple
    of them built in the parfor; None when it is not known."""
    nbtype = t.typemap[var.name]
    if isinstance(nbtype, types.Literal):
        return nbtype.literal_value
    definition = _definitions(t.parfor).get(var.name)
    if isinstance(definition, ir.Const):
        return definition.value
    if isinstance(definition, ir.Var):
        return _constant(t, definition)
    if isinstance(definition, ir.Expr) and definition.op == "build_tuple":
        return tuple(_constant(t, item) for item in definition.items)
    return None


def _definitions(parfor: Parfor) -> dict[str, object]:
    """What each variable of the parfor (and the parfors nested in it) is
    assigned, when it is assigned once."""
    found: dict[str, object] = {}
    seen: set[str] = set()
    blocks = [parfor.init_block, *parfor.loop_body.values()]
    while blocks:
        for stmt in blocks.pop().body:
            if isinstance(stmt, Parfor):
                blocks += [stmt.init_block, *stmt.loop_body.values()]
            elif isinstance(stmt, ir.Assign):
                name = stmt.target.name
                found[name] = None if name in seen else stmt.value
                seen.add(name)
    return found


# memory space of a work-item's own arrays (SPIR-V Function storage)
PRIVATE_MEMORY_SPACE = "#spirv.storage_class<Function>"


@call_rule(np.empty)
def _private_array(t: _Translation, expr: ir.Expr, target: ir.Var) -> _Array:
    """``np.empty`` in a body (what np.zeros / np.ones there become), of a shape
    known when compiling: an array of the work-item's own, made afresh in each
    iteration."""
    shape = _constant(t, expr.args[0])
    shape = shape if isinstance(shape, tuple) else (shape,)
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise UnsupportedError(
            f"{_where(expr.loc)}: an array made in a parfor body with a shape that is not "
            "a constant")
    nbtype = t.typemap[target.name]
    dtype = scalar_type(nbtype.dtype, "array made in a parfor body", expr.loc)
    memref_type = f"memref<{max(math.prod(shape), 1)}x{dtype.storage}, {PRIVATE_MEMORY_SPACE}>"
    name = t.b.fresh()
    t.allocas.append(f"{name} = memref.alloca() : {memref_type}")
    dims = tuple(t.b.index_constant(n) for n in shape)
    return _Array(target.name, name, dtype, dims, memref_type=memref_type)


@call_rule(numba.get_parallel_chunksize)
def _get_parallel_chunksize(t: _Translation, expr: ir.Expr, target: ir.Var) -> Value:
    # inside a parallel region Numba's workers run with the chunk size reset
    # to 0 (the default scheduling); a work-item has no chunk size of its own
    return t.b.constant(0, I64)


@call_rule(slice)
def _slice(t: _Translation, expr: ir.Expr, target: ir.Var) -> _Slice:
    """``slice(stop)``, ``slice(start, stop)``, ``slice(start, stop, step)``
    (what ``a[i:j]`` and ``a[:, i]`` build); the step must be a constant."""
    parts = [t.lookup(a) for a in expr.args]
    if len(parts) == 1:
        parts = [None] + parts
    step = None
    if len(parts) == 3:
        step_type = t.typemap[expr.args[2].name]
        if not isinstance(step_type, (types.NoneType, types.IntegerLiteral)):
            raise UnsupportedError(f"{_where(expr.loc)}: slice with a variable step")
        step = getattr(step_type, "literal_value", None)
    return _slice_of(parts[0], parts[1], step, expr.loc)


def _slice_of(start: object, stop: object, step: int | None, loc: ir.Loc) -> _Slice:
    if step == 0:
        raise UnsupportedError(f"{_where(loc)}: slice step cannot be zero")
    for bound in (start, stop):
        if not (bound is None or isinstance(bound, Value)) or (
                isinstance(bound, Value) and bound.type.is_float):
            raise UnsupportedError(f"{_where(loc)}: slice bound that is not an integer")
    return _Slice(start, stop, step)


def _view(t: _Translation, array: _Array, indices: list, loc: ir.Loc) -> _Array:
    """The view ``array[indices]``: an integer index drops its dimension, a
    slice keeps it with the slice's bounds, dimensions past the indices stay
    whole. The view shares the array's memref (and its use record)."""
    if len(indices) > len(array.dims) or not all(isinstance(i, (Value, _Slice))
                                                 for i in indices):
        raise UnsupportedError(
            f"{_where(loc)}: array '{array.var}' indexed with anything but integers and "
            "slices in a parfor body")
    b = t.b
    offset = array.offset or b.index_constant(0)
    dims, strides = [], []
    for axis, (dim, stride) in enumerate(zip(array.dims,
                                             array.strides or _contiguous_strides(b, array.dims))):
        index = indices[axis] if axis < len(indices) else _Slice(None, None, None)
        if isinstance(index, _Slice):
            start, length = _slice_bounds(b, index, dim)
            dims.append(length)
            strides.append(arith.binary(b, "arith.muli", stride,
                                        b.index_constant(index.step or 1)))
        else:
            start = _position(b, index, dim, loc)
        offset = arith.binary(b, "arith.addi", offset, arith.binary(b, "arith.muli", start, stride))
    return dataclasses.replace(array, dims=tuple(dims), strides=tuple(strides), offset=offset)


def _contiguous_strides(b: Builder, dims: tuple[Value, ...]) -> tuple[Value, ...]:
    strides = [b.index_constant(1)]
    for dim in reversed(dims[1:]):
        strides.insert(0, arith.binary(b, "arith.muli", strides[0], dim))
    return tuple(strides)


def _slice_bounds(b: Builder, s: _Slice, dim: Value) -> tuple[Value, Value]:
    """The first position and the length of slice ``s`` of a dimension of
    ``dim`` elements, as Python's ``slice.indices`` computes them: negative
    bounds count from the end, then bounds are clipped to the dimension."""
    step = s.step or 1
    one = b.index_constant(1)
    last = arith.binary(b, "arith.subi", dim, one)
    low, high = (b.index_constant(0), dim) if step > 0 else (b.index_constant(-1), last)

    def clipped(bound: Value | None, default: Value) -> Value:
        if bound is None:
            return default
        position = _wrapped(b, bound, dim)
        return arith.binary(b, "arith.maxsi", low, arith.binary(b, "arith.minsi", position, high))

    start = clipped(s.start, low if step > 0 else last)
    stop = clipped(s.stop, high if step > 0 else low)
    span = (arith.binary(b, "arith.subi", stop, start) if step > 0
            else arith.binary(b, "arith.subi", start, stop))
    count = arith.binary(b, "arith.ceildivsi", span, b.index_constant(abs(step)))
    return start, arith.binary(b, "arith.maxsi", count, b.index_constant(0))


def _wrapped(b: Builder, i: Value, dim: Value) -> Value:
    """Index ``i`` as a position: a negative one counts from the end, as in Python."""
    position = arith.cast(b, i, INDEX)
    if not i.type.is_signed:
        return position
    negative = arith.compare(b, "lt", position, b.index_constant(0))
    return arith.select(b, negative, arith.binary(b, "arith.addi", position, dim), position)


def _position(b: Builder, i: Value, dim: Value, loc: ir.Loc) -> Value:
    if i.type.is_float:
        raise UnsupportedError(f"{_where(loc)}: float used as an index")
    return _wrapped(b, i, dim)


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


def _indices(t: _Translation, node: ir.Expr | ir.Stmt) -> list:
    """The index items of a getitem/setitem node: integer values, slices."""
    static = isinstance(node, ir.StaticSetItem) or (
        isinstance(node, ir.Expr) and node.op == "static_getitem"
    )
    index = node.index
    index_var = node.index_var if static else index
    if index_var is not None:
        held = t.lookup(index_var)
        return list(held.items) if isinstance(held, _Tuple) else [held]
    # a constant index of a static_getitem / static_setitem
    return [_literal(t, c, None, node.loc) if isinstance(c, slice)
            else t.b.constant(c, ScalarType("i", 64)) if isinstance(c, int) else c
            for c in (index if isinstance(index, tuple) else (index,))]


def element_offset(t: _Translation, array: _Array, indices: list, loc: ir.Loc) -> Value:
    """Offset of the element at ``indices`` (one integer value per dimension)."""
    if len(indices) != len(array.dims) or not all(isinstance(i, Value) for i in indices):
        raise UnsupportedError(
            f"{_where(loc)}: array '{array.var}' indexed with anything but one "
            f"integer per dimension (slices or partial indexing) in a parfor body"
        )
    b = t.b
    positions = [_position(b, i, dim, loc) for i, dim in zip(indices, array.dims)]
    if array.strides is not None:
        offset = memref.strided_offset(b, positions, array.strides)
    else:
        offset = memref.linear_index(b, positions, array.dims)
    return offset if array.offset is None else arith.binary(b, "arith.addi", array.offset, offset)


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
    indices, held = _indices(t, stmt), t.lookup(stmt.value)
    if len(indices) < len(array.dims) or any(isinstance(i, _Slice) for i in indices):
        _fill(t, _view(t, array, indices, stmt.loc), held, stmt.loc)
    else:
        _store_element(t, array, element_offset(t, array, indices, stmt.loc), held, stmt.loc)


def _store_element(t: _Translation, array: _Array, offset: Value, held: object,
                   loc: ir.Loc) -> None:
    if array.is_complex:
        complex_value = _as_complex(t.b, held, array.dtype)
        values = [complex_value.real, complex_value.imag]
    elif isinstance(held, Value):
        values = [arith.cast(t.b, held, array.dtype)]
    else:
        raise UnsupportedError(f"{_where(loc)}: assigning anything but a number to an array "
                               "element or slice in a parfor body")
    for value, at in zip(values, _float_offsets(t.b, array, offset)):
        memref.store(t.b, value, array.memref, array.dtype, at, array.memref_type)


def _fill(t: _Translation, view: _Array, held: object, loc: ir.Loc) -> None:
    """``a[i] = x`` / ``a[i, 1:] = x`` of a number ``x`` that Numba left in the
    body: a serial loop nest over the view, inside the work-item."""
    b = t.b
    zero, one = b.index_constant(0), b.index_constant(1)
    with contextlib.ExitStack() as loops:
        positions = []
        for dim in view.dims:
            position = Value(b.fresh(), INDEX)
            loops.enter_context(b.region(
                f"scf.for {position.name} = {zero.name} to {dim.name} step {one.name}"))
            positions.append(position)
        _store_element(t, view, element_offset(t, view, positions, loc), held, loc)


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
        is_complex = isinstance(nbtype.dtype, types.Complex)
        dtype = scalar_type(nbtype.dtype.underlying_float if is_complex else nbtype.dtype,
                            f"array '{name}'", loc)
        ssa = t.add_param(KernelParam("array", name, memref.memref_type(dtype)))
        dims = tuple(
            Value(t.add_param(KernelParam("dim", name, "index", axis)), INDEX)
            for axis in range(nbtype.ndim)
        )
        strides = None if nbtype.layout == "C" else tuple(
            Value(t.add_param(KernelParam("stride", name, "index", axis)), INDEX)
            for axis in range(nbtype.ndim)
        )
        t.env[name] = _Array(name, ssa, dtype, dims, strides, is_complex=is_complex)
        t.arrays[name] = ArrayUse(name)
    elif isinstance(nbtype, (types.Function, types.Module, types.NumberClass)):
        t.env[name] = _Callee(getattr(nbtype, "typing_key", None))
    elif isinstance(nbtype, types.BaseTuple) or composite_of(nbtype):  # an argument per item
        items = tuple(_scalar_param(t, KernelParam("tuple_item", name, "", k), item, loc)
                      for k, item in enumerate(scalar_items(nbtype)))
        composite = composite_of(nbtype)
        t.env[name] = composite(*items) if composite else _Tuple(items)
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
            if not isinstance(bound, int) and isinstance(t.typemap[bound.name],
                                                         types.IntegerLiteral):
                # a constant in the kernel: with it, the gpu stage can prove
                # the loop's indices non-negative (see rewrites.bound_global_ids)
                bound = t.typemap[bound.name].literal_value
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


def _translate_reduction_body(t: _Translation, flat: Value, indices: list[Value],
                              bounds: list[tuple[_Bound, _Bound]],
                              reductions: list[_ReductionArg]) -> list[Value]:
    """One call per iteration, the ``flat``-th of the nest (row-major), at
    loop ``indices`` (none for a single loop: its index follows from
    ``flat``): the reduction variables come in as arguments and go out as
    results (an IndexValue as its two parts)."""
    b = t.b
    accumulators = [Value(f"%acc{k}", r.dtype) for k, r in enumerate(reductions)]
    for r, parts in _by_variable(reductions, accumulators).items():
        composite = composite_of(t.typemap[r.var])
        if r.last_value:  # the value it had after this work-item's last assignment
            t.define(_var(t, r.var), parts[1])
            t.assigned[r.var], unassigned = t.alloca(BOOL), b.fresh()
            t.allocas += [f"{unassigned} = arith.constant false",
                          f"memref.store {unassigned}, {t.assigned[r.var]}[] : memref<i1>"]
        else:
            t.define(_var(t, r.var), composite(*parts) if composite else parts[0])
    iteration = arith.cast(b, flat, I64)
    _define_indices(t, indices or _delinearize(b, flat, bounds))
    _emit_blocks(t, t.parfor.loop_body, "^exit")
    b.emit("^exit:", indent=-1)
    t.local = set()
    results = [_carried_out(t, r, acc, iteration) for r, acc in zip(reductions, accumulators)]
    b.emit(f"return {', '.join(v.name for v in results)} : "
           f"{', '.join(v.type.mlir for v in results)}")
    return accumulators


def _by_variable(reductions: list[_ReductionArg],
                 values: list[Value]) -> dict[Reduction, list[Value]]:
    grouped: dict[Reduction, list[Value]] = {}
    for r, value in zip(reductions, values):
        grouped.setdefault(r.reduction, []).append(value)
    return grouped


def _carried_out(t: _Translation, r: _ReductionArg, carried: Value, iteration: Value) -> Value:
    """What one iteration passes on of a reduction variable (part)."""
    var = _var(t, r.reduction.var)
    if r.reduction.last_value and r.part == "index":  # this iteration, if it assigned
        assigned = t.b.op(f"memref.load {t.assigned[var.name]}[] : memref<i1>", BOOL)
        return arith.select(t.b, assigned, iteration, carried)
    if r.part and not r.reduction.last_value:
        return getattr(t.lookup(var), r.part)
    return t.value(var)


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

    In a nest of loops the lanes take neighbouring innermost indices instead:
    chunk ``c`` gets consecutive points of the outer loops (rows), and lane
    ``l`` runs the innermost indices ``l, l + L, ...`` of each. A flat
    iteration count gives the indices back only by division, which the
    device cannot see through: it gathered, and a 2-D sum ran at a twelfth of
    the bandwidth of a 1-D one.

    This is the shape a device that vectorizes across work-items (the x
    dimension, here the lanes) reads at full bandwidth: the lanes load
    neighbouring elements, at an offset from a row counter that is the same
    in all of them, and each chunk streams through memory of its own. Strided
    shares (work-item w runs w, w + W, ...) made the OpenCL CPU device gather
    element by element, 5x slower than this. Views run as in ``_map_loop``.
    """
    chunks = b.index_constant(REDUCTION_WORK_ITEMS // lane_count)
    lanes = b.index_constant(lane_count)
    # what each work-item carries from one iteration to the next, per
    # reduction: its running value, and for a compensated sum the rounding
    # error not yet in it
    starts = [b.constant(r.identity, r.dtype) if r.identity is not None else r.variable
              for r in reductions]
    initial = [v for r, start in zip(reductions, starts)
               for v in ([start, b.constant(0, r.dtype)] if r.compensated else [start])]
    types = ", ".join(r.dtype.mlir for r in reductions)
    state_types = ", ".join(v.type.mlir for v in initial)
    nested = len(bounds) > 1
    argument_types = ", ".join([type for _, type in operands]
                               + ["index"] * (1 + nested * len(bounds))
                               + [r.dtype.mlir for r in reductions])

    def iteration(flat: Value, state: list[Value], replaced: dict[str, str],
                  indices: list[Value] = ()) -> list[Value]:
        """The state after the ``flat``-th iteration, at loop ``indices`` in a
        nest: the body carries each reduction on, but gives a compensated
        sum's term alone (what it adds to zero), which a compensated step then
        adds."""
        rest = iter(state)
        held = [(next(rest), next(rest)) if r.compensated else (next(rest),)
                for r in reductions]
        carried = [start.name if r.compensated else value[0].name
                   for r, start, value in zip(reductions, starts, held)]
        results = b.fresh()
        arguments = ", ".join([replaced.get(name, name) for name, _ in operands] + [flat.name]
                              + [index.name for index in indices] + carried)
        b.emit(f"{results}:{len(reductions)} = func.call @{body}({arguments}) : "
               f"({argument_types}) -> ({types})")
        following = []
        for k, (r, value) in enumerate(zip(reductions, held)):
            result = Value(f"{results}#{k}", r.dtype)
            following += _compensated_add(b, *value, result) if r.compensated else [result]
        return following

    def reduce_share(chunk: Value, lane: Value, replaced: dict[str, str]) -> None:
        """Work-item (chunk, lane) of a single loop: its share of the
        iterations, stored."""
        total = _iteration_count(b, bounds)
        rows = arith.binary(b, "arith.divui", total, lanes)
        rows_per_chunk = arith.binary(b, "arith.ceildivui", rows, chunks)
        first_row = arith.binary(b, "arith.muli", chunk, rows_per_chunk)
        end_row = arith.binary(b, "arith.minui", arith.binary(
            b, "arith.addi", first_row, rows_per_chunk), rows)
        final = loop(first_row, end_row, initial, lambda row, state: iteration(
            arith.binary(b, "arith.addi", arith.binary(b, "arith.muli", row, lanes), lane),
            state, replaced))
        last = arith.binary(b, "arith.addi", arith.binary(b, "arith.muli", rows, lanes), lane)
        takes_last = arith.binary(b, "arith.andi", arith.compare(b, "eq", chunk, zero),
                                  arith.compare(b, "lt", last, total))
        work_item = arith.binary(b, "arith.addi",
                                 arith.binary(b, "arith.muli", chunk, lanes), lane)

        # each branch stores its own results: an scf.if that yielded them made
        # the OpenCL CPU device's vectorizer carry a loop-invariant float sum
        # (``s += 1.0``) from one work-item into the next
        with b.region(f"scf.if {takes_last.name}"):
            store(work_item, iteration(last, final, replaced))
            b.emit("} else {", indent=-1)
            store(work_item, final)

    def loop(lower: Value, upper: Value, state: list[Value],
             step: Callable[[Value, list[Value]], list[Value]]) -> list[Value]:
        """``scf.for`` from ``lower`` to ``upper`` carrying ``state``, which
        ``step(index, state)`` advances; the final state."""
        name, index = b.fresh(), Value(b.fresh(), INDEX)
        carried = [Value(b.fresh(), v.type) for v in state]
        iter_args = ", ".join(f"{c.name} = {v.name}" for c, v in zip(carried, state))
        with b.region(f"{name}:{len(state)} = scf.for {index.name} = {lower.name} "
                      f"to {upper.name} step {b.index_constant(1).name} "
                      f"iter_args({iter_args}) -> ({state_types})", "}"):
            following = step(index, carried)
            b.emit(f"scf.yield {', '.join(v.name for v in following)} : {state_types}")
        return [Value(f"{name}#{k}", v.type) for k, v in enumerate(state)]

    def reduce_rows(chunk: Value, lane: Value, replaced: dict[str, str]) -> None:
        """Work-item (chunk, lane) of a nest: for each row of chunk ``chunk``
        (the points of the outer loops, cut into C chunks of consecutive
        rows), the innermost indices ``lane``, ``lane + L``, ... below the
        row's width (lanes past the last full group of L take one step fewer);
        its results, stored."""
        outer, width = bounds[:-1], _extents(b, bounds[-1:])[0]
        outer_count = _iteration_count(b, outer)
        rows_per_chunk = arith.binary(b, "arith.ceildivui", outer_count, chunks)
        first_row = arith.binary(b, "arith.muli", chunk, rows_per_chunk)
        end_row = arith.binary(b, "arith.minui", arith.binary(
            b, "arith.addi", first_row, rows_per_chunk), outer_count)
        # the steps of this lane: ceil((width - lane) / L) where width > lane
        steps = arith.select(b, arith.compare(b, "gt", width, lane), arith.binary(
            b, "arith.ceildivui", arith.binary(b, "arith.subi", width, lane), lanes),
            b.index_constant(0))

        def row(o: Value, state: list[Value]) -> list[Value]:
            at = _delinearize(b, o, outer)
            row_start = arith.binary(b, "arith.muli", o, width)

            def element(k: Value, state: list[Value]) -> list[Value]:
                j = arith.binary(b, "arith.addi", arith.binary(b, "arith.muli", k, lanes), lane)
                index = arith.binary(b, "arith.addi", j, _bound(b, bounds[-1][0]))
                return iteration(arith.binary(b, "arith.addi", row_start, j), state, replaced,
                                 at + [index])

            return loop(b.index_constant(0), steps, state, element)

        store(arith.binary(b, "arith.addi", arith.binary(b, "arith.muli", chunk, lanes), lane),
              loop(first_row, end_row, initial, row))

    def store(work_item: Value, state: list[Value]) -> None:
        rest = iter(state)
        for r in reductions:
            value = next(rest)
            if r.compensated:  # the sum with the error it has not taken in yet
                value = arith.binary(b, "arith.subf", value, next(rest))
            memref.store(b, value, r.partials, r.dtype, work_item)

    zero = b.index_constant(0)
    share = reduce_rows if nested else reduce_share
    with scf.parallel(b, [zero, zero], [chunks, lanes]) as (chunk, lane):
        _by_inner_strides(b, inner_strides, lambda replaced: share(chunk, lane, replaced))


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
    """A scalar the reduction kernel carries: a reduction variable, or one
    part of an IndexValue variable (np.argmin / np.argmax)."""

    reduction: Reduction
    dtype: ScalarType
    partials: str  # SSA name of the partial results' memref argument
    variable: Value | None  # the variable's value before the loop (an argument)
    identity: int | None  # what work-items start from; None: from ``variable``
    compensated: bool  # a float sum, whose work-items add in compensated steps
    part: str | None = None  # of an IndexValue or a complex number: its field


def _reductions(t: _Translation) -> list[_ReductionArg]:
    """Each reduction variable (part), its partials argument and the value its
    work-items start from."""
    found = []
    for name in t.parfor.redvars:
        info = t.parfor.reddict[name]
        nbtype = t.typemap[name]
        composite = composite_of(nbtype)
        what = f"reduction variable '{_user_names([name])}'"
        dtypes = [scalar_type(ty, what, t.parfor.loc)
                  for ty in (scalar_items(nbtype) if composite else (nbtype,))]
        if dtypes[-1].kind == "b":
            raise UnsupportedError(
                f"{_where(t.parfor.loc)}: reduction into {_user_names([name])} of type "
                f"{nbtype}")
        if info.redop in _COMBINE_BY_OPERATOR and composite is not _IndexValue:
            combine, identity = _COMBINE_BY_OPERATOR[info.redop]
        else:
            combine, identity = _min_max_callee(t, info.reduce_nodes), None
            if combine is None:
                raise UnsupportedError(
                    f"{_where(t.parfor.loc)}: reduction into {_user_names([name])} with an "
                    "operator other than +=, -=, *=, /=, min or max")
        start = t.env[name]
        for axis, (dtype, part) in enumerate(zip(dtypes, composite.PARTS if composite
                                                 else (None,))):
            partials = t.add_param(KernelParam("partials", name, memref.memref_type(dtype), axis))
            # the imaginary part of 0 and of 1 is 0
            start_part = 0 if part == "imag" and identity is not None else identity
            compensated = dtype.is_float and info.redop in (operator.iadd, operator.isub)
            found.append(_ReductionArg(Reduction(name, combine), dtype, partials,
                                       getattr(start, part) if part else start, start_part,
                                       compensated, part))
    # Numba may list a reduction variable among the races too (which, depends
    # on the hash seed): its value after the loop is the reduction's
    for name in sorted(t.parfor.races - set(t.parfor.redvars)):
        dtype = scalar_type(t.typemap[name], f"variable '{_user_names([name])}' assigned in "
                            "the loop and read after it", t.parfor.loc)
        last = Reduction(name, _later, last_value=True)
        # work-items start from "never assigned" (iteration -1)
        for axis, (part, part_type, identity) in enumerate((("index", I64, -1),
                                                            ("value", dtype, 0))):
            partials = t.add_param(KernelParam("partials", name,
                                               memref.memref_type(part_type), axis))
            found.append(_ReductionArg(last, part_type, partials, None, identity, False,
                                       part))
    return found


def _later(a, b):
    return b if b.index > a.index else a


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
    assigned = {stmt.target.name for block in parfor.loop_body.values() for stmt in block.body
                if isinstance(stmt, ir.Assign)}
    rebound = assigned & set(parfor.params) - set(parfor.redvars) - parfor.races
    if rebound:  # a kernel's arguments are copies: the assignment would be lost
        raise UnsupportedError(
            f"{_where(parfor.loc)}: variable(s) {_user_names(rebound)} from before the loop "
            "assigned in it, not as a reduction")
    t = _Translation(parfor, typemap, calltypes)
    # the body goes in its own function, called by the parallel loop
    main, body = t.b, Builder()
    t.b = body
    _bind_params(t)
    bounds = _loop_bounds(t)
    reductions = _reductions(t)
    if reductions:
        flat = Value("%iv0", INDEX)
        indices = [Value(f"%ix{k}", INDEX) for k in range(len(bounds))] if len(bounds) > 1 else []
        accumulators = _translate_reduction_body(t, flat, indices, bounds, reductions)
        body_args = [flat] + indices + accumulators
        results = f" -> ({', '.join(r.dtype.mlir for r in reductions)})"
    else:
        ndim = 1 + len(_kernel_nest(bounds)[1])
        body_args = [Value(f"%iv{axis}", INDEX) for axis in range(ndim)]
        _translate_map_body(t, body_args, bounds)
        results = ""
    # the body may have added arguments (get_num_threads)
    operands = [(ssa, p.mlir_type) for ssa, p in t.args]
    t.b = main
    if reductions:
        _reduction_loop(main, f"{name}_body", operands, bounds, reductions,
                        reduction_lanes(vector_lanes), _inner_strides(t))
        ndim = 2  # chunks x lanes
    else:
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
                        tuple(dict.fromkeys(r.reduction for r in reductions)))


def _map_loop(b: Builder, body: str, operands: list[tuple[str, str]],
              bounds: list[tuple[_Bound, _Bound]], inner_strides: list[str]) -> None:
    """The parallel loop over the iteration space, calling the body at each point.

    Views (``a[1:-1, 1:-1]``) come with their strides as arguments, and an
    innermost stride the device compiler cannot see makes it gather and
    scatter element by element. When every view's innermost stride
    (``inner_strides``) is 1, as for slices of rows, the body is called with
    the constant 1 in their place, so that its copy inlined there reads and
    writes neighbouring elements in neighbouring work-items. The gpu stage
    makes a kernel of each version, and the host launches the one the
    strides call for (passes/unswitch.py)."""
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
