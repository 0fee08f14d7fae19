"""What the host must do to run one lowered parfor: the host half of the gpu stage.

After outlining, the parfor's ``func.func`` holds a little host code (index
arithmetic for grid sizes, values hoisted out of the loop) and ``gpu.launch_func``
ops. ``LaunchPlan`` is that code as plain data, so the host lowering can emit it
with llvmlite without looking at MLIR. Values are numbered: ``0 .. num_params-1``
are the function's arguments in order, each ``HostOp`` defines the next number.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..abi import ArgKind


@dataclass(frozen=True)
class HostOp:
    """``result = opcode(*operands)`` on 64-bit signed integers (index values).

    Opcodes: ``const`` (value in ``attr``, no operands), ``add``, ``sub``, ``mul``,
    ``div`` (signed, truncating), ``rem`` (signed), ``ceildiv``, ``floordiv``,
    ``min``, ``max``, ``select`` (cond, a, b), ``cmp`` (predicate name in
    ``attr``: eq ne slt sle sgt sge ult ule ugt uge, result 0 or 1), ``copy``
    (an index_cast or other value-preserving op).
    """

    opcode: str
    operands: tuple[int, ...] = ()
    attr: int | str | None = None


@dataclass(frozen=True)
class KernelChoice:
    """A copy of a launch's kernel to launch instead when the arguments at
    positions ``ones`` are all 1 (unswitch.py) and, if ``disjoint``, no
    array the kernel may write overlaps another array argument (disjoint.py)."""

    kernel_name: str
    ones: tuple[int, ...] = ()
    disjoint: bool = False


@dataclass(frozen=True)
class KernelLaunch:
    kernel_name: str
    grid: tuple[int, int, int]  # value numbers of the work-group counts, x y z
    block: tuple[int, int, int]  # value numbers of the work-group sizes, x y z
    args: tuple[tuple[int, ArgKind], ...]  # (value number, kind) per kernel argument
    # the last choice whose conditions hold is launched, else kernel_name
    choices: tuple[KernelChoice, ...] = ()
    written: tuple[int, ...] = ()  # positions in args of arrays the kernel may write


@dataclass(frozen=True)
class LaunchPlan:
    num_params: int
    ops: tuple[HostOp, ...]
    launches: tuple[KernelLaunch, ...]

    def value_count(self) -> int:
        return self.num_params + len(self.ops)
