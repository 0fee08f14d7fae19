"""Where a call runs (SPEC rules 1-6): computation follows data.

Device arrays name their device, and the call runs there with no copies: USM
arrays (SYCL) on their queue, CUDA arrays (``__cuda_array_interface__``,
DLPack on a CUDA device) on their CUDA device; each kind is an ``ArrayKind``
below. NumPy arrays run on the innermost device context's queue, copied to
the device as the runtime needs them; with neither, the call is plain Numba
on the CPU. Mixtures that leave the device ambiguous raise
``ExecutionPlacementError`` before any work is done.
"""

from __future__ import annotations

import functools
import inspect
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
from numba.core import types

from . import array_library, runtime
from .array_library import dpnp_array_class, is_dpnp_array, is_usm_ndarray, tensor_library
from .device import CudaQueue, as_queue, cuda_queue, describe_queue, get_current_queue
from .errors import placement_error
from .frontend.cuda_arrays import (
    CudaArrayArgument,
    KnownCupyArray,
    cuda_array_classes,
    cuda_ordinal,
    cuda_result,
    cuda_stream,
    cupy_stream,
    is_cuda_array,
    known_cupy_array,
    library_of,
    met_cuda_array_class,
)
from .frontend.usm import USM_TYPES, coerce_usm_types, usm_type_of

if TYPE_CHECKING:  # imported when first needed (array_library)
    import dpctl

    from .array_library import tensor as dpt
    from .frontend.dpnp_constructors import Constructed


def equivalent(a: dpctl.SyclQueue | CudaQueue, b: dpctl.SyclQueue | CudaQueue) -> bool:
    """Same SYCL context, device and properties (SPEC rule 3); CUDA queues
    on one device (of any of its streams)."""
    if isinstance(a, CudaQueue) or isinstance(b, CudaQueue):
        return (isinstance(a, CudaQueue) and isinstance(b, CudaQueue)
                and a.device.ordinal == b.device.ordinal)
    return a is b or (
        a.sycl_context == b.sycl_context
        and a.sycl_device == b.sycl_device
        and a.is_in_order == b.is_in_order
        and a.has_enable_profiling == b.has_enable_profiling
    )


def is_usm_array(value: object) -> bool:
    # isinstance first: reading __sycl_usm_array_interface__ waits for the queue
    return is_usm_ndarray(value) or (
        not isinstance(value, np.ndarray) and hasattr(value, "__sycl_usm_array_interface__"))


def _usm_queue(value: object) -> dpctl.SyclQueue:
    """A USM array's queue. An object that offers only
    ``__sycl_usm_array_interface__`` names it through the array library's view."""
    queue = getattr(value, "sycl_queue", None)
    return queue if queue is not None else tensor_library().asarray(value).sycl_queue


def _cuda_queue(value: object) -> CudaQueue | None:
    """A CUDA array's queue: its device's, on the stream it names; None for
    one with no memory that names no device (it goes where the call's other
    arrays go)."""
    ordinal = cuda_ordinal(value)
    return None if ordinal is None else cuda_queue(ordinal).on_stream(cuda_stream(value))


def _difference(a: dpctl.SyclQueue | CudaQueue, b: dpctl.SyclQueue | CudaQueue) -> str:
    """How two queues that are not equivalent differ, for messages."""
    if isinstance(a, CudaQueue) or isinstance(b, CudaQueue) or a.sycl_device != b.sycl_device:
        return "different devices"
    if a.sycl_context != b.sycl_context:
        return "one device in different SYCL contexts"
    return "one device and context, with different properties (in-order, profiling)"


@dataclass
class Placement:
    """An offloaded call: its queue, its arguments as compiled code takes
    them, and the NumPy memory to keep on the device for the call."""

    queue: dpctl.SyclQueue
    args: tuple
    kwargs: dict
    resident: list[tuple[int, int]] = field(default_factory=list)
    usm_type: str | None = None  # of the outputs, when device arrays came in
    dpnp_out: bool = False  # dpnp arrays in, so dpnp arrays out
    # the USM arguments' queues other than ``queue``, whose work the call waited for
    waited: tuple[dpctl.SyclQueue, ...] = ()
    kind: str = "USM"  # of the device arrays that came in, for messages
    # what the result becomes, where the device arrays' kind decides it
    results: Callable[[Any], Any] | None = None

    @property
    def reason(self) -> str:
        """Why the call offloads, for messages (worked out only for one)."""
        if self.usm_type is None:
            return "inside a device context"
        return f"{self.kind} arguments on {describe_queue(self.queue)}"

    def finish(self, result: Any) -> Any:
        """The call's result as the caller gets it: with USM arrays in, every
        array out is USM on the queue (``usm_ndarray``, or dpnp's array, as
        also out of functions that make dpnp arrays); with CUDA arrays in,
        what ``results`` makes of it."""
        if self.results is not None:
            return self.results(result)
        if self.usm_type is None and not self.dpnp_out:
            return result
        if isinstance(result, tuple):
            return tuple(self.finish(r) for r in result)
        if self.usm_type is not None and isinstance(result, np.ndarray):
            # host memory the function allocated itself (np.empty): its one copy
            result = _usm_copy(result, self.queue, self.usm_type)
        if self.dpnp_out and is_usm_ndarray(result):
            import dpnp

            return dpnp.asarray(result)
        return result


# NumPy's scalars as Numba types them (np.float32(2.0) passed with float32 arrays)
NUMPY_SCALAR_TYPES: dict[type, types.Type] = {
    np.float32: types.float32, np.float64: types.float64, np.int32: types.int32,
    np.int64: types.int64, np.uint32: types.uint32, np.uint64: types.uint64,
    np.bool_: types.boolean,
}


def keyed_arguments(args: tuple, numpy_types: bool = False) -> tuple[tuple | None, tuple]:
    """What decides where and how a call with ``args`` runs (its call plan's
    key), and ``args`` as compiled code takes them, found in one pass: every
    planned call, on SYCL and CUDA devices alike, computes them, so the
    commonest kinds are tested first and each argument is read once. The key
    holds, for ``usm_ndarray`` or dpnp arrays, their queue, dtype, rank,
    layout and writability, kind of memory (compiled code takes a dpnp
    array's ``usm_ndarray``); for CUDA arrays of a class placement has met,
    their class, device, stream and type to compiled code (it takes a
    ``CudaArrayArgument``); for NumPy arrays their class (with
    ``numpy_types``, also what Numba's type of them holds); for float, bool,
    int or NumPy's scalars their types. The key is None, and ``args`` as
    they are, where an argument is of none of these."""
    key = []
    placed = None  # a copy of args once one is converted
    # None until the array library is loaded (by the placement of a first
    # call with USM arguments): before, a USM argument makes the key None
    usm_ndarray = array_library.loaded_usm_ndarray
    for position, value in enumerate(args):
        kind = type(value)
        if kind is usm_ndarray or (kind not in _PLAIN_KINDS and usm_ndarray is not None
                                   and kind is dpnp_array_class()):
            if kind is not usm_ndarray:
                key.append(kind)
                value = value.get_array()
                placed = placed or list(args)
                placed[position] = value
            key += _usm_kind(value)
            key.append(value.flags.flags)  # writability may change: read at each call
        elif kind is np.ndarray:
            if numpy_types:
                flags = value.flags
                key += (kind, value.dtype.num, value.ndim, flags.c_contiguous,
                        flags.f_contiguous, flags.writeable, flags.aligned)
            else:
                key.append(kind)
        elif (read := cuda_array_classes.get(kind)) is not None:
            cuda = read(value)
            if cuda is None:
                return None, args
            key.append(kind)
            key += cuda[0]
            placed = placed or list(args)
            placed[position] = cuda[1]
        elif _is_keyed_scalar(kind, value):
            key.append(kind)
        else:
            return None, args
    return tuple(key), args if placed is None else tuple(placed)


def _is_keyed_scalar(kind: type, value: object) -> bool:
    """Whether ``value``, of class ``kind``, is a scalar that call plans key
    by its type: float, bool, NumPy's scalars, an int of 64 bits."""
    return kind is float or kind in NUMPY_SCALAR_TYPES or kind is bool or (
        kind is int and -(1 << 63) < value < (1 << 63))


class RepeatedCall:
    """A planned call whose arguments are CuPy arrays and scalars, kept to
    know the next call with the same arrays (the same objects, of the same
    shape and strides: what of them can change), scalars of the same types,
    on the same CuPy stream and under the same device context: that call has
    the same key (``keyed_arguments``), so the same plan, found without
    keying its arguments or looking the plan up. Calls in a loop mostly pass
    the same arrays, and keying three arrays and finding the plan cost 8 of
    a 24 us call on an H100's host."""

    __slots__ = ("arrays", "scalars", "count", "stream", "context", "plan")

    def __init__(self, arrays: tuple[tuple[int, KnownCupyArray], ...],
                 scalars: tuple[tuple[int, type], ...], count: int, stream: int,
                 context: object, plan: object) -> None:
        self.arrays = arrays  # (position, what call plans read of the array there)
        self.scalars = scalars  # (position, class of the scalar there)
        self.count = count
        self.stream = stream
        self.context = context  # the device context's queue, or None
        self.plan = plan

    def placed(self, args: tuple, context: object) -> tuple | None:
        """``args`` as the plan's calls take them, if they make this call
        again under device context ``context``; else None."""
        if len(args) != self.count or context is not self.context:
            return None
        placed = list(args)
        for position, known in self.arrays:
            value = args[position]
            if (known() is not value or value.shape != known.shape
                    or value.strides != known.byte_strides):
                return None
            placed[position] = known.argument
        for position, kind in self.scalars:
            value = args[position]
            if type(value) is not kind or not _is_keyed_scalar(kind, value):
                return None
        return tuple(placed) if self.stream == cupy_stream() else None


def repeated_call(args: tuple, context: object, plan: object) -> RepeatedCall | None:
    """The ``RepeatedCall`` of a call of ``args`` that took ``plan`` (just
    keyed: what call plans read of its arrays is theirs now), or None where
    an argument is neither a CuPy array nor a scalar."""
    arrays, scalars = [], []
    for position, value in enumerate(args):
        kind = type(value)
        if _is_keyed_scalar(kind, value):
            scalars.append((position, kind))
        elif (known := known_cupy_array(value)) is not None:
            arrays.append((position, known))
        else:
            return None
    if not arrays:
        return None
    return RepeatedCall(tuple(arrays), tuple(scalars), len(args), cupy_stream(), context, plan)


# the kinds of argument keyed_arguments tests before dpnp's array class
_PLAIN_KINDS = frozenset((np.ndarray, float, bool, int, *NUMPY_SCALAR_TYPES))

# id() of each usm_ndarray keyed_arguments has met, alive -> (a weak reference to
# it, what of its kind cannot change: queue, dtype, rank, kind of memory).
# A usm_ndarray's dtype costs more to read than the rest of a planned call's
# key, and calls in a loop mostly pass the same arrays.
_usm_kinds: dict[int, tuple] = {}


def _usm_kind(array: dpt.usm_ndarray) -> tuple:
    number = id(array)
    found = _usm_kinds.get(number)
    if found is None or found[0]() is not array:
        found = _usm_kinds[number] = (
            weakref.ref(array, lambda _, number=number: _usm_kinds.pop(number, None)),
            array.sycl_queue, array.dtype.num, array.ndim, type(array.usm_data))
    return found[1:]


@functools.lru_cache(maxsize=1024)
def _parameter_names(py_func: Callable) -> tuple[str, ...]:
    try:
        return tuple(inspect.signature(py_func).parameters)
    except (TypeError, ValueError):
        return ()


def _argument_names(py_func: Callable, count: int, kwargs: dict) -> list[str]:
    names = list(_parameter_names(py_func))
    names += [f"argument {i}" for i in range(len(names), count)]
    return names[:count] + list(kwargs)


def _items(name: str, value: object) -> list[tuple[str, object]]:
    """``value`` with its name, or the items of a tuple (nested ones too):
    arrays passed in a tuple place a call as arguments do."""
    if isinstance(value, tuple):
        return [item for i, v in enumerate(value) for item in _items(f"{name}[{i}]", v)]
    return [(name, value)]


def _as_usm_ndarray(value: object) -> object:
    """dpnp arrays and other USM objects as ``usm_ndarray`` (no copy), in tuples too."""
    if isinstance(value, tuple):
        return tuple(_as_usm_ndarray(v) for v in value)
    return tensor_library().asarray(value) if is_usm_array(value) and not is_usm_ndarray(
        value) else value


def _named(py_func: Callable, args: tuple, kwargs: dict) -> list[tuple[str, object]]:
    values = list(args) + list(kwargs.values())
    return [item for name, value in zip(_argument_names(py_func, len(args), kwargs), values)
            for item in _items(name, value)]


@dataclass(frozen=True)
class ArrayKind:
    """A kind of array that lives on a device and names it: a call with such
    arrays runs on their device and uses them in place. ``place`` makes the
    call's placement on ``queue`` from the arrays (of this kind, on queues
    equivalent to it; ``others`` are those queues besides ``queue``), and
    the texts say how users move arrays, for messages."""

    name: str  # "USM", "CUDA"
    places: str  # what such arrays are on, for messages: "queues", "devices"
    recognises: Callable[[object], bool]
    queue_of: Callable[[object], Any]
    place: Callable[..., Placement]
    # how to bring NumPy arrays to such arrays' device
    from_numpy: str
    # how to move array {name} to {other}'s queue (device {device})
    to_queue: str
    # how to move array {name} to the device context's device {device}
    to_context: str


def _place_usm(py_func: Callable, queue: dpctl.SyclQueue, args: tuple, kwargs: dict,
               usm: list, others: tuple) -> Placement:
    """The placement of a call with USM arrays (rule 2)."""
    # dpctl's operations return before their kernels finish: the call reads
    # arrays made on other queues once they are done (the runtime waits for
    # the work on the call's own queue)
    for other in others:
        other.wait()
    # compiled code takes usm_ndarray; dpnp arrays and other USM objects
    # become one without a copy
    usm_ndarray = array_library.usm_ndarray_class()
    if all(type(v) is usm_ndarray for v in usm):
        converted, dpnp_out = args, False
        converted_kwargs = kwargs
    else:
        converted = tuple(_as_usm_ndarray(v) for v in args)
        converted_kwargs = {k: _as_usm_ndarray(v) for k, v in kwargs.items()}
        dpnp_out = any(is_dpnp_array(v) for v in usm)
        usm = [_as_usm_ndarray(v) for v in usm]
    usm_type = coerce_usm_types(usm_type_of(v) for v in usm)
    return Placement(queue, converted, converted_kwargs, usm_type=usm_type, dpnp_out=dpnp_out,
                     waited=others)


def _place_cuda(py_func: Callable, queue: CudaQueue, args: tuple, kwargs: dict,
                arrays: list, others: tuple) -> Placement:
    """The placement of a call with CUDA arrays: compiled code takes each as
    a ``CudaArrayArgument``, and the arrays it returns come back as arrays
    of the first one's library. The call runs on the stream the first one
    names (``queue``'s), after the work queued there (the runtime waits for
    it, and launches there); the work on the other arrays' streams
    (``others``) is waited for here, and by each planned call."""
    for other in others:
        other.wait()

    def argument(name: str, value: object) -> object:
        if isinstance(value, tuple):
            return tuple(argument(f"{name}[{i}]", v) for i, v in enumerate(value))
        if not is_cuda_array(value):
            return value
        try:
            return CudaArrayArgument.of(value)
        except ValueError as error:
            raise ValueError(f"{py_func.__qualname__}: {name}: {error}") from None

    names = _argument_names(py_func, len(args), kwargs)
    converted = tuple(argument(n, v) for n, v in zip(names, args))
    converted_kwargs = {k: argument(k, v) for k, v in kwargs.items()}
    for array in arrays:  # for call plans (keyed_arguments)
        met_cuda_array_class(type(array))
    results = functools.partial(cuda_result, library=library_of(arrays[0]),
                                device=queue.device)
    return Placement(queue, converted, converted_kwargs, usm_type="device", kind="CUDA",
                     results=results, waited=others)


USM_ARRAYS = ArrayKind(
    "USM", "queues", is_usm_array, _usm_queue, _place_usm,
    from_numpy="move them to one device with xpuc.asarray",
    to_queue="move one to the other's queue, e.g. xpuc.asarray({name}, queue={other}.sycl_queue)",
    to_context="move it there with xpuc.asarray({name}, queue=xpuc.get_current_queue())")
CUDA_ARRAYS = ArrayKind(
    "CUDA", "devices", is_cuda_array, _cuda_queue, _place_cuda,
    from_numpy="copy them to the GPU with the CUDA arrays' library (cupy.asarray, "
               "torch.as_tensor(x, device='cuda')), or pass NumPy arrays alone inside "
               "xpuc.device_context('cuda:N')",
    to_queue="copy one to the other's device ({device}) with its library, e.g. "
             "cupy.asarray({name}) inside cupy.cuda.Device(N), or {name}.to('cuda:N')",
    to_context="a call with CUDA arrays runs on their device: call it outside the device "
               "context, or bring {name} to {device} first")
ARRAY_KINDS = (USM_ARRAYS, CUDA_ARRAYS)


def _kind_of(value: object) -> ArrayKind | None:
    """The kind of device array ``value`` is, or None."""
    return next((kind for kind in ARRAY_KINDS if kind.recognises(value)), None)


def _arrays(values: tuple | list, device: list, numpy: list) -> None:
    """Collect the device arrays (of any kind) and the NumPy arrays among
    ``values`` and the items of their tuples. Names are only worked out for
    an error: every call passes here, and the common one has nothing to
    complain about."""
    for value in values:
        if isinstance(value, tuple):
            _arrays(value, device, numpy)
        elif isinstance(value, np.ndarray):
            numpy.append(value)
        elif _kind_of(value) is not None:
            device.append(value)


def place(py_func: Callable, args: tuple, kwargs: dict) -> Placement | None:
    """Where ``py_func(*args, **kwargs)`` runs, or None for the CPU."""
    device: list = []
    numpy: list = []
    _arrays(args, device, numpy)
    if kwargs:
        _arrays(tuple(kwargs.values()), device, numpy)
    context = get_current_queue()
    constructed = _constructed_by(py_func)
    if constructed is not None:
        return _place_constructing(py_func, args, kwargs, constructed, device, numpy, context)
    return _place_by_arguments(py_func, args, kwargs, device, numpy, context)


def _constructed_by(py_func: Callable) -> Constructed | None:
    """What ``py_func``'s dpnp constructors say about where it runs. They are
    there only where dpnp is: their module, with the compiler it needs, is
    imported then."""
    if "dpnp" not in sys.modules:
        return None
    from .frontend.dpnp_constructors import constructed_by
    return constructed_by(py_func)


def _queues_of(arrays: list, context: dpctl.SyclQueue | CudaQueue | None) -> list:
    """Each array's queue. A CUDA array that names no device takes the
    others' (else the device context's, else the first CUDA device's)."""
    queues = [_kind_of(v).queue_of(v) for v in arrays]
    if None in queues:
        known = next((q for q in queues if q is not None), None)
        if known is None:
            known = context if isinstance(context, CudaQueue) else cuda_queue(0)
        queues = [known if q is None else q for q in queues]
    return queues


def _place_by_arguments(py_func: Callable, args: tuple, kwargs: dict, arrays: list,
                        numpy: list, context: dpctl.SyclQueue | CudaQueue | None
                        ) -> Placement | None:
    """Where the call runs by its device arrays, its NumPy arrays and the
    device context."""
    if not arrays:
        return None if context is None else _on_queue(context, args, kwargs, numpy)
    kind = _kind_of(arrays[0])
    queues = _queues_of(arrays, context)
    queue = queues[0]
    others = {id(q): q for q in queues[1:] if q is not queue}
    if (numpy or any(_kind_of(v) is not kind for v in arrays[1:])
            or not all(equivalent(queue, q) for q in others.values())
            or (context is not None and not equivalent(context, queue))):
        _refuse(py_func, args, kwargs, context)
    return kind.place(py_func, queue, args, kwargs, arrays, tuple(others.values()))


def _place_constructing(py_func: Callable, args: tuple, kwargs: dict, constructed: Constructed,
                        arrays: list, numpy: list, context: dpctl.SyclQueue | None
                        ) -> Placement:
    """The placement of a call whose function makes USM arrays with dpnp's
    constructors: their queues take part as USM arguments' do (rules 3-6); with
    nothing else to go by, the first of them acts as the device context."""
    where = py_func.__qualname__
    named = dict(zip(_argument_names(py_func, len(args), kwargs), [*args, *kwargs.values()]))
    wanted = [(f"dpnp's device={name!r}", _device_queue(name))
              for name in sorted(constructed.devices)]
    import dpctl  # there with dpnp, whose constructors these are

    for parameter in sorted(constructed.queue_parameters):
        queue = named.get(parameter)
        if not isinstance(queue, dpctl.SyclQueue):
            raise placement_error(
                f"{where}: sycl_queue={parameter} of a dpnp constructor is "
                f"{type(queue).__name__}, not a dpctl.SyclQueue")
        wanted.append((f"sycl_queue={parameter}", queue))
    if arrays:
        placement = _place_by_arguments(py_func, args, kwargs, arrays, numpy, context)
        chosen, by = placement.queue, f"its {placement.kind} arguments"
    else:
        if context is not None:
            chosen, by = context, "the device context"
        elif wanted:
            by, chosen = wanted[0]
        else:
            chosen, by = _device_queue(None), "dpnp's default device"
        placement = _on_queue(chosen, args, kwargs, numpy)
    if isinstance(chosen, CudaQueue):
        raise placement_error(
            f"{where}: it makes arrays with dpnp's constructors, which are SYCL USM arrays, "
            f"but the call runs on {describe_queue(chosen)} ({by}); make them with NumPy's "
            "constructors (np.empty, ...) there")
    for name, queue in wanted:
        if not equivalent(queue, chosen):
            raise placement_error(
                f"{where}: a dpnp constructor's {name} is {describe_queue(queue)}, but the call "
                f"runs on {describe_queue(chosen)} ({by}); arrays a function makes must be on "
                "its device: drop device=/sycl_queue= there, or move the data")
    placement.dpnp_out = True
    return placement


def _on_queue(queue: dpctl.SyclQueue | CudaQueue, args: tuple, kwargs: dict,
              numpy: list) -> Placement:
    """A call on ``queue`` with no device arrays: its NumPy arrays' memory is
    kept on the device for the call."""
    return Placement(queue, args, kwargs, [runtime.byte_extent(v) for v in numpy])


@functools.lru_cache(maxsize=64)
def _device_queue(name: str | None) -> dpctl.SyclQueue:
    """One queue per device name: made once, and equivalent to the others on it."""
    return as_queue(name)


def _names(items: list[tuple[str, object]]) -> str:
    return ", ".join(name for name, _ in items)


def _refuse(py_func: Callable, args: tuple, kwargs: dict,
            context: dpctl.SyclQueue | CudaQueue | None) -> NoReturn:
    """Raise the ExecutionPlacementError of a call whose arrays leave its
    device ambiguous, naming them."""
    where = py_func.__qualname__
    items = _named(py_func, args, kwargs)
    arrays = [(n, v) for n, v in items
              if not isinstance(v, np.ndarray) and _kind_of(v) is not None]
    numpy = [n for n, v in items if isinstance(v, np.ndarray)]
    first_name, first = arrays[0]
    kind = _kind_of(first)
    if numpy:
        raise placement_error(
            f"{where}: cannot mix NumPy arrays ({', '.join(numpy)}) with {kind.name} arrays "
            f"({_names(arrays)}): {kind.from_numpy}")
    queues = _queues_of([v for _, v in arrays], context)
    other_kind = [i for i, (_, v) in enumerate(arrays) if _kind_of(v) is not kind]
    if other_kind:
        same = [item for i, item in enumerate(arrays) if i not in other_kind]
        other = [arrays[i] for i in other_kind]
        raise placement_error(
            f"{where}: cannot mix {kind.name} arrays ({_names(same)}) with "
            f"{_kind_of(other[0][1]).name} arrays ({_names(other)}): they are on different "
            f"devices, {describe_queue(queues[0])} and "
            f"{describe_queue(queues[other_kind[0]])}; bring them to one device")
    queue = queues[0]
    for (name, _), other in zip(arrays[1:], queues[1:]):
        if not equivalent(queue, other):
            raise placement_error(
                f"{where}: {kind.name} arrays on different {kind.places}: {first_name} on "
                f"{describe_queue(queue)}, {name} on {describe_queue(other)} "
                f"({_difference(queue, other)}); "
                + kind.to_queue.format(name=name, other=first_name,
                                       device=describe_queue(queue)))
    raise placement_error(
        f"{where}: {first_name} is on {describe_queue(queue)}, but the active device context "
        f"is {describe_queue(context)} ({_difference(queue, context)}); "
        + kind.to_context.format(name=first_name, device=describe_queue(context)))


def asarray(obj: Any, queue: dpctl.SyclQueue | dpctl.SyclDevice | str | None = None,
            usm_type: str = "device") -> dpt.usm_ndarray:
    """``obj`` as a ``usm_ndarray`` of ``usm_type`` on ``queue`` (by default the
    array's own queue, else the active device context's, else the default
    device's). No copy when ``obj`` is already USM memory of that kind in the
    queue's context and device. Other objects offering DLPack are taken
    through it."""
    if usm_type not in USM_TYPES:
        raise ValueError(f"usm_type must be one of {', '.join(USM_TYPES)}, not {usm_type!r}")
    if not (isinstance(obj, np.ndarray) or is_usm_array(obj)) and hasattr(obj, "__dlpack__"):
        obj = _from_dlpack(obj)
    if queue is not None:
        queue = as_queue(queue)
    elif is_usm_array(obj):
        queue = _usm_queue(obj)
    else:
        queue = get_current_queue() or as_queue(None)
    if isinstance(queue, CudaQueue):
        raise ValueError(
            f"xpuc.asarray makes SYCL USM arrays, and {describe_queue(queue)} is a CUDA "
            "device: make arrays there with a CUDA array library (cupy.asarray, "
            "torch.as_tensor(x, device='cuda')), which xpuc.jit functions take in place")
    if is_usm_array(obj):
        array = _as_usm_ndarray(obj)
        if (array.usm_type == usm_type and array.sycl_context == queue.sycl_context
                and array.sycl_device == queue.sycl_device):
            # a view of the same memory, bound to the requested queue
            return array if array.sycl_queue == queue else array.to_device(queue)
    if not is_usm_array(obj):
        # host data (NumPy arrays, lists, scalars) goes through xpuc's copy,
        # which never waits on a queue holding the GIL
        host = np.asarray(obj)
        if host.dtype.kind in "biufc":
            return _usm_copy(host, queue, usm_type)
    return tensor_library().asarray(obj, usm_type=usm_type, sycl_queue=queue)


def _from_dlpack(obj: Any) -> np.ndarray | dpt.usm_ndarray:
    """The array a DLPack producer describes, without a copy: host memory as a
    NumPy array, SYCL USM as a ``usm_ndarray`` (on dpctl's default queue of
    its device). Memory a SYCL queue cannot reach is refused."""
    what = f"xpuc.asarray: the {type(obj).__name__} given"
    if not hasattr(obj, "__dlpack_device__"):
        raise TypeError(f"{what} has __dlpack__ but no __dlpack_device__, so where its memory "
                        "lives is unknown: pass a NumPy or USM array instead")
    kind, device_id = obj.__dlpack_device__()
    library = tensor_library()
    try:
        if kind == library.DLDeviceType.kDLCPU:
            return np.from_dlpack(obj)
        if kind == library.DLDeviceType.kDLOneAPI:
            return library.from_dlpack(obj)
    except (BufferError, TypeError, ValueError) as error:
        raise type(error)(f"{what} could not be read through DLPack: {error}") from error
    raise ValueError(
        f"{what} lives on DLPack device type {kind} (device {device_id}), which no SYCL queue "
        "can reach: only host memory (kDLCPU) and SYCL USM (kDLOneAPI) can be taken; copy it "
        "to the host first, e.g. with np.from_dlpack(obj, device='cpu')")


def _usm_copy(array: np.ndarray, queue: dpctl.SyclQueue, usm_type: str) -> dpt.usm_ndarray:
    """A USM copy of ``array`` (in its memory order), its memory given the page
    advice of the runtime's own allocations before the data goes in. The
    runtime copies, letting the GIL go while it waits: dpctl's copy waits
    holding it, and hangs when dpctl's host tasks of other threads need it."""
    order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
    host = np.asarray(array, order=order)  # the bytes in one block
    copy = tensor_library().empty(array.shape, dtype=array.dtype, usm_type=usm_type,
                                  sycl_queue=queue, order=order)
    handle = runtime.queue_handle(queue)
    runtime.usm_advise(handle, copy.usm_data._pointer, copy.usm_data.nbytes)
    runtime.copy_to_device(handle, copy.usm_data._pointer, host.ctypes.data, host.nbytes)
    return copy
