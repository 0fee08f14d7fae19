"""NumPy arrays held in globals or closure variables, read in parfor bodies.

Numba compiles such an array as a constant of the host code (a lookup table,
a stencil's weights). A kernel cannot hold it, so ``HoistConstantArrays``
moves each body's load of one out of the parfor, before it, and makes it a
parameter of the parfor: the host passes the constant to the kernel as it
passes any NumPy array (copied to the device where the device cannot read
host memory, never copied back: its type is read-only).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.parfors.parfor import Parfor


def _constant_array_loads(parfor: Parfor, enclosing: list[Parfor]
                          ) -> Iterator[tuple[list[Parfor], ir.Block, ir.Assign]]:
    """Each load of a global or closure NumPy array in ``parfor``'s body (in
    the parfors nested there too), with the parfors around it."""
    nest = enclosing + [parfor]
    for block in parfor.loop_body.values():
        for stmt in block.body:
            if isinstance(stmt, Parfor):
                yield from _constant_array_loads(stmt, nest)
            elif isinstance(stmt, ir.Assign) and isinstance(
                    stmt.value, (ir.Global, ir.FreeVar)) and isinstance(
                    stmt.value.value, np.ndarray):
                yield nest, block, stmt


@register_pass(mutates_CFG=False, analysis_only=False)
class HoistConstantArrays(FunctionPass):
    """Load the constant arrays that parfor bodies read before the parfor,
    as parameters of it."""

    _name = "xpuc_hoist_constant_arrays"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        changed = False
        for block in state.func_ir.blocks.values():
            for stmt in list(block.body):
                if not isinstance(stmt, Parfor):
                    continue
                for nest, body_block, load in list(_constant_array_loads(stmt, [])):
                    body_block.body.remove(load)
                    block.body.insert(block.body.index(stmt), load)
                    for parfor in nest:
                        parfor.params.add(load.target.name)
                    changed = True
        return changed
