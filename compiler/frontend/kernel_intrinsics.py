"""The functions an explicit kernel calls per work-item: each one's Python
stub (what ``xpuc.get_global_id`` and friends are), its Numba typing, and its
translation rule into the gpu / memref / spirv dialects, side by side. The
rules are in KERNEL_CALL_RULES, which only explicit kernels look in (a parfor
body calling ``xpuc.get_global_id`` finds no rule).

Dimensions follow SYCL: in a range ``(n0, n1)`` the last dimension varies
fastest between neighbouring work-items, so it is SPIR-V's ``x`` (the one the
device compiler vectorizes across): user dimension ``d`` of an ``ndim``-D
range is axis ``ndim - 1 - d``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING

from numba.core import ir, types
from numba.core.typing.templates import AbstractTemplate, infer_global, signature

from ..dialects import INDEX, Value, arith
from ..dialects.registry import RuleTable
from ..dialects.types import ScalarType
from ..errors import UnsupportedError
from .body_values import ArrayValue
from .rules.arrays import allocate_array
from .translation import constant_value
from .user_locations import where

if TYPE_CHECKING:
    from .kernel_to_mlir import KernelTranslation

def outside_kernel(name: str) -> Exception:
    """What a kernel-only function raises when Python calls it."""
    return RuntimeError(f"xpuc.{name} can only be called inside an @xpuc.kernel function")


def get_global_id(dim: int) -> int:
    """This work-item's index in dimension ``dim`` of the global range."""
    raise outside_kernel("get_global_id")


def get_local_id(dim: int) -> int:
    """This work-item's index in dimension ``dim`` of its work-group."""
    raise outside_kernel("get_local_id")


def get_group_id(dim: int) -> int:
    """This work-group's index in dimension ``dim``."""
    raise outside_kernel("get_group_id")


def get_global_size(dim: int) -> int:
    """The global range's size in dimension ``dim``."""
    raise outside_kernel("get_global_size")


def get_local_size(dim: int) -> int:
    """The work-group's size in dimension ``dim``."""
    raise outside_kernel("get_local_size")


def get_num_groups(dim: int) -> int:
    """The number of work-groups in dimension ``dim``."""
    raise outside_kernel("get_num_groups")


# Linear positions and sizes over all of the range's dimensions, in SYCL's
# row-major order (numba-dpex's Item.get_linear_id and the like)
def get_global_linear_id() -> int:
    raise outside_kernel("get_global_linear_id")


def get_local_linear_id() -> int:
    raise outside_kernel("get_local_linear_id")


def get_group_linear_id() -> int:
    raise outside_kernel("get_group_linear_id")


def get_global_linear_size() -> int:
    raise outside_kernel("get_global_linear_size")


def get_local_linear_size() -> int:
    raise outside_kernel("get_local_linear_size")


def get_linear_num_groups() -> int:
    raise outside_kernel("get_linear_num_groups")


def private_array(shape: int | tuple[int, ...], dtype: object) -> object:
    """An array of the work-item's own (``xpuc.private.array``): constant shape."""
    raise outside_kernel("private.array")


def local_array(shape: int | tuple[int, ...], dtype: object) -> object:
    """A work-group local array (``xpuc.local.array``): constant shape."""
    raise outside_kernel("local.array")


# ---- typing ------------------------------------------------------------------

def kernel_template(key: Callable, generic: Callable) -> None:
    """Type calls of ``key`` by ``generic(self, args)``, keyword arguments
    folded into the positions of ``key``'s Python signature."""
    parameters = inspect.signature(key)

    def typed(self, args, kws):
        try:
            args = parameters.bind(*args, **kws).args
        except TypeError:
            return None
        found = generic(self, args, {})
        return None if found is None else found.replace(pysig=parameters)

    infer_global(key)(type(f"_{key.__name__}_typing", (AbstractTemplate,),
                           {"key": key, "generic": typed}))


def _dimension_function_typing(self, args, kws):
    if not kws and len(args) == 1 and isinstance(args[0], types.Integer):
        return signature(types.intp, args[0])
    return None


def _no_argument_typing(self, args, kws):
    return signature(types.intp) if not args and not kws else None


def shape_rank(shape: types.Type) -> int | None:
    if isinstance(shape, types.Integer):
        return 1
    if isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape):
        return len(shape)
    return None


def _local_array_typing(self, args, kws):
    if kws or len(args) != 2:
        return None
    shape, dtype = args
    rank = shape_rank(shape)
    if isinstance(dtype, types.NumberClass):
        dtype = dtype.instance_type
    elif isinstance(dtype, types.DType):
        dtype = dtype.dtype
    if rank is None or not isinstance(dtype, (types.Number, types.Boolean)):
        return None
    return signature(types.Array(dtype, rank, "C"), *args)


for _fn in (get_global_id, get_local_id, get_group_id, get_global_size, get_local_size,
            get_num_groups):
    kernel_template(_fn, _dimension_function_typing)
for _fn in (get_global_linear_id, get_local_linear_id, get_group_linear_id,
            get_global_linear_size, get_local_linear_size, get_linear_num_groups):
    kernel_template(_fn, _no_argument_typing)
kernel_template(local_array, _local_array_typing)
kernel_template(private_array, _local_array_typing)


# ---- translation -------------------------------------------------------------

# the rules of calls only explicit kernels see, looked up before CALL_RULES
# (KernelTranslation.rule_for_call)
KernelCallRule = Callable[["KernelTranslation", ir.Expr, ir.Var], object]
KERNEL_CALL_RULES: RuleTable[object, KernelCallRule] = RuleTable("kernel call")
kernel_call_rule = KERNEL_CALL_RULES.rule


def _constant(t: KernelTranslation, var: ir.Var, what: str, loc: ir.Loc) -> object:
    """The compile-time value of ``var``: a literal, or a constant tuple."""
    value = constant_value(t, var)
    if value is None:
        raise UnsupportedError(f"{where(loc)}: {what} must be a constant")
    return value


def _axis(t: KernelTranslation, expr: ir.Expr) -> str:
    """SPIR-V axis of the dimension argument of a work-item function."""
    dim = _constant(t, expr.args[0], "the dimension", expr.loc)
    if not isinstance(dim, int) or not 0 <= dim < t.ndim:
        raise UnsupportedError(
            f"{where(expr.loc)}: dimension {dim!r} of a {t.ndim}-D range")
    return "xyz"[t.ndim - 1 - dim]


def _id_rule(*ops: str):
    """A work-item function as the product of gpu ops on its axis."""
    def translate(t: KernelTranslation, expr: ir.Expr, target: ir.Var) -> Value:
        axis = _axis(t, expr)
        values = [t.b.op(f"{op} {axis}", INDEX) for op in ops]
        result = values[0]
        for value in values[1:]:
            result = arith.binary(t.b, "arith.muli", result, value)
        return arith.cast(t.b, result, ScalarType("i", 64))

    return translate


kernel_call_rule(get_global_id)(_id_rule("gpu.global_id"))
kernel_call_rule(get_local_id)(_id_rule("gpu.thread_id"))
kernel_call_rule(get_group_id)(_id_rule("gpu.block_id"))
kernel_call_rule(get_local_size)(_id_rule("gpu.block_dim"))
kernel_call_rule(get_global_size)(_id_rule("gpu.grid_dim", "gpu.block_dim"))
kernel_call_rule(get_num_groups)(_id_rule("gpu.grid_dim"))


def _linear_rule(index_ops: tuple[str, ...], extent_ops: tuple[str, ...]):
    """A linear position (the product of ``index_ops`` on each axis) in, or with
    no ``index_ops`` the size of, the extents ``extent_ops`` make: the last
    dimension (x) fastest."""
    def product(t: KernelTranslation, ops: tuple[str, ...], axis: str) -> Value:
        values = [t.b.op(f"{op} {axis}", INDEX) for op in ops]
        result = values[0]
        for value in values[1:]:
            result = arith.binary(t.b, "arith.muli", result, value)
        return result

    def translate(t: KernelTranslation, expr: ir.Expr, target: ir.Var) -> Value:
        result = stride = None
        for axis in "xyz"[:t.ndim]:
            extent = product(t, extent_ops, axis)
            if index_ops:
                term = product(t, index_ops, axis)
                if stride is not None:
                    term = arith.binary(t.b, "arith.muli", term, stride)
                result = term if result is None else arith.binary(t.b, "arith.addi", result,
                                                                  term)
            stride = extent if stride is None else arith.binary(t.b, "arith.muli", stride,
                                                                extent)
        return arith.cast(t.b, result if index_ops else stride, ScalarType("i", 64))

    return translate


kernel_call_rule(get_global_linear_id)(
    _linear_rule(("gpu.global_id",), ("gpu.grid_dim", "gpu.block_dim")))
kernel_call_rule(get_local_linear_id)(_linear_rule(("gpu.thread_id",), ("gpu.block_dim",)))
kernel_call_rule(get_group_linear_id)(_linear_rule(("gpu.block_id",), ("gpu.grid_dim",)))
kernel_call_rule(get_global_linear_size)(_linear_rule((), ("gpu.grid_dim", "gpu.block_dim")))
kernel_call_rule(get_local_linear_size)(_linear_rule((), ("gpu.block_dim",)))
kernel_call_rule(get_linear_num_groups)(_linear_rule((), ("gpu.grid_dim",)))


@kernel_call_rule(local_array, private_array)
def _kernel_array(t: KernelTranslation, expr: ir.Expr, target: ir.Var) -> ArrayValue:
    """Work-group memory (one variable per kernel, whatever block asks for
    it), or the work-item's own."""
    local = t.typemap[expr.func.name].typing_key is local_array
    what = "local array" if local else "private array"
    shape = _constant(t, expr.args[0], f"the shape of a {what}", expr.loc)
    shape = shape if isinstance(shape, tuple) else (shape,)
    if not all(isinstance(n, int) and n > 0 for n in shape):
        raise UnsupportedError(f"{where(expr.loc)}: {what} shape {shape} must be "
                               "positive integers")
    return allocate_array(t, target, shape, what, expr.loc,
                          "Workgroup" if local else "Function")
