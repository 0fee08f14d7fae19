"""``@xpuc.kernel``: functions written per work-item, launched over a range.

``k[global](*args)`` or ``k[xpuc.NdRange(global, local)](*args)`` checks the
launch, places it as ``jit`` calls are placed (USM arguments pick the queue;
NumPy arguments need a device context and are copied in and back), compiles
the kernel once per argument types, range rank and device, and launches it
through the runtime.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numba
import numpy as np
from numba.core import sigutils, types
from numba.core.typing.typeof import Purpose

from . import passes, runtime, targets
from .device import device_of, get_current_queue, runtime_queue
from .errors import UnsupportedError, XpucError, placement_error
from .frontend.float32_typing import python_float_type
from .frontend.host_lowering import compile_to_spirv
from .frontend.kernel_api_calls import KernelApiLaunch
from .frontend.kernel_to_mlir import KernelModule, translate_kernel, type_kernel
from .frontend.translation import KernelParam
from .placement import Placement, keyed_arguments, place
from .serialize import reduce_with_function

# the MLIR half, loaded by the first compile (passes.__getattr__); dpctl,
# imported where a SYCL device is named (xpuc imports without it)
if TYPE_CHECKING:
    import dpctl

    from .passes import Lowered

_MAX_DIMS = 3


def _sizes(value: int | Sequence[int], what: str) -> tuple[int, ...]:
    """A range's sizes: a wrong type is a TypeError, a wrong value a ValueError."""
    def is_size(n: object) -> bool:
        return isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))

    sizes = (value,) if is_size(value) else value
    if not isinstance(sizes, (tuple, list)) or not all(is_size(n) for n in sizes):
        raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}")
    if not 1 <= len(sizes) <= _MAX_DIMS:
        raise ValueError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}")
    if any(n < 0 for n in sizes):
        raise ValueError(f"{what} {sizes} has a negative size")
    return tuple(int(n) for n in sizes)


@dataclass(frozen=True, init=False)
class NdRange:
    """A global range divided into work-groups of ``local_size``."""

    global_size: tuple[int, ...]
    local_size: tuple[int, ...]

    def __init__(self, global_size: int | Sequence[int], local_size: int | Sequence[int]):
        global_size, local_size = _sizes(global_size, "global size"), _sizes(local_size,
                                                                           "local size")
        if len(global_size) != len(local_size):
            raise ValueError(f"global size {global_size} and local size {local_size} have "
                             "different numbers of dimensions")
        if any(n == 0 for n in local_size):
            raise ValueError(f"local size {local_size} has a zero size")
        if any(g % n for g, n in zip(global_size, local_size)):
            raise ValueError(f"local size {local_size} does not divide global size "
                             f"{global_size}")
        object.__setattr__(self, "global_size", global_size)
        object.__setattr__(self, "local_size", local_size)


def launch_range_of(value: int | Sequence[int] | NdRange) -> tuple[int, ...] | NdRange:
    """A launch's range, checked: its global sizes, or an ``NdRange``."""
    if type(value) is int and value >= 0:  # the common case, checked fast
        return (value,)
    return value if isinstance(value, NdRange) else _sizes(value, "global size")


@dataclass
class _Compiled:
    module: KernelModule
    lowered: Lowered
    spirv_hash: int


_SCALAR_KINDS = {"i8": runtime.ARG_I8, "i16": runtime.ARG_I16, "i32": runtime.ARG_I32,
                 "i64": runtime.ARG_I64, "index": runtime.ARG_I64, "f32": runtime.ARG_F32,
                 "f64": runtime.ARG_F64}


class KernelFunction:
    """A Python function compiled as a SYCL kernel for each argument types,
    range rank and device it is launched with. Explicit ``signatures`` (with
    the rank ``ndim`` of their ranges) are what ``xpuc compile`` compiles."""

    def __init__(self, py_func: Callable, signatures: list[tuple[types.Type, ...]] | None = None,
                 ndim: int = 1) -> None:
        if not 1 <= ndim <= _MAX_DIMS:
            raise ValueError(f"kernel {py_func.__qualname__}: ndim must be 1, 2 or 3")
        self.py_func = py_func
        self.signatures = signatures or []
        self.ndim = ndim
        self._parameters = list(inspect.signature(py_func).parameters)
        self._name = re.sub(r"\W", "_", py_func.__name__)
        self._compiled: dict[tuple, _Compiled] = {}
        # (device context's queue, keyed_arguments' key, range rank,
        # whether a local size is given) -> what the launches with them need,
        # worked out by the first (see _LaunchPlan)
        self._plans: dict[tuple, _LaunchPlan] = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, py_func)

    def __reduce__(self) -> tuple:
        return reduce_with_function(self, self.py_func, self.signatures, self.ndim)

    def __getitem__(self, launch_range: int | Sequence[int] | NdRange) -> Callable[..., None]:
        return functools.partial(self.launch, launch_range_of(launch_range), None)

    def __call__(self, *args: Any) -> None:
        raise TypeError(f"kernel {self.py_func.__qualname__} is launched over a range: "
                        f"{self.py_func.__name__}[global_size](...) or "
                        f"{self.py_func.__name__}[xpuc.NdRange(global_size, local_size)](...)")

    def launch(self, launch_range: tuple[int, ...] | NdRange, kernel_api: KernelApiLaunch | None,
               *args: Any) -> None:
        """Launch over ``launch_range`` with ``args``, as ``kernel[range](*args)``
        does, or, given ``kernel_api``, as ``xpuc.call_kernel`` does (``args``:
        those the launch passes)."""
        global_size, local_size = (
            (launch_range.global_size, launch_range.local_size)
            if isinstance(launch_range, NdRange) else (launch_range, None))
        key, placed = keyed_arguments(args, numpy_types=True)
        if key is not None:
            key = (get_current_queue(), key, len(global_size), local_size is None, kernel_api)
            plan = self._plans.get(key)
            if plan is not None:
                if local_size is not None:
                    self._check_work_group(local_size, plan.max_work_group_size,
                                           plan.device_name)
                if 0 not in global_size:
                    plan.run(placed, global_size, local_size)
                return
        where = self.py_func.__qualname__
        parameters = self._parameters if kernel_api is None else kernel_api.passed(
            self._parameters)
        if len(args) != len(parameters):
            raise TypeError(f"kernel {where} takes {len(parameters)} arguments "
                            f"({', '.join(parameters)}), got {len(args)}")
        placement = place(self.py_func, args, {})
        if placement is None:
            raise placement_error(
                f"kernel {where}: its arguments are NumPy arrays and no device context is "
                "active; a kernel runs on a device: call it inside xpuc.device_context(...) "
                "or pass USM arrays")
        device = device_of(placement.queue)
        self._check_work_group(local_size, device.max_work_group_size, device.name)
        argument_types = self._argument_types(parameters, placement,
                                              targets.target_for(device).fp64)
        if 0 in global_size:  # no work-items: nothing to compile, copy or launch
            return
        compiled = self.compile(argument_types, len(global_size), device, kernel_api)
        plan = _LaunchPlan.make(parameters, compiled, placement)
        if key is not None:
            if len(self._plans) >= _PLANS_PER_KERNEL:
                self._plans.clear()
            self._plans[key] = plan
        plan.run(placement.args, global_size, local_size, placement.resident)

    def _check_work_group(self, local_size: tuple[int, ...] | None, largest: int,
                          device_name: str) -> None:
        if local_size is not None and math.prod(local_size) > largest:
            raise ValueError(f"kernel {self.py_func.__qualname__}: work-group of "
                             f"{math.prod(local_size)} items {local_size} is larger than "
                             f"{device_name} allows ({largest})")

    def _argument_types(self, parameters: list[str], placement: Placement, fp64: bool
                        ) -> tuple[types.Type, ...]:
        found = []
        for name, value in zip(parameters, placement.args):
            nbtype = (python_float_type(fp64) if type(value) is float
                      else numba.typeof(value, Purpose.argument))
            if not isinstance(nbtype, (types.Array, types.Number, types.Boolean)):
                raise TypeError(f"kernel {self.py_func.__qualname__}: argument {name} is "
                                f"{type(value).__name__}; a kernel takes arrays and scalars")
            found.append(nbtype)
        return tuple(found)

    def compile(self, argtypes: tuple[types.Type, ...], ndim: int,
                device: dpctl.SyclDevice | str, kernel_api: KernelApiLaunch | None = None
                ) -> _Compiled:
        """The kernel for arguments of ``argtypes`` over an ``ndim``-D range,
        for ``device`` or the Intel GPU architecture it names; ``kernel_api``:
        how ``xpuc.call_kernel`` launches it, if it does."""
        key = (argtypes, ndim, targets.code_key(device), kernel_api)
        with self._lock:
            compiled = self._compiled.get(key)
            if compiled is None:
                target = targets.target_for(device)
                func_ir, typemap, calltypes = type_kernel(self.py_func, argtypes, target.fp64,
                                                          kernel_api)
                module = translate_kernel(func_ir, typemap, calltypes, self._name, ndim)
                try:
                    lowered = compile_to_spirv(self._name, module.mlir, target,
                                               passes.stages_for(target, kernel=True))
                except UnsupportedError as error:  # what the device cannot run (no fp64)
                    code = self.py_func.__code__
                    raise UnsupportedError(f"{code.co_filename}:{code.co_firstlineno}: "
                                           f"{self.py_func.__qualname__}: {error}") from None
                compiled = self._compiled[key] = _Compiled(
                    module, lowered, runtime.spirv_hash(lowered.binary))
        return compiled

    def _lowered(self, signature: tuple | None) -> list[_Compiled]:
        found = [c for (argtypes, _, _, _), c in self._compiled.items()
                 if signature is None or tuple(signature) == argtypes]
        if not found:
            raise XpucError(f"kernel {self.py_func.__qualname__} has not been compiled"
                            + (f" for signature {signature}" if signature else "")
                            + ": launch it first")
        return found[:1]

    def inspect_mlir(self, stage: str, signature: tuple | None = None) -> str:
        """The kernel's MLIR at ``stage`` (``gpu``, ``spirv``)."""
        return self._lowered(signature)[0].lowered.text(stage)

    def inspect_spirv(self, signature: tuple | None = None) -> dict[str, bytes]:
        """``{kernel_name: SPIR-V binary}``."""
        compiled = self._lowered(signature)[0]
        return {compiled.module.name: compiled.lowered.spirv}


# Launches of one kernel with this many different argument kinds or queues
# are rare; past it the plans are made again (each keeps its queues alive).
_PLANS_PER_KERNEL = 64


@dataclass(frozen=True)
class _LaunchPlan:
    """What every launch of a kernel with one key of its arguments
    (``keyed_arguments``), range rank and device context needs, worked out
    once by the first: the queue's runtime handle and the other queues to
    wait for, the compiled kernel's prepared launch (nothing to launch for a
    kernel with no effect), and how each of its
    parameters' slots is read from the arguments (``slots``: functions of
    the arguments and the device addresses of the NumPy arrays among them)."""

    placement: Placement
    handle: runtime.Queue
    kernel: runtime.KernelLaunch | None
    slots: tuple[Callable[[tuple, dict], int], ...]
    numpy: tuple[int, ...]  # NumPy arrays' positions: copied in where the device needs it
    written: tuple[int, ...]  # of those, the ones the kernel writes: copied back
    max_work_group_size: int
    device_name: str
    passes_range: bool  # the kernel takes its range's extents (Lowered.passes_range)
    waits_for_work_group: bool  # its blocks must divide a range (Lowered.waits_for_work_group)

    @classmethod
    def make(cls, parameters: list[str], compiled: _Compiled,
             placement: Placement) -> _LaunchPlan:
        """The plan of launches passing the kernel's ``parameters``."""
        position = {name: i for i, name in enumerate(parameters)}
        arrays = [position[name] for name in compiled.module.arrays]
        numpy = tuple(i for i in arrays if type(placement.args[i]) is np.ndarray)
        written = tuple(position[name] for name, use in compiled.module.arrays.items()
                        if use.writes and position[name] in numpy)
        slots = tuple(_slot_reader(param, position.get(param.var), position.get(param.var) in numpy)
                      for param in compiled.module.params)
        kinds = [_slot_kind(param) for param in compiled.module.params]
        if compiled.lowered.passes_range:  # the extents (x, y, z) follow the arguments
            kinds += [runtime.ARG_I64] * _RANGE_AXES
        kernel = None if compiled.lowered.empty else runtime.KernelLaunch(
            compiled.lowered.binary, compiled.module.name, kinds, compiled.spirv_hash)
        device = device_of(placement.queue)
        return cls(replace(placement, args=(), kwargs={}, resident=[]),
                   runtime_queue(placement.queue), kernel, slots, numpy, written,
                   device.max_work_group_size, device.name, compiled.lowered.passes_range,
                   compiled.lowered.waits_for_work_group)

    def run(self, args: tuple, global_size: tuple[int, ...],
            local_size: tuple[int, ...] | None,
            resident: list[tuple[int, int]] | None = None) -> None:
        """Launch over ``global_size`` with ``args`` as placed (as
        ``keyed_arguments`` gives them);
        ``resident``: the NumPy memory to keep on the device, when known."""
        if self.kernel is None:  # a kernel with no effect: nothing to copy or launch
            return
        for queue in self.placement.waited:  # as place() does
            queue.wait()
        if not self.numpy:  # device arrays only: one runtime entry begins, launches, ends
            self._launch(args, _NO_ADDRESSES, global_size, local_size, self.handle)
            return
        if self.handle.uses_host_memory:  # the device takes NumPy's memory as it is
            addresses = {i: args[i].__array_interface__["data"][0] for i in self.numpy}
            self._launch(args, addresses, global_size, local_size, self.handle)
            return
        if resident is None:
            resident = [runtime.byte_extent(args[i]) for i in self.numpy]
        runtime.call_begin(self.handle)
        try:
            for host, nbytes in resident:
                runtime.call_register(host, nbytes)
            addresses = {}
            for i in self.numpy:
                start, nbytes = runtime.byte_extent(args[i])
                addresses[i] = (args[i].__array_interface__["data"][0]
                                + runtime.buffer_acquire(start, nbytes, copy_in=True) - start)
            self._launch(args, addresses, global_size, local_size)
            for i in self.written:
                runtime.buffer_release(*runtime.byte_extent(args[i]), copy_out=True)
        finally:
            runtime.call_end()

    def _launch(self, args: tuple, addresses: dict[int, int], global_size: tuple[int, ...],
                local_size: tuple[int, ...] | None, queue: runtime.Queue | None = None) -> None:
        """The kernel launched with ``args`` (its NumPy arrays at ``addresses``)
        in the current call, or in one of its own on ``queue``."""
        slots = [read(args, addresses) for read in self.slots]
        if self.passes_range:
            slots += _padded_extents(global_size)
        if local_size is None and self.waits_for_work_group:
            local_size = _dividing_work_group(global_size)
        # SPIR-V's x is the range's last (fastest) dimension
        self.kernel(slots, global_size[::-1], local_size[::-1] if local_size else None, queue)


_RANGE_AXES = 3  # x, y, z

# the NumPy arrays' addresses of a launch that takes none (only read)
_NO_ADDRESSES: dict[int, int] = {}


def _padded_extents(global_size: tuple[int, ...]) -> list[int]:
    """A range's extents in x, y, z order (x its last dimension), 1 past its rank."""
    return [*global_size[::-1], *(1,) * (_RANGE_AXES - len(global_size))]


# the most work-items _dividing_work_group puts in a work-group
_DIVIDING_WORK_GROUP_ITEMS = 256


def _dividing_work_group(global_size: tuple[int, ...]) -> tuple[int, ...]:
    """A work-group shape that divides ``global_size``, as a SYCL runtime
    picks for a range: the largest divisor of each dimension that the items
    left allow, the last (fastest) dimension first."""
    room, shape = _DIVIDING_WORK_GROUP_ITEMS, []
    for extent in reversed(global_size):
        size = max(d for d in range(1, min(extent, room) + 1) if extent % d == 0)
        shape.insert(0, size)
        room //= size
    return tuple(shape)


def _slot_kind(param: KernelParam) -> int:
    if param.kind in ("array", "pointer"):
        return runtime.ARG_PTR
    if param.kind in ("dim", "stride", "num_threads"):
        return runtime.ARG_I64
    return _SCALAR_KINDS[param.mlir_type]


def _slot_reader(param: KernelParam, i: int | None, numpy: bool
                 ) -> Callable[[tuple, dict], int]:
    """How the slot of kernel parameter ``param`` is read from the launch's
    arguments, of which the ``i``-th is the one it names (None: it names
    none), a NumPy array if ``numpy`` (else a ``usm_ndarray``, whose strides
    count elements)."""
    axis = param.axis
    if param.kind in ("array", "pointer"):
        if numpy:
            return lambda args, addresses: addresses[i]
        return lambda args, addresses: args[i]._pointer
    if param.kind == "dim":
        return lambda args, addresses: args[i].shape[axis]
    if param.kind == "stride":
        if numpy:
            return lambda args, addresses: args[i].strides[axis] // args[i].itemsize
        return lambda args, addresses: args[i].strides[axis]
    if param.kind == "num_threads":
        return lambda args, addresses: numba.get_num_threads()
    kind = _SCALAR_KINDS[param.mlir_type]
    if param.kind == "tuple_item":  # a complex number travels as its two parts
        part = "real" if axis == 0 else "imag"
        return lambda args, addresses: runtime.slot(kind, getattr(args[i], part))
    return lambda args, addresses: runtime.slot(kind, args[i])


def kernel(signature_or_function: Any = None, *, ndim: int = 1) -> Any:
    """Compile a function as an explicit SYCL kernel (see ``KernelFunction``):
    ``@xpuc.kernel``, or ``@xpuc.kernel("void(float32[::1], float32[::1])",
    ndim=1)`` (or a list of signatures) for ``xpuc compile`` to compile."""
    if callable(signature_or_function):
        return KernelFunction(signature_or_function, ndim=ndim)
    given = signature_or_function
    signatures = [given] if isinstance(given, str) else list(given or [])

    def decorate(py_func: Callable) -> KernelFunction:
        argtypes = [tuple(sigutils.normalize_signature(sig)[0]) for sig in signatures]
        return KernelFunction(py_func, argtypes, ndim)

    return decorate


__all__ = ["KernelFunction", "NdRange", "kernel", "launch_range_of"]
