"""dpnp's array constructors inside offloaded functions: ``dpnp.empty``,
``zeros``, ``ones``, ``full``, ``arange``, ``eye`` and the ``*_like`` ones
make USM arrays on the call's queue, with their ``dtype`` and ``usm_type``;
zeros, ones, full, arange and eye fill them in a parfor.

Where the call runs follows their ``device=`` (a constant) and
``sycl_queue=`` (an argument) as it follows a USM argument's queue (SPEC
rules 3-6): ``constructed_by`` finds them in the function before it runs,
for placement.py; the compiled code allocates on the call's queue, which
placement made equivalent to theirs.

dpnp costs a while to import: these overloads are registered when the first
function that uses it is placed (it is imported by then).
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numba
from numba.core import ir, types
from numba.core.compiler import run_frontend
from numba.core.datamodel.models import OpaqueModel
from numba.core.extending import NativeValue, overload, register_model, typeof_impl, unbox
from numba.core.ir_utils import get_definition, guard

from ..errors import UnsupportedError
from .device_functions import callee_object, device_function
from .kernel_intrinsics import shape_rank
from .usm import USM_ARRAY_CLASSES, USM_TYPES, USMArray, empty_usm

CONSTRUCTORS = ("empty", "zeros", "ones", "full", "arange", "eye",
                "empty_like", "zeros_like", "ones_like", "full_like")


# ---- queues as arguments --------------------------------------------------------

class SyclQueueType(types.Opaque):
    """A ``dpctl.SyclQueue`` argument: compiled code only passes it to the
    constructors, which allocate on the call's queue (placement checked it is
    equivalent), so it carries nothing."""

    def __init__(self) -> None:
        super().__init__(name="SyclQueue")


sycl_queue_type = SyclQueueType()
register_model(SyclQueueType)(OpaqueModel)


def _typeof_queue(value: object, context) -> SyclQueueType:
    return sycl_queue_type


try:
    import dpctl
except ImportError:  # no SYCL: no queue is an argument
    pass
else:
    typeof_impl.register(dpctl.SyclQueue)(_typeof_queue)


@unbox(SyclQueueType)
def _unbox_queue(typ: SyclQueueType, obj, c) -> NativeValue:
    return NativeValue(c.context.get_dummy_value())


# ---- where a function's constructors put their arrays ----------------------------

@dataclass(frozen=True)
class Constructed:
    """What a function's dpnp constructors say about where it runs: the
    devices they name and the parameters they take ``sycl_queue`` from."""

    devices: frozenset[str]
    queue_parameters: frozenset[str]


@functools.lru_cache(maxsize=1024)
def constructed_by(py_func: Callable) -> Constructed | None:
    """The dpnp constructors' placement in ``py_func`` and the jitted functions
    it calls (which are inlined into it), or None when they call none."""
    return _constructed(py_func, ())


def _constructed(py_func: Callable, callers: tuple[Callable, ...]) -> Constructed | None:
    dpnp = sys.modules.get("dpnp")
    code = getattr(py_func, "__code__", None)
    if dpnp is None or code is None or py_func in callers:  # recursion: refused when inlined
        return None
    referred = [py_func.__globals__.get(name) for name in code.co_names]
    referred += _closure_values(py_func)
    if not any(value is dpnp or device_function(value) for value in referred):
        return None
    func_ir = run_frontend(py_func)
    devices, queues, found = set(), set(), False
    for block in func_ir.blocks.values():
        for stmt in block.find_insts(ir.Assign):
            call = stmt.value
            if not (isinstance(call, ir.Expr) and call.op == "call"):
                continue
            callee = guard(get_definition, func_ir, call.func)
            inner = device_function(callee_object(func_ir, call))
            if inner is not None:
                constructed = _constructed(inner, (*callers, py_func))
                if constructed is not None:
                    found = True
                    devices |= constructed.devices
                    queues |= {_caller_queue(func_ir, stmt, inner, parameter)
                               for parameter in constructed.queue_parameters}
                continue
            if not (isinstance(callee, ir.Expr) and callee.op == "getattr"
                    and callee.attr in CONSTRUCTORS
                    and _constant(func_ir, callee.value) is dpnp):
                continue
            found = True
            kws = dict(call.kws)
            device = _constant(func_ir, kws.get("device"))
            queue = kws.get("sycl_queue")
            if isinstance(device, str):
                devices.add(device)
            elif device is not None:
                raise UnsupportedError(
                    f"{stmt.loc.filename}:{stmt.loc.line}: dpnp.{callee.attr}(device=...) "
                    "takes a constant device name here (or pass sycl_queue=)")
            if queue is not None:
                parameter = guard(get_definition, func_ir, queue)
                if not isinstance(parameter, ir.Arg):
                    raise UnsupportedError(
                        f"{stmt.loc.filename}:{stmt.loc.line}: dpnp.{callee.attr}"
                        "(sycl_queue=...) takes a queue the function is given as an argument")
                queues.add(parameter.name)
    return Constructed(frozenset(devices), frozenset(queues)) if found else None


def _closure_values(py_func: Callable) -> list:
    values = []
    for cell in py_func.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # a closure variable not assigned yet
            pass
    return values


def _caller_queue(func_ir: ir.FunctionIR, stmt: ir.Assign, callee: Callable,
                  parameter: str) -> str:
    """The caller's parameter that a call passes as the callee's queue
    ``parameter`` (a callee's constructor with ``sycl_queue=``)."""
    call = stmt.value
    try:
        passed = inspect.signature(callee).bind(*call.args, **dict(call.kws)).arguments
    except TypeError:
        passed = {}
    given = guard(get_definition, func_ir, passed[parameter]) if parameter in passed else None
    if not isinstance(given, ir.Arg):
        raise UnsupportedError(
            f"{stmt.loc.filename}:{stmt.loc.line}: {callee.__name__}'s dpnp constructor takes "
            f"sycl_queue={parameter}: pass it a queue this function is given as an argument")
    return given.name


def _constant(func_ir: ir.FunctionIR, var: ir.Var | None) -> object:
    if var is None:
        return None
    found = guard(get_definition, func_ir, var)
    if isinstance(found, (ir.Const, ir.Global, ir.FreeVar)):
        return found.value
    return _Unknown


_Unknown = object()  # a value not known when compiling


# ---- typing and implementation -------------------------------------------------

def _absent(value: types.Type | None) -> bool:
    return value is None or isinstance(value, (types.NoneType, types.Omitted))


def _dtype(dtype: types.Type | None, default: types.Type) -> types.Type | None:
    if _absent(dtype):
        return default
    if isinstance(dtype, types.NumberClass):
        return dtype.instance_type
    if isinstance(dtype, types.DType):
        return dtype.dtype
    return None


def _usm_type(usm_type: types.Type | str | None, default: str) -> str | None:
    """The constant ``usm_type`` given (Numba passes an omitted argument's
    default as it is), or None when it is not one."""
    if isinstance(usm_type, (types.Omitted, types.StringLiteral)):
        usm_type = usm_type.value if isinstance(usm_type, types.Omitted) \
            else usm_type.literal_value
    if usm_type is None or isinstance(usm_type, types.NoneType):
        return default
    return usm_type if usm_type in USM_TYPES else None


def _placement_arguments_known(device: types.Type | None, queue: types.Type | None) -> bool:
    """``device`` a constant name and ``sycl_queue`` a queue, or absent:
    what ``constructed_by`` found placement on."""
    return ((_absent(device) or isinstance(device, types.StringLiteral))
            and (_absent(queue) or isinstance(queue, SyclQueueType)))


def _array_type(rank: int | None, dtype: types.Type | None, usm_type: str | None,
                device: types.Type | None, queue: types.Type | None) -> USMArray | None:
    if None in (rank, dtype, usm_type) or not _placement_arguments_known(device, queue):
        return None
    return USM_ARRAY_CLASSES[usm_type](dtype, rank, "C")


@functools.cache
def register_overloads(dpnp) -> None:
    """Teach Numba dpnp's constructors, for the CPU target that offloaded
    functions compile for. Each is inlined before the parfor pass, which makes
    its fill (``flat[:] = value``) or arange's loop a parfor."""
    def filled(name: str, value: int | None) -> None:
        @overload(getattr(dpnp, name), target="cpu", inline="always", prefer_literal=True)
        def constructor(shape, dtype=None, order="C", like=None, device=None,
                        usm_type="device", sycl_queue=None):
            array_type = _array_type(shape_rank(shape), _dtype(dtype, types.float64),
                                     _usm_type(usm_type, "device"), device, sycl_queue)
            if array_type is None:
                return None

            def empty(shape, dtype=None, order="C", like=None, device=None,
                      usm_type="device", sycl_queue=None):
                return empty_usm(shape, array_type)

            def fill(shape, dtype=None, order="C", like=None, device=None,
                     usm_type="device", sycl_queue=None):
                array = empty_usm(shape, array_type)
                array.reshape(array.size)[:] = value
                return array

            return empty if value is None else fill

    for name, value in (("empty", None), ("zeros", 0), ("ones", 1)):
        filled(name, value)

    @overload(dpnp.full, target="cpu", inline="always", prefer_literal=True)
    def full(shape, fill_value, dtype=None, order="C", like=None, device=None,
             usm_type=None, sycl_queue=None):
        natural = fill_value if isinstance(fill_value, (types.Number, types.Boolean)) else None
        array_type = _array_type(shape_rank(shape), _dtype(dtype, natural),
                                 _usm_type(usm_type, "device"), device, sycl_queue)
        if array_type is None:
            return None

        def impl(shape, fill_value, dtype=None, order="C", like=None, device=None,
                 usm_type=None, sycl_queue=None):
            array = empty_usm(shape, array_type)
            array.reshape(array.size)[:] = fill_value
            return array

        return impl

    def like(name: str, value: int | None) -> None:
        @overload(getattr(dpnp, name), target="cpu", inline="always", prefer_literal=True)
        def constructor(a, dtype=None, order="K", subok=False, shape=None, device=None,
                        usm_type=None, sycl_queue=None):
            array_type = _like_type(a, dtype, shape, usm_type, device, sycl_queue)
            if array_type is None:
                return None

            def empty(a, dtype=None, order="K", subok=False, shape=None, device=None,
                      usm_type=None, sycl_queue=None):
                return empty_usm(a.shape, array_type)

            def fill(a, dtype=None, order="K", subok=False, shape=None, device=None,
                     usm_type=None, sycl_queue=None):
                array = empty_usm(a.shape, array_type)
                array.reshape(array.size)[:] = value
                return array

            return empty if value is None else fill

    for name, value in (("empty_like", None), ("zeros_like", 0), ("ones_like", 1)):
        like(name, value)

    @overload(dpnp.full_like, target="cpu", inline="always", prefer_literal=True)
    def full_like(a, fill_value, dtype=None, order="K", subok=False, shape=None, device=None,
                  usm_type=None, sycl_queue=None):
        array_type = _like_type(a, dtype, shape, usm_type, device, sycl_queue)
        if array_type is None:
            return None

        def impl(a, fill_value, dtype=None, order="K", subok=False, shape=None, device=None,
                 usm_type=None, sycl_queue=None):
            array = empty_usm(a.shape, array_type)
            array.reshape(array.size)[:] = fill_value
            return array

        return impl

    @overload(dpnp.arange, target="cpu", inline="always", prefer_literal=True)
    def arange(start, stop=None, step=1, dtype=None, like=None, device=None,
               usm_type="device", sycl_queue=None):
        # an omitted step comes as its default, the number itself
        bounds = [types.int64 if isinstance(t, int) else t for t in (start, stop, step)
                  if not _absent(t)]
        if not all(isinstance(t, (types.Integer, types.Float)) for t in bounds):
            return None
        natural = types.float64 if any(isinstance(t, types.Float) for t in bounds) \
            else types.int64
        array_type = _array_type(1, _dtype(dtype, natural), _usm_type(usm_type, "device"),
                                 device, sycl_queue)
        if array_type is None:
            return None

        def from_zero(start, stop=None, step=1, dtype=None, like=None, device=None,
                      usm_type="device", sycl_queue=None):
            count = max(math.ceil(start / step), 0)
            array = empty_usm(count, array_type)
            numba.parfors.parfor.init_prange()
            for i in numba.parfors.parfor.internal_prange(count):
                array[i] = i * step
            return array

        def between(start, stop=None, step=1, dtype=None, like=None, device=None,
                    usm_type="device", sycl_queue=None):
            count = max(math.ceil((stop - start) / step), 0)
            array = empty_usm(count, array_type)
            numba.parfors.parfor.init_prange()
            for i in numba.parfors.parfor.internal_prange(count):
                array[i] = start + i * step
            return array

        return from_zero if _absent(stop) else between

    @overload(dpnp.eye, target="cpu", inline="always", prefer_literal=True)
    def eye(N, M=None, k=0, dtype=None, order="C", like=None, device=None,
            usm_type="device", sycl_queue=None):
        # an omitted M or k comes as its default: the value itself when typed,
        # Omitted when inlined
        if not isinstance(N, types.Integer) or \
                not all(_absent(t) or isinstance(t, (int, types.Integer)) for t in (M, k)):
            return None
        array_type = _array_type(2, _dtype(dtype, types.float64),
                                 _usm_type(usm_type, "device"), device, sycl_queue)
        if array_type is None:
            return None

        def impl(N, M=None, k=0, dtype=None, order="C", like=None, device=None,
                 usm_type="device", sycl_queue=None):
            columns = N if M is None else M
            array = empty_usm((N, columns), array_type)
            numba.parfors.parfor.init_prange()
            for i in numba.parfors.parfor.internal_prange(N):
                for j in range(columns):
                    array[i, j] = 1 if j - i == k else 0
            return array

        return impl


def _like_type(a: types.Type, dtype: types.Type | None, shape: types.Type | None,
               usm_type: types.Type | None, device: types.Type | None,
               queue: types.Type | None) -> USMArray | None:
    """The array a ``*_like`` constructor makes of array ``a`` (its own shape)."""
    if not isinstance(a, types.Array) or not _absent(shape):
        return None
    own = a.usm_type if isinstance(a, USMArray) else "device"
    return _array_type(a.ndim, _dtype(dtype, a.dtype), _usm_type(usm_type, own), device, queue)


__all__ = ["CONSTRUCTORS", "Constructed", "constructed_by", "register_overloads",
           "sycl_queue_type"]
