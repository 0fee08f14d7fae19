"""What the work-items of an explicit kernel do together: barriers and memory
fences (``xpuc.barrier``, ``xpuc.mem_fence``, ``xpuc.atomic_fence``) and the
work-group collectives of ``xpuc.group``: the Python stubs, their Numba typing
and their translation.

Fence flags are OpenCL's: ``LOCAL_MEM_FENCE`` orders work-group local memory,
``GLOBAL_MEM_FENCE`` global memory; or-ed together, both.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING

from numba.core import ir, types
from numba.core.errors import TypingError
from numba.core.typing.templates import signature

from ..dialects import Value, gpu, spirv
from ..errors import UnsupportedError
from .kernel_intrinsics import kernel_call_rule, kernel_template, outside_kernel
from .translation import constant_value
from .user_locations import where

if TYPE_CHECKING:
    from .kernel_to_mlir import KernelTranslation

LOCAL_MEM_FENCE = 1
GLOBAL_MEM_FENCE = 2


def barrier(flags: int = LOCAL_MEM_FENCE) -> None:
    """Wait until every work-item of the work-group gets here; their writes to
    the memory ``flags`` names before it are visible after it."""
    raise outside_kernel("barrier")


def mem_fence(flags: int) -> None:
    """Order this work-item's accesses to the memory ``flags`` names: those
    before the fence happen before those after it, as other work-items see them."""
    raise outside_kernel("mem_fence")


def atomic_fence() -> None:
    """A sequentially consistent fence over all memory, device-wide (SYCL's
    ``atomic_fence`` with its default order and scope)."""
    raise outside_kernel("atomic_fence")


def reduce_add(value: object) -> object:
    """The sum of ``value`` over the work-group, in every work-item."""
    raise outside_kernel("group.reduce_add")


def reduce_mul(value: object) -> object:
    """The product of ``value`` over the work-group, in every work-item."""
    raise outside_kernel("group.reduce_mul")


def reduce_min(value: object) -> object:
    """The least ``value`` of the work-group, in every work-item."""
    raise outside_kernel("group.reduce_min")


def reduce_max(value: object) -> object:
    """The greatest ``value`` of the work-group, in every work-item."""
    raise outside_kernel("group.reduce_max")


# ---- typing ------------------------------------------------------------------

def _fence_typing(flag_count: int):
    def generic(self, args, kws):
        if len(args) > flag_count or not all(isinstance(a, types.Integer) for a in args):
            return None
        return signature(types.none, *args)

    return generic


def _collective_typing(self, args, kws):
    if len(args) != 1 or not isinstance(args[0], (types.Integer, types.Float)):
        return None
    value = types.unliteral(args[0])
    if isinstance(value, types.Integer) and value.bitwidth < 32:
        raise TypingError(f"xpuc.group: a collective of {value} (int32, int64, float32 and "
                          "float64 are supported)")
    return signature(value, *args)


kernel_template(barrier, _fence_typing(1))
kernel_template(mem_fence, _fence_typing(1))
kernel_template(atomic_fence, _fence_typing(0))
for _collective in (reduce_add, reduce_mul, reduce_min, reduce_max):
    kernel_template(_collective, _collective_typing)


# ---- translation -------------------------------------------------------------

def _flags(t: KernelTranslation, var: ir.Var) -> object:
    """The compile-time value of fence flags, or-ed ones included."""
    value = constant_value(t, var)
    definition = t.definition(var)
    if value is None and isinstance(definition, ir.Expr) and definition.op == "binop" \
            and definition.fn is operator.or_:
        left, right = _flags(t, definition.lhs), _flags(t, definition.rhs)
        value = left | right if isinstance(left, int) and isinstance(right, int) else None
    return value


def _memories(t: KernelTranslation, expr: ir.Expr, default: int | None) -> list[str]:
    """The memories (spirv.MEMORIES) a fence's flags argument names."""
    flags = _flags(t, expr.args[0]) if expr.args else default
    if not isinstance(flags, int) or flags & ~(LOCAL_MEM_FENCE | GLOBAL_MEM_FENCE) or not flags:
        raise UnsupportedError(f"{where(expr.loc)}: fence flags {flags!r}: a constant "
                               "LOCAL_MEM_FENCE, GLOBAL_MEM_FENCE or both or-ed")
    return [memory for flag, memory in ((LOCAL_MEM_FENCE, spirv.WORKGROUP_MEMORY),
                                        (GLOBAL_MEM_FENCE, spirv.GLOBAL_MEMORY)) if flags & flag]


@kernel_call_rule(barrier)
def _barrier(t: KernelTranslation, expr: ir.Expr, target: ir.Var) -> None:
    spirv.control_barrier(t.b, _memories(t, expr, LOCAL_MEM_FENCE))


@kernel_call_rule(mem_fence)
def _mem_fence(t: KernelTranslation, expr: ir.Expr, target: ir.Var) -> None:
    spirv.memory_barrier(t.b, "Workgroup", "AcquireRelease", _memories(t, expr, None))


@kernel_call_rule(atomic_fence)
def _atomic_fence(t: KernelTranslation, expr: ir.Expr, target: ir.Var) -> None:
    spirv.memory_barrier(t.b, "Device", "SequentiallyConsistent",
                         [spirv.WORKGROUP_MEMORY, spirv.GLOBAL_MEMORY])


# gpu.all_reduce's operation of each collective: (floats, signed, unsigned)
_REDUCTIONS: dict[Callable, tuple[str, str, str]] = {
    reduce_add: ("add", "add", "add"),
    reduce_mul: ("mul", "mul", "mul"),
    reduce_min: ("minnumf", "minsi", "minui"),
    reduce_max: ("maxnumf", "maxsi", "maxui"),
}


@kernel_call_rule(*_REDUCTIONS)
def _collective(t: KernelTranslation, expr: ir.Expr, target: ir.Var) -> Value:
    value = t.value(expr.args[0])
    if t.typemap[expr.func.name].typing_key is reduce_mul:
        # OpenCL's core SPIR-V has group add, min and max but no multiply, which
        # is SPV_KHR_uniform_group_instructions' (the gpu dialect's conversion
        # emits none of its ops)
        return spirv.group_product(t.b, value)
    floats, signed, unsigned = _REDUCTIONS[t.typemap[expr.func.name].typing_key]
    operation = floats if value.type.is_float else signed if value.type.is_signed else unsigned
    return gpu.all_reduce(t.b, operation, value)
