"""``xpuc.jit``: a drop-in for ``numba.jit`` whose parfors run where the data is.

Called with NumPy arguments outside a device context, a function is plain
Numba on the CPU. Called with USM arrays, or inside a device context, it is
compiled (once per signature and device) by Numba's pipeline with parfor
analysis, every parfor lowered to a SPIR-V kernel, and the call runs with the
execution queue (see ``placement``) bound to the runtime for its duration."""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numba
import numpy as np
from numba.core import sigutils, types
from numba.core.dispatcher import Dispatcher

from . import array_library, runtime, targets
from .cache import device_key, offload_cache
from .device import device_of, get_current_queue, runtime_queue
from .errors import ConflictingOptionsError, DeviceError, XpucError
from .frontend import (
    CPU_PIPELINE,
    CompiledParfor,
    KernelFault,
    OffloadTarget,
    link_runtime,
    offload_pipeline,
)
from .frontend.cuda_arrays import CudaArrayArgument, argument_type
from .frontend.literal_arguments import literals_refused, remember_literal_arguments
from .frontend.usm import CallQueue, usm_ndarray_type
from .placement import (
    NUMPY_SCALAR_TYPES,
    Placement,
    RepeatedCall,
    keyed_arguments,
    place,
    repeated_call,
)
from .serialize import reduce_with_function

# the MLIR half, loaded by the first compile (passes.__getattr__); dpctl,
# imported where a SYCL device is named (xpuc imports without it)
if TYPE_CHECKING:
    import dpctl

    from .passes import Lowered


class JitFunction:
    """A function compiled by Numba for the CPU and by xpuc for each device it
    is called under."""

    def __init__(self, py_func: Callable, signatures: list | None, options: dict) -> None:
        if options.pop("forceobj", False) or options.pop("nopython", True) is False:
            raise ConflictingOptionsError("xpuc.jit always compiles in nopython mode")
        if "pipeline_class" in options:
            raise ConflictingOptionsError(
                "xpuc.jit brings its own Numba pipeline (pipeline_class cannot be given)")
        self.py_func = py_func
        self._signatures = signatures
        self._options = options
        self._cpu = numba.njit(*([signatures] if signatures else []),
                               pipeline_class=CPU_PIPELINE, **options)(py_func)
        # by targets.code_key: sub-devices of one device share a build
        self._devices: dict[str, tuple[Dispatcher, OffloadTarget]] = {}
        # (queue, dispatcher, runtime handle, whether the device has fp64) of
        # the last offloaded call: calls in a loop come with the same queue,
        # and finding the device's build again costs more than a kernel launch
        self._last: tuple[dpctl.SyclQueue, Dispatcher, runtime.Queue, bool] | None = None
        # (device context's queue, keyed_arguments' key of the arguments) ->
        # what the calls with that pair need, worked out by the first (see
        # _CallPlan)
        self._plans: dict[tuple, _CallPlan] = {}
        # the last planned calls on CuPy arrays, newest first, to know again
        # (a loop's calls, or two that take turns: f(a, b), f(b, a))
        self._repeated: tuple[RepeatedCall, ...] = ()
        self._lock = threading.Lock()
        functools.update_wrapper(self, py_func)

    def __reduce__(self) -> tuple:
        return reduce_with_function(self, self.py_func, self._signatures, self._options)

    @property
    def _numba_type_(self):
        """As an argument of other Numba code, or called from it: the CPU
        build (compiled code calls compiled code; nothing offloads from it)."""
        return self._cpu._numba_type_

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = None
        if not kwargs:
            context = get_current_queue()
            for repeated in self._repeated:
                placed = repeated.placed(args, context)
                if placed is not None:
                    return repeated.plan.run(self, placed)
            arguments, placed = keyed_arguments(args)
            if arguments is not None:  # else no plan for those arguments
                key = (context, arguments)
                plan = self._plans.get(key)
                if plan is not None:
                    if plan.placement.kind == "CUDA":
                        self._remember_repeated(args, context, plan)
                    return plan.run(self, placed)
        placement = place(self.py_func, args, kwargs)
        if placement is None:
            return self._cpu(*args, **kwargs)
        if self._options.get("parallel", True) is False:
            raise ConflictingOptionsError(
                f"{self.py_func.__qualname__} was given parallel=False but is called to "
                f"offload ({placement.reason}), which needs parfor analysis"
            )
        # handle held: used until call_end
        dispatcher, handle, fp64 = self._on(placement.queue)
        if not fp64:  # Python floats are float32 there (see frontend.float32_typing)
            placement = dataclasses.replace(placement, args=_floats_as_float32(placement.args))
        result = self._run(placement.queue, handle, placement.resident, True,
                           self._invoke, (dispatcher, placement))
        if key is not None:
            self._remember(key, args, placement, dispatcher, handle, fp64)
        return placement.finish(result)

    def _run(self, queue: dpctl.SyclQueue, handle: runtime.Queue,
             resident: list[tuple[int, int]], returns_arrays: bool, target: Callable,
             args: tuple) -> Any:
        """``target(*args)`` as an offloaded call on ``queue``: the NumPy
        memory ``resident`` kept on the device for it, and, when it may return
        arrays, ``queue`` named as theirs. The compiled code begins and ends
        its call itself (``frontend.runtime_calls.within_a_call``), on the
        queue named here."""
        runtime.call_queue(handle)
        if resident and not handle.uses_host_memory:
            return self._run_registered(queue, handle, resident, returns_arrays, target, args)
        try:
            if not returns_arrays:
                return target(*args)
            with CallQueue(queue):
                return target(*args)
        except KernelFault:
            raise DeviceError(f"{self.py_func.__qualname__}: {runtime.last_error()}") from None

    def _run_registered(self, queue: dpctl.SyclQueue, handle: runtime.Queue,
                        resident: list[tuple[int, int]], returns_arrays: bool,
                        target: Callable, args: tuple) -> Any:
        """``_run`` in a call begun here, in which the memory ``resident`` is
        registered first; the compiled code's call nests in it."""
        runtime.call_begin(handle)
        try:
            for host, nbytes in resident:
                runtime.call_register(host, nbytes)
            return self._run(queue, handle, [], returns_arrays, target, args)
        finally:
            runtime.call_end()

    def _remember(self, key: tuple, args: tuple, placement: Placement, dispatcher: Dispatcher,
                  handle: runtime.Queue, fp64: bool) -> None:
        """Keep what the call of ``args`` (under the device context and with
        the arguments' key that ``key`` pairs) just worked out for the next
        ones with it: its placement (without the arguments; with the device
        arrays' other queues to wait for), and the compiled entry point itself
        when no argument is a NumPy array (whose types Numba's dispatcher
        finds faster than Python could)."""
        numpy = tuple(i for i, a in enumerate(placement.args) if type(a) is np.ndarray)
        target, returns_arrays = dispatcher, True
        if not numpy:
            overload = dispatcher.overloads.get(_exact_types(placement.args))
            if overload is not None:
                target = overload.entry_point
                returns_arrays = not isinstance(overload.signature.return_type, _SCALAR_TYPES)
        if len(self._plans) >= _PLANS_PER_FUNCTION:
            self._plans.clear()
        self._plans[key] = _CallPlan(
            dataclasses.replace(placement, args=(), kwargs={}, resident=[]), handle, target,
            returns_arrays, numpy,
            () if fp64 else tuple(i for i, a in enumerate(args) if type(a) is float))

    def _remember_repeated(self, args: tuple, context: dpctl.SyclQueue | None,
                           plan: _CallPlan) -> None:
        """Keep the call of ``args`` that took ``plan`` to know again, where
        its arguments are CuPy arrays and scalars (``RepeatedCall``)."""
        repeated = repeated_call(args, context, plan)
        if repeated is not None:
            self._repeated = (repeated, *self._repeated[:_REPEATED_CALLS - 1])

    def _invoke(self, dispatcher: Dispatcher, placement: Placement) -> Any:
        """Run the build for the placed arguments. When they are USM arrays and
        plain scalars whose types are exactly a signature it compiled, Numba's
        dispatcher would pick that signature: its compiled entry point is
        called directly, since Numba's typing of a usm_ndarray (in Python,
        through its generic fallback) costs more than the rest of the call's
        dispatch. Anything else goes through the dispatcher, which compiles
        what is new."""
        argtypes = None if placement.kwargs else _exact_types(placement.args)
        overload = None if argtypes is None else dispatcher.overloads.get(argtypes)
        if overload is None:
            return dispatcher(*placement.args, **placement.kwargs)
        return overload.entry_point(*placement.args)

    def _on(self, queue: dpctl.SyclQueue) -> tuple[Dispatcher, runtime.Queue, bool]:
        """The build for ``queue``'s device, the runtime's handle of ``queue``
        and whether the device has fp64."""
        last = self._last
        if last is not None and last[0] is queue:
            return last[1:]
        handle = runtime_queue(queue)
        runtime.call_queue(handle)  # loads from the cache build their kernels ahead on it
        dispatcher, offload = self._for_device(device_of(queue))
        offload.queue = handle
        self._last = (queue, dispatcher, handle, offload.target.fp64)
        return self._last[1:]

    def _for_device(self, device: dpctl.SyclDevice | str) -> tuple[Dispatcher, OffloadTarget]:
        """The build for ``device``, or for the Intel GPU architecture it
        names (``xpuc compile --arch``)."""
        key = targets.code_key(device)
        with self._lock:
            found = self._devices.get(key)
            if found is None:
                target = targets.target_for(device)
                offload = OffloadTarget(target)
                options = dict(self._options)
                cache_option = bool(options.pop("cache", False))
                if not isinstance(options.get("parallel"), dict):
                    options["parallel"] = True
                link_runtime()  # cached code calls the runtime too
                dispatcher = numba.njit(pipeline_class=offload_pipeline(offload),
                                        **options)(self.py_func)
                remember_literal_arguments(dispatcher)
                # its own cache files, not the CPU build's (set before compiling)
                dispatcher._cache = offload_cache(self.py_func, device_key(device, target),
                                                  cache_option, offload.compiled)
                for signature in self._signatures or ():
                    with literals_refused():
                        dispatcher.compile(signature)
                if self._signatures:
                    dispatcher.disable_compile()
                found = self._devices[key] = (dispatcher, offload)
        return found

    def _compiled(self, signature: tuple | None) -> list[CompiledParfor]:
        for dispatcher, offload in self._devices.values():
            for argtypes in (tuple(sig) for sig in dispatcher.signatures):
                if signature is None or tuple(signature) == argtypes:
                    if argtypes in offload.compiled:
                        return offload.compiled[argtypes]
                    if dispatcher.stats.cache_hits:
                        raise XpucError(
                            f"{self.py_func.__qualname__} {argtypes} was loaded from the "
                            "on-disk cache, which keeps no MLIR: inspect it in a process "
                            "that compiles it")
                    return []  # compiled here, with no parfor to offload
        raise XpucError(
            f"{self.py_func.__qualname__} has no offloaded compilation"
            + (f" for signature {signature}" if signature else "")
            + ": call it inside a device context first"
        )

    def inspect_mlir(self, stage: str, signature: tuple | None = None) -> str:
        """The MLIR of this function's parfors at ``stage`` (linalg, gpu, spirv);
        empty for a function without parfors."""
        return "\n".join(p.lowered.text(stage) for p in self._compiled(signature))

    def inspect_lowered(self, signature: tuple | None = None) -> list[Lowered]:
        """What lowering produced for each of this function's parfors: the
        module it started from, the MLIR of each stage, plan and SPIR-V."""
        return [p.lowered for p in self._compiled(signature)]

    def inspect_spirv(self, signature: tuple | None = None) -> dict[str, bytes]:
        """``{kernel_name: SPIR-V binary}`` of this function's parfors."""
        return {
            launch.kernel_name: p.lowered.spirv
            for p in self._compiled(signature)
            for launch in p.lowered.plan.launches
        }


def _floats_as_float32(args: tuple) -> tuple:
    """``args`` with each Python float a NumPy float32."""
    return tuple(np.float32(a) if type(a) is float else a for a in args)


def _exact_types(args: tuple) -> tuple | None:
    """Numba's types of ``args`` if they are all ``usm_ndarray``, CUDA
    arrays as placed (``CudaArrayArgument``), float, NumPy's scalars, bool or int
    (typed without Numba's typeof: as it types them), else None."""
    found = []
    usm_ndarray = array_library.loaded_usm_ndarray  # place() loaded it for USM arguments
    for value in args:
        kind = type(value)
        if kind is usm_ndarray:
            found.append(usm_ndarray_type(value))
        elif kind is CudaArrayArgument:
            found.append(argument_type(value))
        elif kind is float:
            found.append(types.float64)
        elif kind in NUMPY_SCALAR_TYPES:
            found.append(NUMPY_SCALAR_TYPES[kind])
        elif kind is bool:
            found.append(types.boolean)
        elif kind is int and -(1 << 63) < value < (1 << 63):
            found.append(types.int64)
        else:
            return None
    return tuple(found)


# Return types after which an offloaded call names no queue for arrays it returns.
_SCALAR_TYPES = (types.NoneType, types.Number, types.Boolean)

# The repeated calls a function knows again (RepeatedCall): a loop's, or two
# that take turns; each call that is none of them checks them all first.
_REPEATED_CALLS = 2

# Calls of one function with this many different argument kinds or queues
# are rare; past it the plans are made again (each keeps its queues alive).
_PLANS_PER_FUNCTION = 64


@dataclasses.dataclass(frozen=True)
class _CallPlan:
    """What every call of a function with one key of its arguments
    (``keyed_arguments``) and device context needs, worked out once by the
    first: its placement (queue, kind of memory of results, the device
    arrays' other queues), the runtime's handle of the queue, what to call
    (the compiled entry point, or Numba's dispatcher when NumPy arrays come
    in), where the NumPy arrays are, and where the Python floats typed
    float32 (on a device without fp64) are."""

    placement: Placement
    handle: runtime.Queue
    target: Callable
    returns_arrays: bool
    numpy: tuple[int, ...]
    float32: tuple[int, ...]

    def run(self, function: JitFunction, args: tuple) -> Any:
        """The call of ``args`` as ``keyed_arguments`` gave them."""
        if self.float32:
            args = _floats_as_float32(args)
        placement = self.placement
        # as place() does: the work on the arrays' other queues (dpctl's,
        # other CUDA streams') is done first
        for queue in placement.waited:
            queue.wait()
        resident = [runtime.byte_extent(args[i]) for i in self.numpy] if (
            self.numpy and not self.handle.uses_host_memory) else []
        result = function._run(placement.queue, self.handle, resident, self.returns_arrays,
                               self.target, args)
        # a scalar or None: nothing for finish() to do
        return placement.finish(result) if self.returns_arrays else result


def jit(signature_or_function: Any = None, **options: Any) -> Any:
    """Like ``numba.jit`` (always nopython); also wraps an existing Numba dispatcher."""
    if isinstance(signature_or_function, Dispatcher):
        merged = {**signature_or_function.targetoptions, **options}
        merged.pop("nopython", None)
        # a dispatcher made with explicit signatures compiles nothing else (Numba
        # marks it so); its signatures stay explicit, and AOT-compilable
        fixed = not signature_or_function._can_compile
        explicit = list(signature_or_function.signatures) if fixed else None
        return JitFunction(signature_or_function.py_func, explicit, merged)
    if sigutils.is_signature(signature_or_function):
        signatures = [signature_or_function]
    elif isinstance(signature_or_function, list) or signature_or_function is None:
        signatures = signature_or_function
    else:
        return JitFunction(signature_or_function, None, options)

    def decorate(py_func: Callable) -> JitFunction:
        return JitFunction(py_func, signatures, options)

    return decorate
