"""Library code inlined into the user's function, located at the user's line.

Numba inlines implementations into the function it compiles: overloads
(xpuc's NumPy functions and dpnp constructors, Numba's own), the parallel
loops its parfor pass puts in place of ``np.max`` or ``np.dot``, the bodies of
its reductions. Their statements keep the locations of the library's source
(``numba/parfors/parfor.py:261``) and their variables the inliner's names
(``along_axis__locals__reduce_sum_v20__v662call_7``), which a refusal must
never show the user. Three passes fix that:

- ``TagCallSites``, before anything is inlined, gives each call of the
  user's code a ``CallSite`` location that says how the user wrote the callee
  (``np.dot``), on the call and on its target, the variable an inliner
  assigns what the inlined code returns.
- ``LocateInlinedCalls``, once calls are inlined (overloads, the parfor
  pass's replacements), gives library code an ``InlinedLoc`` at the call
  whose result it leads to (with no user statement between), and what is
  left at the closest user statement that dominates it.
- ``RelocateLibraryCode``, once parfors are made, does the latter for the
  code the parfor pass adds (reduction bodies), inside parfors too.

Messages then name the user's line, the call that brought library code in
(``inlined_call``), and variables by the user's names or as the result of
that call (``described``).
"""

from __future__ import annotations

import contextlib
import linecache
import os
import re
from collections.abc import Iterator

import numba
from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.controlflow import CFGraph
from numba.core.ir_utils import get_definition, guard
from numba.parfors.parfor import Parfor

from ..errors import UnsupportedError

# Where library code comes from: Numba's package and xpuc's own (whose code
# templates are compiled under the name of the module that writes them).
_LIBRARY_DIRECTORIES = tuple(
    directory + os.sep for directory in (
        os.path.dirname(os.path.abspath(numba.__file__)),
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def where(loc: ir.Loc) -> str:
    """``file.py:line`` of a node, for error messages."""
    return f"{loc.filename}:{loc.line}"


class CallSite(ir.Loc):
    """The location of a call in the user's code, with the callee as the user
    wrote it (``np.dot``, ``dpnp.empty``, ``x.sum``), or None when unnamed."""

    def __init__(self, filename: str, line: int, col: int | None = None,
                 maybe_decorator: bool = False, callee: str | None = None) -> None:
        super().__init__(filename, line, col, maybe_decorator)
        self.callee = callee


class InlinedLoc(ir.Loc):
    """Library code's location: the user's statement (``site``) it runs for."""

    def __init__(self, site: ir.Loc) -> None:
        super().__init__(site.filename, site.line, site.col)
        self.site = site


def is_library_code(loc: ir.Loc) -> bool:
    """Whether ``loc`` is library code's, located at the user's line or not yet."""
    return isinstance(loc, InlinedLoc) or _in_library(loc)


def _in_library(loc: ir.Loc) -> bool:
    """Whether ``loc`` is in Numba's or xpuc's own source (not relocated yet)."""
    return not isinstance(loc, InlinedLoc) and (loc.filename or "").startswith(
        _LIBRARY_DIRECTORIES)


def inlined_call(loc: ir.Loc) -> str | None:
    """For a location of library code: the user's code it runs for, a call as
    ``np.dot(...)``, else the statement as the user wrote it (``'out[:] =
    np.sin(a)'``, which xpuc rewrote as library code); None for the user's
    own code."""
    if not isinstance(loc, InlinedLoc):
        return None
    site = loc.site
    if isinstance(site, CallSite) and site.callee:
        return f"{site.callee}(...)"
    statement = linecache.getline(site.filename, site.line).strip()
    return f"'{statement}'" if statement else "the statement on this line"


def user_names(names: object) -> str:
    """Variable names as the user wrote them (Numba renames ``s`` to ``s.2``)."""
    return ", ".join(sorted({name.split(".")[0] for name in names}))


def described(var: ir.Var, unnamed: str = "a value") -> str:
    """A variable as a message names it: by the user's name, by the user's
    call whose library code computed it, or as ``unnamed`` (one of Numba's
    temporaries, ``$const122.4``)."""
    call = inlined_call(var.loc)
    if call is not None:
        return f"a value computed by {call}"
    return unnamed if var.name.startswith("$") else f"'{user_names([var.name])}'"


@contextlib.contextmanager
def refused_as_user_code(loc: ir.Loc) -> Iterator[None]:
    """Refuse what fails inside library code inlined for a user's call as that
    call, at its line, with the reason in the user's terms: the library's
    variables as temporaries, and none where it names a file."""
    try:
        yield
    except UnsupportedError as error:
        call = inlined_call(loc)
        if call is None or getattr(error, "at_users_call", False):
            raise
        reason = _LIBRARY_NAME.sub("a temporary", str(error).split(": ", 1)[-1])
        said = "" if _PATH.search(reason) else f": {reason}"
        refusal = UnsupportedError(f"{loc.filename}:{loc.line}: {call} cannot be offloaded{said}")
        # the statements of library code nest (a parfor's body in a parfor):
        # the innermost refusal is said once, not again by each around it
        refusal.at_users_call = True
        raise refusal from None


# One of Numba's temporaries (``$phi4.1``), a name its inliner made
# (``argmin_parallel_impl_v4_ival``; of a function local to another,
# ``along_axis__locals__reduce_sum_v36__v662call_7``); a path
_LIBRARY_NAME = re.compile(r"'?(\$[\w.$]+|\b\w*(__locals__|_v\d)[\w.]*)'?")
_PATH = re.compile(r"[/\\]")


# ---- naming the user's calls ------------------------------------------------------

def _spelled(func_ir: ir.FunctionIR, var: ir.Var, depth: int = 0) -> str | None:
    """How the user wrote the callee held in ``var``: ``np.dot`` (a module's
    attribute), ``helper`` (a global), ``x.sum`` (a method)."""
    definition = guard(get_definition, func_ir, var)
    if isinstance(definition, (ir.Global, ir.FreeVar)):
        return definition.name
    if isinstance(definition, ir.Expr) and definition.op == "call" and depth < 4:
        # a method of a call's result: np.sqrt(y).sum
        callee = _spelled(func_ir, definition.func, depth + 1)
        return None if callee is None else f"{callee}(...)"
    if isinstance(definition, ir.Expr) and definition.op == "getattr" and depth < 4:  # a.b.c.d
        base = _spelled(func_ir, definition.value, depth + 1)
        if base is None and not definition.value.name.startswith("$"):
            base = user_names([definition.value.name])
        return None if base is None else f"{base}.{definition.attr}"
    return None


@register_pass(mutates_CFG=False, analysis_only=False)
class TagCallSites(FunctionPass):
    """Give each call in the user's code a ``CallSite`` naming its callee."""

    _name = "xpuc_tag_call_sites"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        func_ir = state.func_ir
        for block in func_ir.blocks.values():
            for stmt in block.find_insts(ir.Assign):
                call = stmt.value
                if not (isinstance(call, ir.Expr) and call.op == "call") or \
                        is_library_code(stmt.loc) or isinstance(stmt.loc, CallSite):
                    continue
                loc = stmt.loc
                site = CallSite(loc.filename, loc.line, loc.col,
                                callee=_spelled(func_ir, call.func))
                # the target: where an inliner assigns what the inlined code returns
                stmt.loc = call.loc = stmt.target.loc = site
        return True


# ---- relocating library code ------------------------------------------------------

def _graph(blocks: dict[int, ir.Block]) -> CFGraph:
    """The control flow between ``blocks``. A parfor's body ends in blocks that
    jump nowhere (the loop's end), and it may jump out of itself: only edges
    between ``blocks`` count."""
    cfg = CFGraph()
    for label in blocks:
        cfg.add_node(label)
    for label, block in blocks.items():
        if block.is_terminated:
            for target in block.terminator.get_targets():
                if target in blocks:
                    cfg.add_edge(label, target)
    cfg.set_entry_point(min(blocks))
    cfg.process()
    return cfg


def _site_of(stmt: ir.Stmt) -> CallSite | None:
    """The user's call whose result ``stmt`` assigns: where an inliner put
    the value the inlined code returns (the call's own target)."""
    return stmt.target.loc if isinstance(stmt, ir.Assign) and isinstance(
        stmt.target.loc, CallSite) else None


def _locate_by_results(blocks: dict[int, ir.Block], defined: dict[str, ir.Loc]) -> None:
    """Relocate library code to the call whose result it computes: library
    statements that lead, with no user statement between, to the assignment
    of a user's call's result (each block's exit takes the one call its
    successors lead to, if one)."""
    cfg = _graph(blocks)
    at_entry: dict[int, CallSite | None] = {}

    def walk_back(label: int, block: ir.Block, relocate: bool) -> CallSite | None:
        """The call ``block``'s statements lead to, from its exit back to its
        entry (relocating its library statements to it if told)."""
        sites = {id(site): site for target, _ in cfg.successors(label)
                 if (site := at_entry.get(target)) is not None}
        site = next(iter(sites.values())) if len(sites) == 1 else None
        for stmt in reversed(block.body):
            site = _site_of(stmt) or (site if _in_library(stmt.loc) else None)
            if relocate and site is not None and _in_library(stmt.loc):
                _relocate(stmt, InlinedLoc(site), defined)
        return site

    changed = True
    while changed:  # to a fixed point: inlined loops lead back into themselves
        changed = False
        for label, block in blocks.items():
            site = walk_back(label, block, relocate=False)
            if at_entry.get(label) is not site:
                at_entry[label], changed = site, True
    for label, block in blocks.items():
        walk_back(label, block, relocate=True)


def _locate_by_dominators(blocks: dict[int, ir.Block], entry: ir.Loc | None,
                          defined: dict[str, ir.Loc]) -> None:
    """Relocate the library statements of ``blocks`` (and of the parfors in
    them), entered at the user's statement ``entry``, to the user statement
    that runs last before them."""
    if not blocks:
        return
    cfg = _graph(blocks)
    dominators = cfg.immediate_dominators()
    at_exit: dict[int, ir.Loc | None] = {}
    for label in cfg.topo_order():
        dominator = dominators.get(label, label)
        current = entry if dominator == label else at_exit[dominator]
        block = blocks[label]
        if _in_library(block.loc) and current is not None:
            block.loc = InlinedLoc(current)
        at_exit[label] = _relocate_statements(block.body, current, defined)


def _relocate_statements(body: list[ir.Stmt], current: ir.Loc | None,
                         defined: dict[str, ir.Loc]) -> ir.Loc | None:
    """Relocate library statements of ``body`` to the user statement before
    them (``current`` on entry); return the one in effect at its end."""
    for stmt in body:
        if isinstance(stmt.loc, InlinedLoc):
            current = stmt.loc.site
        elif not _in_library(stmt.loc):
            current = stmt.loc
        elif current is not None:
            _relocate(stmt, InlinedLoc(current), defined)
        if isinstance(stmt, Parfor):
            _relocate_statements(stmt.init_block.body, current, defined)
            _locate_by_dominators(stmt.loop_body, current, defined)
    return current


def _relocate(stmt: ir.Stmt, loc: InlinedLoc, defined: dict[str, ir.Loc]) -> None:
    stmt.loc = loc
    if isinstance(stmt, ir.Assign):
        if isinstance(stmt.value, (ir.Expr, ir.Global, ir.FreeVar, ir.Const, ir.Arg)):
            stmt.value.loc = loc
        defined[stmt.target.name] = loc
    elif isinstance(stmt, Parfor):
        for nest in stmt.loop_nests:
            defined[nest.index_variable.name] = loc


def _relocate_variables(blocks: dict[int, ir.Block], defined: dict[str, ir.Loc]) -> None:
    """Give the variables that library code defines its new locations, in
    the user's statements too."""
    for block in blocks.values():
        for stmt in block.body:
            for var in stmt.list_vars():
                if var.name in defined and not isinstance(var.loc, CallSite):
                    var.loc = defined[var.name]


@register_pass(mutates_CFG=False, analysis_only=False)
class LocateInlinedCalls(FunctionPass):
    """Once the user's calls are inlined (overloads, the parfor pass's
    parallel implementations), locate their code at the call: the code that
    leads to a call's result, then any other at the user statement before it."""

    _name = "xpuc_locate_inlined_calls"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        defined: dict[str, ir.Loc] = {}
        _locate_by_results(state.func_ir.blocks, defined)
        _locate_by_dominators(state.func_ir.blocks, state.func_ir.loc, defined)
        _relocate_variables(state.func_ir.blocks, defined)
        return bool(defined)


@register_pass(mutates_CFG=False, analysis_only=False)
class RelocateLibraryCode(FunctionPass):
    """Once parfors are made, locate the library code the parfor pass added
    (reduction bodies) at the user statement before it."""

    _name = "xpuc_relocate_library_code"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        defined: dict[str, ir.Loc] = {}
        _locate_by_dominators(state.func_ir.blocks, state.func_ir.loc, defined)
        _relocate_variables(state.func_ir.blocks, defined)
        return bool(defined)
