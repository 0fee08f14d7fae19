"""Integer arguments that a kernel needs as constants: the shape of an array
that a parfor body makes (``np.empty((k, 2))`` with ``k`` an argument) is
the size of the work-item's private memory, which a kernel fixes when it is
built. Where such a shape comes from integer arguments of the function,
the function is compiled for their values, as with ``numba.literally``:
Numba's dispatcher compiles again with those arguments typed as literals,
once per value met.

Numba's dispatcher reaches that literal compilation by failing the plain
one first, at every call (its type-based dispatch never matches a value to
a literal type); ``remember_literal_arguments`` keeps which arguments of
which types compile as literals, so that later calls find their build at
once.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from numba.core import errors, ir, types
from numba.core.dispatcher import Dispatcher

if TYPE_CHECKING:  # the compiler's: the dispatcher imports this module to run cached code
    from .translation import Translation


def request_literal_arguments(t: Translation, shape: ir.Var) -> None:
    """Where the unknown items of ``shape`` (an int or a tuple built in the
    body) are integer arguments of the function being lowered
    (``arguments_of``), ask Numba's dispatcher to compile again with them
    typed as literals (``ForceLiteralArg``); return otherwise, and when
    compiling for explicit signatures (``literals_refused``)."""
    func_ir = getattr(_compiling, "func_ir", None)
    if func_ir is None or getattr(_compiling, "types_fixed", False):
        return
    positions = set()
    for name in _outer_variables(t, shape):
        try:
            definition = func_ir.get_definition(name)
        except KeyError:  # assigned more than once
            return
        if not isinstance(definition, ir.Arg):
            return
        positions.add(definition.index)
    if positions:
        # not an UnsupportedError: it passes through the rules' refusals
        raise errors.ForceLiteralArg(positions)


def _outer_variables(t: Translation, shape: ir.Var) -> tuple[str, ...]:
    """The integer variables from outside the body (kernel parameters) that
    the unknown items of ``shape`` are; empty when an item is computed in
    the body."""
    from .translation import constant_value

    definition = t.definition(shape)
    while isinstance(definition, ir.Var):  # an inlined function's parameter
        definition = t.definition(definition)
    items = definition.items if isinstance(definition, ir.Expr) and \
        definition.op == "build_tuple" else [shape]
    found = []
    for item in items:
        if constant_value(t, item) is not None:
            continue
        if t.definition(item) is not None or \
                not isinstance(t.typemap[item.name], types.Integer):
            return ()
        found.append(item.name)
    return tuple(found)


# what is being compiled, in this thread: the function IR whose parfors are
# lowered (``func_ir``), and whether for given types (``types_fixed``:
# explicit signatures, which no argument's value can change)
_compiling = threading.local()


@contextlib.contextmanager
def arguments_of(func_ir: ir.FunctionIR) -> Iterator[None]:
    """Lower parfors of the function ``func_ir``, whose integer arguments a
    body's array shape may ask for as literals."""
    _compiling.func_ir = func_ir
    try:
        yield
    finally:
        _compiling.func_ir = None


@contextlib.contextmanager
def literals_refused() -> Iterator[None]:
    """Compile for given types: a shape that needs arguments' values is
    refused as any shape not known when compiling."""
    _compiling.types_fixed = True
    try:
        yield
    finally:
        _compiling.types_fixed = False


def remember_literal_arguments(dispatcher: Dispatcher) -> None:
    """Make ``dispatcher`` find, for arguments of types whose build took some
    of them as literals, that build without compiling the plain one first."""
    literal_positions: dict[tuple, frozenset[int]] = {}
    compile_for_args = dispatcher._compile_for_args

    def compile_with_literals(*args, **kws):
        argtypes = tuple(dispatcher.typeof_pyval(a) for a in args)
        positions = literal_positions.get(argtypes)
        if positions:
            return compile_for_args(*(types.literal(a) if i in positions else a
                                      for i, a in enumerate(args)), **kws)
        entry = compile_for_args(*args, **kws)
        for signature in dispatcher.overloads:
            taken = _literal_positions(signature, argtypes, args)
            if taken:
                literal_positions[argtypes] = taken
        return entry

    # Numba's C dispatcher looks the method up on the instance at each miss
    dispatcher._compile_for_args = compile_with_literals


def _literal_positions(signature: tuple, argtypes: tuple, args: tuple) -> frozenset[int]:
    """The positions at which ``signature`` is ``argtypes`` with ``args``'
    values as literals, when it is that; else empty."""
    if len(signature) != len(argtypes):
        return frozenset()
    positions = set()
    for i, (typed, plain, value) in enumerate(zip(signature, argtypes, args)):
        if isinstance(typed, types.Literal) and types.unliteral(typed) == plain and \
                typed.literal_value == value:
            positions.add(i)
        elif typed != plain:
            return frozenset()
    return frozenset(positions)
