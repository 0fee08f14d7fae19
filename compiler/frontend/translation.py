"""The core of translating Numba IR into MLIR, shared by parfor bodies
(parfor_to_mlir.py) and explicit kernels (kernel_to_mlir.py).

A body becomes its own function with one block per Numba IR block
(``emit_blocks``). Each node is translated by a rule looked up by its kind in a
table: statements by their class (STATEMENT_RULES), expressions by their op
(EXPRESSION_RULES), calls by their callee (CALL_RULES; explicit kernels look in
KERNEL_CALL_RULES, kernel_intrinsics.py, first). The rules live in the modules
of ``rules/`` and in kernel_intrinsics.py, each registered by a decorator;
operators and callees on scalars go on to the dialects' emit rules. Anything
without a rule raises ``UnsupportedError`` with the source line.

Here are the translation's state (``Translation``), the rule tables, and the
rules of the statements every body has (assignments, constants); the values
body variables hold besides scalar SSA values (arrays, tuples, callees, ...)
are body_values.py's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import ClassVar

import numpy as np
from numba.core import ir, types
from numba.parfors.parfor import Parfor

from ..dialects import (
    BOOL,
    F32,
    F64,
    INDEX,
    Builder,
    Complex,
    ScalarType,
    Value,
    arith,
    memref,
)
from ..dialects.builder import located
from ..dialects.literals import location_literal
from ..dialects.registry import RuleTable
from ..errors import UnsupportedError
from .body_values import (
    ArrayValue,
    CalleeValue,
    IndexValuePair,
    TupleValue,
    as_complex,
    composite_of,
    scalar_items,
    slice_of,
)
from .user_locations import described, refused_as_user_code, user_names, where


def location_of(loc: ir.Loc) -> str:
    """The ``loc(...)`` of a Numba IR node: its place in the user's source."""
    return location_literal(loc.filename, loc.line or 0, loc.col or 0)


def located_lines(lines: list[str], location: str, indent: str) -> list[str]:
    """Lines of ops assembled outside a Builder, each with ``location``."""
    return [indent + located(line, location) for line in lines]


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
    raise UnsupportedError(f"{where(loc)}: {what} of type {_python_type(nbtype) or nbtype} "
                           "in a parfor")


def _python_type(nbtype: types.Type | None) -> str | None:
    """A string's or a container's Numba type as a message names it: ``str``
    (``unicode_type``, ``Literal[str](de)``), ``list(float64)`` (``reflected
    list(float64)<iv=None>``), ``set(int64)``, ``dict(int64, float64)``;
    None for other types."""
    unliteral = types.unliteral(nbtype) if nbtype is not None else None
    if isinstance(unliteral, types.UnicodeType):
        return "str"
    if isinstance(unliteral, (types.List, types.Set)):
        return f"{'list' if isinstance(unliteral, types.List) else 'set'}({unliteral.dtype})"
    if isinstance(unliteral, types.DictType):
        return f"dict({unliteral.key_type}, {unliteral.value_type})"
    return None


def kind_of(nbtype: types.Type | None) -> str:
    """What a value of a type that is not a number is, in a message."""
    if _python_type(nbtype) is not None:
        return f"a {_python_type(nbtype)}"
    if isinstance(nbtype, types.Array):
        return "an array"
    if isinstance(nbtype, types.BaseTuple):
        return "a tuple"
    if isinstance(nbtype, (types.TypeRef, types.NumberClass, types.DType)):
        return "a type"
    if isinstance(nbtype, types.Callable):
        return "a function"
    return f"a value of type {nbtype}"


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


# an integer polynomial of the function's variables, as its (monomial,
# coefficient) pairs, a monomial being the sorted names it multiplies: a
# variable's, or an array's dimension's (``shape_factor``)
FrozenPolynomial = frozenset[tuple[tuple[str, ...], int]]


def shape_factor(array: str, axis: int) -> str:
    """The factor of a polynomial that is dimension ``axis`` of array
    ``array``, ``A.shape[0]``: named so, which no variable's name can be."""
    return f"{array}.shape[{axis}]"


def dimension_of_factor(factor: str) -> tuple[str, int] | None:
    """``(array, axis)`` of a ``shape_factor``; None for a variable's name."""
    if not factor.endswith("]"):
        return None
    array, axis = factor[:-1].rsplit(".shape[", 1)
    return array, int(axis)


@dataclass(frozen=True)
class SliceLength:
    """The length of ``[start:stop]`` of a dimension ``extent`` (a kernel
    parameter), clipped as Python clips it; ``start`` and ``stop`` are the
    same in every iteration (polynomials of variables from outside the body),
    or None where left out. A bound ``from_end`` is the extent plus its
    polynomial: Numba's array analysis writes a negative constant ``c`` so
    (``n + c``, clipped again)."""

    extent: KernelParam
    start: FrozenPolynomial | None
    stop: FrozenPolynomial | None
    from_end: tuple[bool, bool] = (False, False)  # of start, of stop


@dataclass(frozen=True)
class SizeCheck:
    """Two sizes the body needs equal (NumPy's and Numba's size checks, which
    a kernel cannot raise), each an array's dimension or an integer, kernel
    parameters, or the length of a slice of a dimension: the host compares
    them before the launch and raises ``exception`` with ``message`` when
    they differ (and, where ``stretches``, ``second`` is not 1: a view
    NumPy broadcasts into a view of ``first`` elements)."""

    first: KernelParam | SliceLength
    second: KernelParam | SliceLength
    message: str
    exception: type[Exception] = AssertionError
    stretches: bool = False


@dataclass(frozen=True)
class SeparateArrays:
    """Two arrays from outside the body that must not share memory: the
    host raises UnsupportedError with ``message`` before the launch where
    their elements meet. Either a view of ``written`` is stored from a view of
    ``read`` in one statement (``row[:] = y[i]`` of ``row = x[i]``), where
    NumPy copies what it reads and the loop reads it as it writes: the two
    may be the very same array where ``alike`` (the views made alike of
    their arrays, ``x[i]`` and ``y[i]``), each element then read before it
    is written. Or the body writes ``written`` and touches ``read``, each
    iteration at elements others may touch through the other name (a
    loop-carried dependence): they may meet where ``alike`` holds and they
    are the very same array, or at one index along ``own_axis``, which one
    iteration owns in both (``x[i] = y[i] + 1``)."""

    written: str
    read: str
    alike: bool
    message: str
    own_axis: int | None = None

    def covers(self, other: SeparateArrays) -> bool:
        """Whether this check refuses every call ``other`` refuses: the same
        two arrays, allowed to meet nowhere ``other`` does not allow."""
        return (self.written, self.read) == (other.written, other.read) and \
            self.alike <= other.alike and self.own_axis in (None, other.own_axis)


@dataclass(frozen=True)
class SharedUpdate:
    """``a[k] = f(a[k], ...)`` (``+=``, ``-=``, ``*=``, ``min``, ``max``) in a
    parfor body, at an index ``k`` several iterations may share: ``read`` holds
    ``a[k]`` before, ``result`` is assigned ``combine``, f's expression, and
    stored back. Its store becomes an atomic update of the element."""

    read: ir.Var
    result: ir.Var
    combine: ir.Expr


@dataclass
class ArrayUse:
    var: str
    reads: bool = False
    writes: bool = False
    # allocated in the parfor's init block (array-expression results): every
    # element is written, so the host has nothing to copy in
    fresh: bool = False


# ---- the translation's state ---------------------------------------------------

@dataclass
class Translation:
    """State of one parfor's translation. The body becomes its own function
    with one block per Numba IR block; scalar variables live in stack slots
    (memref.alloca) that the linalg stage's mem2reg turns back into SSA values
    before lift-cf-to-scf structures the branches into scf.if / scf.while."""

    parfor: Parfor
    typemap: dict
    calltypes: dict
    # what the code translated is, as a refusal says where a construct is
    body: ClassVar[str] = "a parfor body"
    b: Builder = field(default_factory=Builder)
    env: dict[str, object] = field(default_factory=dict)
    args: list[tuple[str, KernelParam]] = field(default_factory=list)  # (ssa, param)
    arrays: dict[str, ArrayUse] = field(default_factory=dict)
    slots: dict[str, str] = field(default_factory=dict)  # variable -> its alloca
    allocas: list[str] = field(default_factory=list)  # entry-block lines
    variables: list[str] = field(default_factory=list)  # the module's (local arrays)
    local: set[str] = field(default_factory=set)  # scalars current in this block
    threads: str | None = None  # the slot of get_num_threads() in the body
    # variables whose last assignment the kernel reports -> their "assigned in
    # this iteration" flag slot
    assigned: dict[str, str] = field(default_factory=dict)
    pointers: dict[str, str] = field(default_factory=dict)  # array -> its SPIR-V pointer
    # element updates made atomic: ``a[k] = f(a[k], ...)`` at an index ``k``
    # that several iterations may share (parfor_updates.py), by setitem
    shared_updates: dict[ir.Stmt, SharedUpdate] = field(default_factory=dict)
    size_checks: list[SizeCheck] = field(default_factory=list)  # for the host, before launch
    separate_arrays: list[SeparateArrays] = field(default_factory=list)  # likewise
    # the arrays the body writes (parfor_dependences.written_arrays), once found
    written: set[str] | None = None
    # translating inside an scf region (an element computed where read): the
    # scalars defined there stay SSA values, with no slot, which mem2reg
    # could not promote from a nested region
    in_region: bool = False

    def keep_separate(self, check: SeparateArrays) -> None:
        """Have the host make ``check`` before the launch, unless it makes one
        that covers it."""
        if not any(made.covers(check) for made in self.separate_arrays):
            self.separate_arrays.append(check)

    def rule_for_call(self, key: object) -> CallRule | None:
        """The rule of a call to ``key``: a parfor body sees CALL_RULES only."""
        return CALL_RULES.lookup(key)

    def size_param(self, value: Value) -> KernelParam | None:
        """The kernel parameter ``value`` is when it is an array's dimension
        or an integer from outside the body."""
        return next((param for ssa, param in self.args if ssa == value.name and (
            param.kind == "dim" or param.kind == "scalar" and value.type.kind in "iu")), None)

    def definition(self, var: ir.Var) -> object:
        """What ``var`` is assigned in the parfor, when it is assigned once."""
        return _definitions(self.parfor).get(var.name)

    def add_param(self, param: KernelParam) -> str:
        name = f"%arg{len(self.args)}"
        self.args.append((name, param))
        return name

    def pointer_param(self, var: str, pointer_type: str) -> str:
        """The array ``var`` as a SPIR-V pointer argument (for atomics)."""
        if var not in self.pointers:
            self.pointers[var] = self.add_param(KernelParam("pointer", var, pointer_type))
        return self.pointers[var]

    def alloca(self, type: ScalarType) -> str:
        slot = self.b.fresh()
        self.allocas.append(f"{slot} = memref.alloca() : memref<{type.mlir}>")
        return slot

    def define(self, var: ir.Var, held: object) -> None:
        """Bind a body variable; a scalar (each part of an IndexValue or a
        complex number) also goes to its slot, where other blocks find it."""
        composite = composite_of(self.typemap.get(var.name))
        if composite is Complex and isinstance(held, Value):  # x = 1.0 of a complex x
            held = as_complex(self.b, held, self._part_types(var)[0])
        if isinstance(held, Value):
            held = arith.cast(self.b, held, self.typed(var))
            if not self.in_region:
                self._store(var.name, held)
        elif isinstance(held, (IndexValuePair, Complex)):
            held = type(held)(*(arith.cast(self.b, getattr(held, part), ty) for part, ty in
                                zip(held.PARTS, self._part_types(var))))
            for part in held.PARTS * (not self.in_region):
                self._store(f"{var.name}.{part}", getattr(held, part))
        if isinstance(held, (Value, IndexValuePair, Complex)):
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
        return [scalar_type(ty, described(var), var.loc)
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

    def value(self, var: ir.Var, used_at: ir.Loc | None = None) -> Value:
        """``var`` as a real number; a refusal names ``used_at``, else the
        line that defined ``var`` (an argument's: the function's)."""
        found = self.lookup(var)
        if not isinstance(found, Value):
            raise self._not_a_number(var, used_at or var.loc)
        return found

    def number(self, var: ir.Var, used_at: ir.Loc | None = None) -> Value | Complex:
        """``var`` as a real or a complex number (refused as by ``value``)."""
        found = self.lookup(var)
        if not isinstance(found, (Value, Complex)):
            raise self._not_a_number(var, used_at or var.loc)
        return found

    def _not_a_number(self, var: ir.Var, loc: ir.Loc) -> UnsupportedError:
        nbtype = self.typemap.get(var.name)
        if isinstance(nbtype, types.TypeRef) and isinstance(nbtype.instance_type, types.Array):
            # only what allocates an array takes its type as an operand
            return UnsupportedError(
                f"{where(loc)}: an array made in {self.body} (by an array "
                "expression or a NumPy function of arrays), which xpuc does not offload")
        return UnsupportedError(
            f"{where(loc)}: {self.operand(var)} is {kind_of(nbtype)} here, where "
            f"{self.body} needs a number")

    def operand(self, var: ir.Var) -> str:
        """``var`` as a message names it; a temporary made of a user's array
        by the indexing that made it (``'G[...]'``)."""
        definition = self.definition(var)
        if isinstance(definition, ir.Const):
            return f"the constant {definition.value!r}"
        if var.name.startswith("$") and isinstance(definition, ir.Expr) and \
                definition.op in ("getitem", "static_getitem") and \
                not definition.value.name.startswith("$"):
            return f"'{user_names([definition.value.name])}[...]'"
        return described(var)

    def typed(self, var: ir.Var) -> ScalarType:
        return scalar_type(self.typemap[var.name], described(var), var.loc)


def nested_statements(blocks: Iterable[ir.Block]) -> Iterator[tuple[ir.Stmt, ir.Block]]:
    """The statements of ``blocks`` and of the parfors among them (their init
    blocks and bodies), each with its block."""
    pending = list(blocks)
    while pending:
        block = pending.pop()
        for stmt in block.body:
            if isinstance(stmt, Parfor):
                pending += [stmt.init_block, *stmt.loop_body.values()]
            yield stmt, block


def _definitions(parfor: Parfor) -> dict[str, object]:
    """What each variable of the parfor (and the parfors nested in it) is
    assigned, when it is assigned once."""
    found: dict[str, object] = {}
    seen: set[str] = set()
    for stmt, _ in nested_statements([parfor.init_block, *parfor.loop_body.values()]):
        if isinstance(stmt, ir.Assign):
            name = stmt.target.name
            found[name] = None if name in seen else stmt.value
            seen.add(name)
    return found


def index_of(node: ir.Expr | ir.SetItem | ir.StaticSetItem) -> ir.Var | object:
    """The index of a getitem or setitem node: its variable, or the value of a
    constant one (``static_getitem``, ``StaticSetItem``) that has none."""
    if isinstance(node, ir.StaticSetItem) or getattr(node, "op", None) == "static_getitem":
        return node.index_var if node.index_var is not None else node.index
    return node.index


def constant_value(t: Translation, var: ir.Var) -> object:
    """The value of ``var`` when compiling: a literal, a constant, or a tuple
    of them built in the body; None when it is not known."""
    nbtype = t.typemap[var.name]
    if isinstance(nbtype, types.Literal):
        return nbtype.literal_value
    definition = t.definition(var)
    if isinstance(definition, (ir.Const, ir.Global, ir.FreeVar)):
        return definition.value
    if isinstance(definition, ir.Var):
        return constant_value(t, definition)
    if isinstance(definition, ir.Expr) and definition.op == "build_tuple":
        items = tuple(constant_value(t, item) for item in definition.items)
        return None if None in items else items
    if isinstance(definition, ir.Expr) and definition.op == "getattr":  # xpuc.LOCAL_MEM_FENCE
        base = constant_value(t, definition.value)
        return getattr(base, definition.attr, None) if isinstance(base, ModuleType) else None
    return None


# ---- the rule tables -------------------------------------------------------------

# a statement's rule emits its ops; an expression's (and a call's) returns what
# the assignment's target holds: a Value, a value class above, or None
StatementRule = Callable[[Translation, ir.Stmt], None]
ExpressionRule = Callable[[Translation, ir.Expr, ir.Var], object]
CallRule = Callable[[Translation, ir.Expr, ir.Var], object]

STATEMENT_RULES: RuleTable[type, StatementRule] = RuleTable("statement")
EXPRESSION_RULES: RuleTable[str, ExpressionRule] = RuleTable("expression")
# calls whose translation needs more than their operands' values (range,
# slices, thread counts), keyed by callee; both parfor bodies and kernels see
# them. The rest go to the dialects' emit rules (rules/arithmetic.py).
CALL_RULES: RuleTable[object, CallRule] = RuleTable("call")

statement_rule = STATEMENT_RULES.rule
expression_rule = EXPRESSION_RULES.rule
call_rule = CALL_RULES.rule


# What the user wrote, for the Numba IR a parfor body holds that no rule
# translates, by statement class or expression op (a refusal names no IR)
_CONSTRUCTS: dict[object, str] = {
    ir.DelItem: "del of an element", ir.SetAttr: "setting an attribute",
    ir.DelAttr: "del of an attribute", ir.StoreMap: "a dict", ir.EnterWith: "a with block",
    ir.PopBlock: "a with block", ir.Raise: "raise", ir.StaticRaise: "raise",
    ir.DynamicRaise: "raise", ir.TryRaise: "raise in a try block",
    ir.StaticTryRaise: "raise in a try block", ir.DynamicTryRaise: "raise in a try block",
    ir.Arg: "an argument", ir.Yield: "yield",
    "build_list": "a list", "build_set": "a set", "build_map": "a dict",
    "make_function": "a function made in the body (a lambda or a nested def)",
    "typed_getitem": "indexing a typed container",
}


def _construct(kind: object) -> str:
    """A construct no rule translates, as a refusal names it."""
    return _CONSTRUCTS.get(kind, "code xpuc does not translate")


def translate_statement(t: Translation, stmt: ir.Stmt) -> None:
    rule = STATEMENT_RULES.lookup(type(stmt))
    with refused_as_user_code(stmt.loc):
        if rule is None:
            raise UnsupportedError(f"{where(stmt.loc)}: {_construct(type(stmt))} in {t.body}")
        rule(t, stmt)


@statement_rule(ir.Del)
def _del(t: Translation, stmt: ir.Del) -> None:
    pass


@statement_rule(ir.Assign)
def _assign(t: Translation, stmt: ir.Assign) -> None:
    rhs, target = stmt.value, stmt.target
    static = _static_value(t.typemap.get(target.name))
    if static is not None:
        t.define(target, static)
    elif isinstance(rhs, ir.Var):
        t.define(target, t.lookup(rhs))
    elif isinstance(rhs, (ir.Const, ir.Global, ir.FreeVar)):
        t.define(target, literal(t, rhs.value, target, stmt.loc))
    elif isinstance(rhs, ir.Expr):
        t.define(target, translate_expression(t, rhs, target))
    else:
        raise UnsupportedError(f"{where(stmt.loc)}: {_construct(type(rhs))} in {t.body}")


def translate_expression(t: Translation, expr: ir.Expr, target: ir.Var) -> object:
    """What ``target = expr`` assigns, by the rule of the expression's op."""
    rule = EXPRESSION_RULES.lookup(expr.op)
    if rule is None:
        raise UnsupportedError(f"{where(expr.loc)}: {_construct(expr.op)} in {t.body}")
    return rule(t, expr, target)


def _static_value(nbtype: types.Type | None) -> CalleeValue | None:
    """What a variable holds when its type alone says what it is (a scalar
    type such as ``np.float64`` or ``a.dtype.type``, a dtype, a literal string):
    nothing is computed for it at run time, so neither is it in the kernel."""
    if isinstance(nbtype, types.NumberClass):
        return CalleeValue(nbtype.instance_type)  # called, it converts
    if isinstance(nbtype, (types.DType, types.StringLiteral)):
        return CalleeValue(nbtype)
    return None


def literal(t: Translation, value: object, target: ir.Var | None, loc: ir.Loc) -> object:
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
        return TupleValue(tuple(
            t.b.constant(v, scalar_type(ty, "tuple item", loc)) for v, ty in zip(value, item_types)
        ))
    if isinstance(value, slice):  # a[1:3] with constant bounds
        bounds = [None if v is None else t.b.constant(v, ScalarType("i", 64))
                  for v in (value.start, value.stop)]
        return slice_of(*bounds, value.step, loc)
    if callable(value) or isinstance(value, ModuleType):
        return CalleeValue(value)
    if isinstance(value, np.ndarray):
        # a parfor's are kernel arguments (constant_arrays.py): this is a kernel's
        raise UnsupportedError(
            f"{where(loc)}: a global or closure array read in a kernel, which cannot hold "
            "one as a constant: pass it to the kernel as an argument")
    raise UnsupportedError(f"{where(loc)}: constant {value!r} in device code")


# ---- kernel arguments and blocks -------------------------------------------------

def bind_param(t: Translation, name: str, loc: ir.Loc) -> None:
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
        t.env[name] = ArrayValue(name, ssa, dtype, dims, strides, is_complex=is_complex)
        t.arrays[name] = ArrayUse(name)
    elif isinstance(nbtype, types.Module):  # a module the function holds (a closure's)
        t.env[name] = CalleeValue(nbtype.pymod)
    elif isinstance(nbtype, (types.Function, types.NumberClass)):
        t.env[name] = CalleeValue(getattr(nbtype, "typing_key", None))
    elif isinstance(nbtype, types.BaseTuple) or composite_of(nbtype):  # an argument per item
        items = tuple(_scalar_param(t, KernelParam("tuple_item", name, "", k), item, loc)
                      for k, item in enumerate(scalar_items(nbtype)))
        composite = composite_of(nbtype)
        t.env[name] = composite(*items) if composite else TupleValue(items)
    else:
        t.env[name] = _scalar_param(t, KernelParam("scalar", name, ""), nbtype, loc)


def _scalar_param(t: Translation, param: KernelParam, nbtype: types.Type,
                  loc: ir.Loc) -> Value:
    """A scalar kernel argument (bools travel as bytes)."""
    what = (f"item {param.axis} of '{user_names([param.var])}'" if param.kind == "tuple_item"
            else f"variable '{param.var}'")
    ty = scalar_type(nbtype, what, loc)
    ssa = t.add_param(dataclasses.replace(param, mlir_type=ty.storage))
    stored = Value(ssa, ScalarType("u", 8) if ty.kind == "b" else ty)
    return arith.cast(t.b, stored, ty) if ty.kind == "b" else stored


def emit_blocks(t: Translation, blocks: dict[int, ir.Block], after: str) -> None:
    """Numba's body blocks joined by cf branches; leaving the body goes to ``after``."""
    b = t.b
    b.emit(f"cf.br ^bb{min(blocks)}")
    for label in sorted(blocks):
        block = blocks[label]
        b.emit(f"^bb{label}:", indent=-1)
        t.local = set()
        for stmt in block.body:
            if not isinstance(stmt, ir.Terminator):
                b.location = location_of(stmt.loc)
                translate_statement(t, stmt)
        term = block.terminator if block.is_terminated else None
        b.location = location_of(term.loc if term is not None else block.loc)
        if term is None or isinstance(term, ir.Return):  # the body ends
            b.emit(f"cf.br {after}")
        elif isinstance(term, ir.Jump):
            b.emit(f"cf.br {_successor(blocks, term.target, after)}")
        elif isinstance(term, ir.Branch):
            with refused_as_user_code(term.loc):
                cond = arith.cast(b, t.value(term.cond), BOOL)
            b.emit(f"cf.cond_br {cond.name}, {_successor(blocks, term.truebr, after)}, "
                   f"{_successor(blocks, term.falsebr, after)}")
        else:
            raise UnsupportedError(f"{where(term.loc)}: {_construct(type(term))} in {t.body}")


def _successor(blocks: dict, label: int, after: str) -> str:
    # a jump out of the body is the end of one iteration
    return f"^bb{label}" if label in blocks else after
