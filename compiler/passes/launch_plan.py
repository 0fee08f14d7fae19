"""What the host must do to run one lowered parfor: the host half of the gpu stage.

After outlining, the parfor's ``func.func`` holds a little host code (index
arithmetic for grid sizes, values hoisted out of the loop) and ``gpu.launch_func``
ops. ``LaunchPlan`` is that code as plain data, so the host lowering can emit it
with llvmlite without looking at MLIR. Values are numbered: ``0 .. num_params-1``
are the function's arguments in order, each ``HostOp`` defines the next number.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mlir import ir

from ..abi import ArgKind
from ..errors import XpucError
from .aligned_lanes import aligns
from .disjoint import disjoint_variant, written_arguments
from .ir_queries import integer_constant, ops_named, symbol_name
from .unswitch import unit_variant


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
    # whether the kernel runs in blocks of its own (``block`` not all 1: a
    # GPU's reduction work-groups), which the launch passes as its local
    # range; else it is a range of work-items, blocked as the runtime picks
    own_blocks: bool = False
    # a streaming kernel's (aligned_lanes.py): the position in args of the array
    # its vectors align to, that array's element bytes, the position of ``first``
    aligns: tuple[int, int, int] | None = None


@dataclass(frozen=True)
class LaunchPlan:
    num_params: int
    ops: tuple[HostOp, ...]
    launches: tuple[KernelLaunch, ...]

    def value_count(self) -> int:
        return self.num_params + len(self.ops)

    def evaluate(self, params: Sequence[int | float]) -> list[int | float]:
        """Every value of the plan for the host function's arguments
        ``params`` (arrays as their device addresses), computed in Python as
        host_lowering's code computes them: for launches made from Python
        (the CUDA tests and benchmarks)."""
        values = list(params)
        for op in self.ops:
            operands = [values[number] for number in op.operands]
            values.append(op.attr if op.opcode == "const"
                          else int(_PREDICATE_FUNCTIONS[op.attr](*operands))
                          if op.opcode == "cmp" else _OPCODE_FUNCTIONS[op.opcode](*operands))
        return values


def _ceildiv(a: int, b: int) -> int:
    return -(-a // b)


def _truncating_div(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


# HostOp's opcodes on Python integers (signed 64-bit semantics for in-range values)
_OPCODE_FUNCTIONS: dict[str, Callable[..., int]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "div": _truncating_div, "rem": lambda a, b: a - b * _truncating_div(a, b),
    "ceildiv": _ceildiv, "floordiv": operator.floordiv, "min": min, "max": max,
    "select": lambda cond, a, b: a if cond else b, "copy": lambda a: a,
}
_UNSIGNED = 1 << 64
_PREDICATE_FUNCTIONS: dict[str, Callable[[int, int], bool]] = {
    "eq": operator.eq, "ne": operator.ne, "slt": operator.lt, "sle": operator.le,
    "sgt": operator.gt, "sge": operator.ge,
    "ult": lambda a, b: a % _UNSIGNED < b % _UNSIGNED,
    "ule": lambda a, b: a % _UNSIGNED <= b % _UNSIGNED,
    "ugt": lambda a, b: a % _UNSIGNED > b % _UNSIGNED,
    "uge": lambda a, b: a % _UNSIGNED >= b % _UNSIGNED,
}


# ---- reading the plan off the host function of an outlined module ------------

_OPCODES = {
    "arith.addi": "add",
    "arith.subi": "sub",
    "arith.muli": "mul",
    "arith.divsi": "div",
    "arith.remsi": "rem",
    "arith.ceildivsi": "ceildiv",
    "arith.floordivsi": "floordiv",
    "arith.minsi": "min",
    "arith.maxsi": "max",
    "arith.select": "select",
    "arith.cmpi": "cmp",
    "arith.index_cast": "copy",
    "arith.constant": "const",
}

# arith::CmpIPredicate, in enum order
_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")


def _arg_kind(value_type: ir.Type) -> ArgKind:
    # an array's memref, or the array again as a SPIR-V pointer for its atomics
    if isinstance(value_type, ir.MemRefType) or str(value_type).startswith("!spirv.ptr"):
        return ArgKind.PTR
    if isinstance(value_type, ir.IndexType):
        return ArgKind.I64
    if isinstance(value_type, ir.F32Type):
        return ArgKind.F32
    if isinstance(value_type, ir.F64Type):
        return ArgKind.F64
    kinds = {1: ArgKind.I8, 8: ArgKind.I8, 16: ArgKind.I16, 32: ArgKind.I32, 64: ArgKind.I64}
    if isinstance(value_type, ir.IntegerType) and value_type.width in kinds:
        return kinds[value_type.width]
    raise XpucError(f"kernel argument of type {value_type} has no launch-plan kind")


def _computable(opcode: str, result_type: ir.Type) -> bool:
    """Whether the plan, which computes on i64, gets the value ``opcode`` gives
    in ``result_type``: index and i64 values, and i1 as 0 or 1; not floats nor
    the result of a narrowing cast."""
    if isinstance(result_type, ir.IndexType):
        return True
    if not isinstance(result_type, ir.IntegerType):
        return False
    return result_type.width == 64 or (
        result_type.width == 1 and opcode in ("cmp", "select", "const"))


def _host_op(op: ir.Operation, operands: tuple[int, ...]) -> HostOp:
    """``op`` as a HostOp, or XpucError."""
    opcode = _OPCODES.get(op.name)
    if opcode is None or len(op.results) != 1 or not _computable(opcode, op.results[0].type):
        raise XpucError(f"host op '{op.name}' has no launch-plan translation: {op}")
    if opcode == "const":
        value = ir.IntegerAttr(op.attributes["value"]).value
        result_type = op.results[0].type
        if isinstance(result_type, ir.IntegerType) and result_type.width == 1:
            value = int(value != 0)  # an i1 true reads back as -1
        return HostOp("const", attr=value)
    if opcode == "cmp":
        predicate = ir.IntegerAttr(op.attributes["predicate"]).value
        return HostOp("cmp", operands, _PREDICATES[predicate])
    return HostOp(opcode, operands)


def _choices(kernel: ir.Operation, kernels: dict[str, ir.Operation]
             ) -> tuple[KernelChoice, ...]:
    """The copies of ``kernel`` and when to launch them, least specific first:
    its disjoint copy, its copy for unit arguments, that copy's disjoint copy."""
    choices = []
    if (name := disjoint_variant(kernel)) is not None:
        choices.append(KernelChoice(name, disjoint=True))
    if (unit := unit_variant(kernel)) is not None:
        unit_name, ones = unit
        choices.append(KernelChoice(unit_name, ones))
        if (name := disjoint_variant(kernels[unit_name])) is not None:
            choices.append(KernelChoice(name, ones, disjoint=True))
    return tuple(choices)


def is_range_launch(launch: ir.Operation) -> bool:
    """Whether a gpu.launch_func is a range of work-items (its blocks of one
    thread, see gpu_rewrites.index_by_global_ids), not blocks of its kernel's own."""
    view = launch.opview
    return all(integer_constant(size) == 1
               for size in (view.blockSizeX, view.blockSizeY, view.blockSizeZ))


def read_launch_plan(module: ir.Module) -> LaunchPlan:
    """The host function of ``module`` as a LaunchPlan (see launch_plan.py)."""
    host_funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
    if len(host_funcs) != 1:
        raise XpucError(f"expected one host function, found {len(host_funcs)}")
    blocks = list(host_funcs[0].regions[0].blocks)
    if len(blocks) != 1:
        raise XpucError("the host function has control flow, which launch plans cannot express")
    numbers = {value: number for number, value in enumerate(blocks[0].arguments)}
    kernels = {symbol_name(kernel): kernel for kernel in ops_named(module.operation, "gpu.func")}
    ops: list[HostOp] = []
    launches: list[KernelLaunch] = []
    for op in blocks[0].operations:
        op = op.operation
        if op.name == "func.return":
            continue
        if op.name == "gpu.launch_func":
            launch = op.opview
            _, kernel = ir.SymbolRefAttr(op.attributes["kernel"]).value
            kernel_func = kernels[kernel]
            launches.append(KernelLaunch(
                kernel_name=kernel,
                grid=tuple(numbers[v] for v in (launch.gridSizeX, launch.gridSizeY,
                                                 launch.gridSizeZ)),
                block=tuple(numbers[v] for v in (launch.blockSizeX, launch.blockSizeY,
                                                  launch.blockSizeZ)),
                args=tuple((numbers[v], _arg_kind(v.type)) for v in launch.kernelOperands),
                choices=_choices(kernel_func, kernels),
                written=tuple(written_arguments(kernel_func)),
                own_blocks=not is_range_launch(op),
                aligns=aligns(kernel_func),
            ))
            continue
        ops.append(_host_op(op, tuple(numbers[v] for v in op.operands)))
        numbers[op.results[0]] = len(numbers)
    return LaunchPlan(num_params=len(blocks[0].arguments), ops=tuple(ops),
                      launches=tuple(launches))
