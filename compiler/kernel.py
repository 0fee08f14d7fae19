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
from dataclasses import dataclass
from typing import Any

import dpctl
import numba
import numpy as np
from numba.core import sigutils, types
from numba.core.typing.typeof import Purpose

from . import runtime, targets
from .array_library import is_usm_ndarray
from .errors import XpucError, placement_error
from .frontend.float32_typing import python_float_type
from .frontend.host_lowering import compile_to_spirv
from .frontend.kernel_to_mlir import KernelModule, translate_kernel, type_kernel
from .frontend.usm import host_view
from .passes import KERNEL_STAGES, Lowered
from .placement import Placement, place
from .serialize import reduce_with_function

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
        self._lock = threading.Lock()
        functools.update_wrapper(self, py_func)

    def __reduce__(self) -> tuple:
        return reduce_with_function(self, self.py_func, self.signatures, self.ndim)

    def __getitem__(self, launch_range: int | Sequence[int] | NdRange) -> Callable[..., None]:
        if not isinstance(launch_range, NdRange):
            launch_range = _sizes(launch_range, "global size")
        return functools.partial(self._launch, launch_range)

    def __call__(self, *args: Any) -> None:
        raise TypeError(f"kernel {self.py_func.__qualname__} is launched over a range: "
                        f"{self.py_func.__name__}[global_size](...) or "
                        f"{self.py_func.__name__}[xpuc.NdRange(global_size, local_size)](...)")

    def _launch(self, launch_range: tuple[int, ...] | NdRange, *args: Any) -> None:
        where = self.py_func.__qualname__
        if len(args) != len(self._parameters):
            raise TypeError(f"kernel {where} takes {len(self._parameters)} arguments "
                            f"({', '.join(self._parameters)}), got {len(args)}")
        placement = place(self.py_func, args, {})
        if placement is None:
            raise placement_error(
                f"kernel {where}: its arguments are NumPy arrays and no device context is "
                "active; a kernel runs on a device: call it inside xpuc.device_context(...) "
                "or pass USM arrays")
        global_size, local_size = (
            (launch_range.global_size, launch_range.local_size)
            if isinstance(launch_range, NdRange) else (launch_range, None))
        device = placement.queue.sycl_device
        if local_size is not None and math.prod(local_size) > device.max_work_group_size:
            raise ValueError(f"kernel {where}: work-group of {math.prod(local_size)} items "
                             f"{local_size} is larger than {device.name} allows "
                             f"({device.max_work_group_size})")
        argument_types = self._argument_types(placement, targets.has_fp64(device))
        if 0 in global_size:  # no work-items: nothing to compile, copy or launch
            return
        compiled = self.compile(argument_types, len(global_size), device)
        if not compiled.lowered.empty:  # a kernel with no effect: nothing to copy or launch
            self._run(compiled, placement, global_size, local_size)

    def _argument_types(self, placement: Placement, fp64: bool) -> tuple[types.Type, ...]:
        found = []
        for name, value in zip(self._parameters, placement.args):
            nbtype = (python_float_type(fp64) if type(value) is float
                      else numba.typeof(value, Purpose.argument))
            if not isinstance(nbtype, (types.Array, types.Number, types.Boolean)):
                raise TypeError(f"kernel {self.py_func.__qualname__}: argument {name} is "
                                f"{type(value).__name__}; a kernel takes arrays and scalars")
            found.append(nbtype)
        return tuple(found)

    def compile(self, argtypes: tuple[types.Type, ...], ndim: int,
                device: dpctl.SyclDevice | str) -> _Compiled:
        """The kernel for arguments of ``argtypes`` over an ``ndim``-D range,
        for ``device`` or the Intel GPU architecture it names."""
        key = (argtypes, ndim, targets.code_key(device))
        with self._lock:
            compiled = self._compiled.get(key)
            if compiled is None:
                target = targets.target_for(device)
                func_ir, typemap, calltypes = type_kernel(self.py_func, argtypes, target.fp64)
                module = translate_kernel(func_ir, typemap, calltypes, self._name, ndim)
                lowered = compile_to_spirv(self._name, module.mlir, target, KERNEL_STAGES)
                compiled = self._compiled[key] = _Compiled(
                    module, lowered, runtime.spirv_hash(lowered.spirv))
        return compiled

    def _run(self, compiled: _Compiled, placement: Placement, global_size: tuple[int, ...],
             local_size: tuple[int, ...] | None) -> None:
        values = dict(zip(self._parameters, placement.args))
        handle = runtime.queue_handle(placement.queue)
        runtime.call_begin(handle)
        try:
            for host, nbytes in placement.resident:
                runtime.call_register(host, nbytes)
            arrays = {name: _host_array(values[name]) for name in compiled.module.arrays}
            addresses = {}
            for name, array in arrays.items():
                start, nbytes = runtime.byte_extent(array)
                device = runtime.buffer_acquire(start, nbytes, copy_in=True)
                addresses[name] = device + array.__array_interface__["data"][0] - start
            args = [self._argument(param, values, arrays, addresses)
                    for param in compiled.module.params]
            # SPIR-V's x is the range's last (fastest) dimension
            runtime.launch(compiled.lowered.spirv, compiled.module.name, args,
                           global_size[::-1], local_size[::-1] if local_size else None,
                           compiled.spirv_hash)
            for name, use in compiled.module.arrays.items():
                if use.writes:
                    runtime.buffer_release(*runtime.byte_extent(arrays[name]), copy_out=True)
        finally:
            runtime.call_end()

    @staticmethod
    def _argument(param, values: dict, arrays: dict, addresses: dict) -> tuple[int, Any]:
        if param.kind in ("array", "pointer"):
            return runtime.ARG_PTR, addresses[param.var]
        if param.kind == "dim":
            return runtime.ARG_I64, arrays[param.var].shape[param.axis]
        if param.kind == "stride":
            array = arrays[param.var]
            return runtime.ARG_I64, array.strides[param.axis] // array.itemsize
        if param.kind == "num_threads":
            return runtime.ARG_I64, numba.get_num_threads()
        value = values[param.var]
        if param.kind == "tuple_item":  # a complex number travels as its two parts
            value = (value.real, value.imag)[param.axis]
        return _SCALAR_KINDS[param.mlir_type], value

    def _lowered(self, signature: tuple | None) -> list[_Compiled]:
        found = [c for (argtypes, _, _), c in self._compiled.items()
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


def _host_array(value: Any) -> np.ndarray:
    """An argument array as NumPy sees it (a USM array: a view of its memory,
    whose addresses the runtime recognises as USM)."""
    return host_view(value) if is_usm_ndarray(value) else value


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


__all__ = ["KernelFunction", "NdRange", "kernel"]
