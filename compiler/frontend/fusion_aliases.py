"""Two parfors that share memory through different arrays kept apart.

Numba's fusion (``try_fuse``) asks whether the second parfor reads what the
first writes at another iteration's index, array by array, by variable name.
Two names of one memory escape it: ``x[:] = 0.5; c = y * 2.0 + x`` with
``x`` and ``y`` views the caller took of one array (``a[:-1]``, ``a[1:]``),
fused, writes ``x[i]`` and reads ``y[i]``, which is ``x[i + 1]``, in one
iteration: the old value where NumPy reads the new one, on the host as in a
kernel (and under Numba's ``parallel=True`` too). The array analysis equates
their extents (``y * 2.0 + x`` asserts them equal), so nothing else stops it.

Before each fusion, every array one parfor writes is compared with every
array the other reads or writes under another name: they may be fused only
where the two are proved apart (``distinct_arrays``: one made by the
function, the other not made from it), or are the same elements (one a
whole view of the other, ``a[:]``) read and written at the parfor's own index
alone.
"""

from __future__ import annotations

from numba.core import ir, types
from numba.core.ir_utils import build_definitions
from numba.parfors.parfor import Parfor, get_parfor_writes

from .expression_stores import distinct_arrays
from .shared_operands import definitions_in, is_whole_index


def _arrays(names: set[str], typemap: dict) -> set[str]:
    return {name for name in names if isinstance(typemap.get(name), types.Array)}


def _accessed(parfor: Parfor, typemap: dict) -> set[str]:
    """The arrays ``parfor``'s loop reads or writes."""
    return _arrays({var.name for block in parfor.loop_body.values() for stmt in block.body
                    for var in stmt.list_vars()}, typemap)


def _same_elements(state, name: str) -> str:
    """``name``'s array through copies and whole views (``a[:]``, ``m[:, :]``),
    which are its elements at the same indices."""
    definition_of = definitions_in(state.func_ir)
    seen = set()
    while name not in seen:
        seen.add(name)
        definition = definition_of(name)
        if isinstance(definition, ir.Var):
            name = definition.name
        elif isinstance(definition, ir.Expr) and definition.op in ("getitem", "static_getitem") \
                and is_whole_index(definition.index, definition_of, state.typemap):
            name = definition.value.name
        else:
            break
    return name


def _only_at_own_index(parfor: Parfor, names: set[str]) -> bool:
    """Whether ``parfor``'s loop reads and writes the arrays ``names`` only
    at its own index (an iteration's element), and passes them nowhere else."""
    own = {parfor.index_var.name}
    if len(parfor.loop_nests) == 1:
        own.add(parfor.loop_nests[0].index_variable.name)
    for block in parfor.loop_body.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var) and \
                    stmt.value.name in own:
                own.add(stmt.target.name)
                continue
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and stmt.target.name in names:
                index, others = stmt.index, [stmt.value]
            elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
                    stmt.value.op in ("getitem", "static_getitem") and \
                    stmt.value.value.name in names:
                index, others = stmt.value.index, []
            else:
                if any(var.name in names for var in stmt.list_vars()):
                    return False
                continue
            if not isinstance(index, ir.Var) or index.name not in own or \
                    any(var.name in names for var in others):
                return False
    return True


def fusion_would_race(state, first: Parfor, second: Parfor) -> bool:
    """Whether fusing ``second`` into ``first`` may have an iteration read or
    write an element that another iteration writes through another array:
    an array one writes may share memory with one the other accesses."""
    typemap = state.typemap
    first_writes = _arrays(get_parfor_writes(first), typemap)
    second_writes = _arrays(get_parfor_writes(second), typemap)
    pairs = {(written, accessed)
             for writes, accesses in ((first_writes, _accessed(second, typemap)),
                                      (second_writes, _accessed(first, typemap)))
             for written in writes for accessed in accesses if written != accessed}
    if not pairs:
        return False
    state.func_ir._definitions = build_definitions(state.func_ir.blocks)
    for written, accessed in pairs:
        if distinct_arrays(state, written, accessed):
            continue
        if _same_elements(state, written) == _same_elements(state, accessed) and all(
                _only_at_own_index(parfor, {written, accessed}) for parfor in (first, second)):
            continue
        return True
    return False
