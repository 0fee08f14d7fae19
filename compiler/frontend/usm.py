"""Numba types for arrays in SYCL USM memory (``usm_ndarray``, of dpctl or dpnp, and
what the dispatcher turns into one), so that compiled code knows where each
array lives.

A USM array is a Numba array whose data pointer is a USM pointer: host code
handles it like any array (shape, views, passing it on) and kernels use it in
place: its type says it is USM memory of the call's context (placement checked
the queues), so the host code passes its pointer to the launch as it is. Arrays
that compiled code creates from USM arrays (``a + b``, ``np.empty_like(a)``)
are USM arrays too, allocated by the runtime on the call's queue with the
coerced ``usm_type``, and come back to Python as ``usm_ndarray``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from llvmlite import ir as llvm
from numba.core import cgutils, ir, types
from numba.core.datamodel.models import ArrayModel
from numba.core.extending import (
    box,
    intrinsic,
    overload_classmethod,
    register_model,
    typeof_impl,
    unbox,
)
from numba.core.ir_utils import mk_unique_var
from numba.core.pythonapi import NativeValue
from numba.np import numpy_support
from numba.np.arrayobj import _empty_nd_impl, populate_array
from numba.parfors.array_analysis import ArrayAnalysis

from .. import runtime
from ..abi import UsmKind
from ..array_library import is_usm_ndarray, tensor_library, when_loaded
from .runtime_calls import I8P, I32, call_runtime, host_extent, link_runtime

if TYPE_CHECKING:  # imported when first needed (array_library)
    import dpctl

    from ..array_library import tensor as dpt

# Coercion order: an array made from several takes the first of their kinds.
USM_TYPES = ("device", "shared", "host")
_USM_KINDS = {"device": UsmKind.DEVICE, "shared": UsmKind.SHARED, "host": UsmKind.HOST}


class USMArray(types.Array):
    """An array in USM memory of kind ``usm_type`` (one subclass per kind, so
    that Numba's ufunc typing, which picks a result class, can carry it)."""

    usm_type: str

    def __init__(self, dtype, ndim, layout, readonly=False, name=None, aligned=True):
        if name is None:
            access = "readonly " if readonly else ""
            name = f"{access}usm_ndarray({dtype}, {ndim}d, {layout}, {self.usm_type})"
        super().__init__(dtype, ndim, layout, readonly=readonly, name=name, aligned=aligned)

    def copy(self, dtype=None, ndim=None, layout=None, readonly=None):
        # views and like-allocations of a USM array stay in the same memory kind
        plain = super().copy(dtype=dtype, ndim=ndim, layout=layout, readonly=readonly)
        return type(self)(plain.dtype, plain.ndim, plain.layout, readonly=not plain.mutable,
                          aligned=plain.aligned)

    def unify(self, typingctx, other):
        plain = super().unify(typingctx, other)
        if plain is None or not isinstance(other, USMArray):
            return None
        return coerced_class((self, other))(plain.dtype, plain.ndim, plain.layout,
                                            readonly=not plain.mutable, aligned=plain.aligned)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """The class of a ufunc's array result: the inputs' coerced USM kind."""
        return coerced_class(inputs)

    def __allocate__(self, typingctx, typemap, calltypes, lhs, size_var, dtype, scope, loc,
                     lhs_typ, size_typ, out):
        """Numba's parfor pass allocates arrays with ``np.empty``, typed as
        NumPy's; a USM array is allocated by ``empty_usm`` instead."""
        allocate = ir.Var(scope, mk_unique_var("$empty_usm"), loc)
        typemap[allocate.name] = typingctx.resolve_value_type(empty_usm)
        array_type = ir.Var(scope, mk_unique_var("$usm_array_type"), loc)
        typemap[array_type.name] = types.TypeRef(self)
        call = ir.Expr.call(allocate, [size_var, array_type], (), loc)
        calltypes[call] = typemap[allocate.name].get_call_type(
            typingctx, [size_typ, types.TypeRef(self)], {})
        out += [ir.Assign(ir.Global("empty_usm", empty_usm, loc), allocate, loc),
                ir.Assign(ir.Global("usm_array_type", self, loc), array_type, loc),
                ir.Assign(call, lhs, loc)]
        return out


class DeviceUSMArray(USMArray):
    usm_type = "device"
    # for refusals of host code's access: what the array is, and what else
    # the user may do than a parfor
    described = "usm_type='device' array"
    host_alternative = " or use usm_type='shared' or 'host'"


class SharedUSMArray(USMArray):
    usm_type = "shared"


class HostUSMArray(USMArray):
    usm_type = "host"


USM_ARRAY_CLASSES: dict[str, type[USMArray]] = {
    cls.usm_type: cls for cls in (DeviceUSMArray, SharedUSMArray, HostUSMArray)
}


def coerce_usm_types(usm_types) -> str:
    """``device < shared < host``: the smallest kind present."""
    return min(usm_types, key=USM_TYPES.index)


@functools.cache
def _usm_memory_classes() -> dict[str, type]:
    """dpctl's memory class of each USM kind (dpctl is there once a USM array
    is: imported when first needed, as xpuc imports without it)."""
    import dpctl.memory

    return {"device": dpctl.memory.MemoryUSMDevice, "shared": dpctl.memory.MemoryUSMShared,
            "host": dpctl.memory.MemoryUSMHost}


# The kind of each memory class dpctl gives usm_ndarray (fixed when the memory
# is made): reading the class costs nothing, while ``usm_type`` asks the SYCL
# runtime about the pointer on every read.
@functools.cache
def _usm_type_of_memory() -> dict[type, str]:
    return {cls: usm_type for usm_type, cls in _usm_memory_classes().items()}


def usm_type_of(array: object) -> str:
    """``array.usm_type``, without a query to the SYCL runtime for a ``usm_ndarray``."""
    if is_usm_ndarray(array):
        found = _usm_type_of_memory().get(type(array.usm_data))
        if found is not None:
            return found
    return array.usm_type


def coerced_class(values) -> type[USMArray]:
    """The class of an array made from ``values``: theirs where they share
    one (a CUDA array's, too), else the coerced USM kind's."""
    classes = {type(v) for v in values if isinstance(v, USMArray)}
    if len(classes) == 1:
        return classes.pop()
    return USM_ARRAY_CLASSES[coerce_usm_types(cls.usm_type for cls in classes)]


def _typeof_usm_ndarray(value: dpt.usm_ndarray, context) -> USMArray:
    return usm_ndarray_type(value)


# Numba's typeof learns the class when the array library is loaded, which
# xpuc's placement does before Numba types any argument
when_loaded(lambda library: typeof_impl.register(library.usm_ndarray)(_typeof_usm_ndarray))


def usm_ndarray_type(value: dpt.usm_ndarray) -> USMArray:
    """Numba's type of a ``usm_ndarray`` (what ``numba.typeof`` gives, for a
    caller that knows the argument is one)."""
    flags = value.flags
    layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
    return _usm_array_type(value.dtype, value.ndim, layout, usm_type_of(value),
                            not flags.writable)


@functools.lru_cache(maxsize=256)
def _usm_array_type(dtype: np.dtype, ndim: int, layout: str, usm_type: str,
                    readonly: bool) -> USMArray:
    # cached: making a Numba type costs more than the rest of a call's dispatch
    return USM_ARRAY_CLASSES[usm_type](numpy_support.from_dtype(dtype), ndim, layout,
                                       readonly=readonly)


# ---- Python <-> compiled code ------------------------------------------------

_call = threading.local()


class CallQueue:
    """The queue that USM arrays returned during the block belong to. A class
    rather than a generator context manager: every offloaded call enters one,
    and this costs less than half as much."""

    __slots__ = ("queue", "outer")

    def __init__(self, queue: dpctl.SyclQueue) -> None:
        self.queue = queue

    def __enter__(self) -> None:
        self.outer = getattr(_call, "queue", None)
        _call.queue = self.queue

    def __exit__(self, *exc_info: object) -> None:
        _call.queue = self.outer


def current_call_queue() -> object:
    """The queue of the offloaded call running on this thread (a
    ``dpctl.SyclQueue`` or xpuc's CUDA queue), for the arrays it returns."""
    return _call.queue


class _USMBytes:
    """The bytes of a USM array that compiled code allocated, as dpctl memory
    wants them: ``__sycl_usm_array_interface__`` and an owner to keep alive."""

    def __init__(self, view: np.ndarray, start: int, nbytes: int, queue) -> None:
        self.view = view  # holds Numba's MemInfo, which frees the USM memory
        self.__sycl_usm_array_interface__ = {
            "data": (start, False), "shape": (nbytes,), "strides": None,
            "typestr": "|u1", "version": 1, "syclobj": queue,
        }


def as_usm_ndarray(view: np.ndarray, parent: object, usm_type: str) -> dpt.usm_ndarray:
    """The ``usm_ndarray`` of an array compiled code returns (``view`` aliases
    its USM memory): ``parent``, the argument it was unboxed from, when it is
    that whole array, else a new array owning the memory."""
    itemsize = view.itemsize
    if (is_usm_ndarray(parent) and parent.dtype == view.dtype
            and parent.shape == view.shape and parent._pointer == view.ctypes.data
            and tuple(s * itemsize for s in parent.strides) == view.strides):
        return parent
    start, nbytes = runtime.byte_extent(view)
    low = start - view.__array_interface__["data"][0]  # <= 0 with negative strides
    memory_class = _usm_memory_classes()[usm_type]
    memory = memory_class(_USMBytes(view, start, max(nbytes, itemsize), current_call_queue()))
    return tensor_library().usm_ndarray(view.shape, dtype=view.dtype,
                                        strides=tuple(s // itemsize for s in view.strides),
                                        buffer=memory, offset=-low // itemsize)


@unbox(USMArray)
def _unbox_usm_array(typ: USMArray, obj, c):
    """Numba's array straight from the ``usm_ndarray``'s pointer, shape and
    strides, with no NumPy view in between (every call unboxes each USM
    argument, and making a view for it cost more than the kernel launch that
    followed: 17 us a call here). Its MemInfo holds a reference to
    the ``usm_ndarray``, which owns the memory, and its parent is the
    ``usm_ndarray``, which boxing gives back when the function returns it."""
    pyapi, builder, context = c.pyapi, c.builder, c.context
    intp = context.get_value_type(types.intp)
    itemsize = context.get_abi_sizeof(context.get_data_type(typ.dtype))
    ary = context.make_array(typ)(context, builder)
    failed = cgutils.alloca_once_value(builder, cgutils.true_bit)
    fields = [pyapi.object_getattr_string(obj, name) for name in ("_pointer", "shape", "strides")]
    present = cgutils.true_bit
    for field in fields:
        present = builder.and_(present, cgutils.is_not_null(builder, field))
    with builder.if_then(present):
        pointer = pyapi.long_as_voidptr(fields[0])
        shape = [pyapi.long_as_longlong(pyapi.tuple_getitem(fields[1], i))
                 for i in range(typ.ndim)]
        strides = [builder.mul(pyapi.long_as_longlong(pyapi.tuple_getitem(fields[2], i)),
                               intp(itemsize)) for i in range(typ.ndim)]
        with builder.if_then(cgutils.is_null(builder, pyapi.err_occurred())):
            meminfo = pyapi.nrt_meminfo_new_from_pyobject(pointer, obj)
            populate_array(ary, data=builder.bitcast(pointer, ary.data.type), shape=shape,
                           strides=strides, itemsize=intp(itemsize), meminfo=meminfo,
                           parent=obj)
            builder.store(cgutils.is_null(builder, meminfo), failed)
    for field in fields:
        pyapi.decref(field)
    return NativeValue(ary._getvalue(), is_error=builder.load(failed))


@box(USMArray)
def _box_usm_array(typ: USMArray, val, c):
    return box_through(typ, val, c, functools.partial(as_usm_ndarray, usm_type=typ.usm_type))


def box_through(typ: types.Array, val, c, wrap: Callable[[np.ndarray, object], object]):
    """Box array ``val`` of device memory as ``wrap(view, parent)``: ``view``
    a NumPy array aliasing the memory (holding the MemInfo that owns it),
    ``parent`` the Python object it was unboxed from, or None."""
    plain = types.Array(typ.dtype, typ.ndim, typ.layout, readonly=not typ.mutable)
    parent = c.context.make_array(typ)(c.context, c.builder, value=val).parent
    parent = c.builder.select(cgutils.is_null(c.builder, parent), c.pyapi.borrow_none(), parent)
    c.pyapi.incref(parent)  # boxing may drop the MemInfo that holds it
    view = c.box(plain, val)
    wrapper = c.pyapi.unserialize(c.pyapi.serialize_object(wrap))
    result = c.pyapi.call_function_objargs(wrapper, [view, parent])
    for obj in (view, wrapper, parent):
        c.pyapi.decref(obj)
    return result


# ---- allocation --------------------------------------------------------------

@intrinsic
def _allocate_usm(typingctx, cls, allocsize):
    usm_kind = _USM_KINDS[cls.instance_type.usm_type]

    def codegen(context, builder, sig, args):
        link_runtime()
        meminfo = cgutils.alloca_once(builder, llvm.IntType(8).as_pointer())
        call_runtime(context, builder, "xpuc_usm_array_alloc", args[1],
                     llvm.Constant(llvm.IntType(32), usm_kind), meminfo)
        return builder.load(meminfo)

    return types.MemInfoPointer(types.voidptr)(cls, allocsize), codegen


@intrinsic
def empty_usm(typingctx, shape, array_type_ref):
    """An uninitialised array of type ``array_type_ref`` (C layout)."""
    array_type = array_type_ref.instance_type

    def codegen(context, builder, sig, args):
        shapes = (cgutils.unpack_tuple(builder, args[0]) if isinstance(shape, types.BaseTuple)
                  else [args[0]])
        return _empty_nd_impl(context, builder, array_type, shapes)._getvalue()

    return array_type(shape, array_type_ref), codegen


@intrinsic
def span_copy(typingctx, array):
    """A copy of ``array`` made with no kernel: the bytes its elements span
    (lowest to highest, whatever its strides) copied into new memory, viewed
    with its own shape and strides at the same offset. A USM array's are
    copied device to device into memory the runtime allocates on the call's
    queue, of its USM kind; a NumPy array's by one ``memcpy`` on the host,
    whose memory holds its elements outside parfors (rule 5: host code reads
    them after ``xpuc_host_access``)."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, sig, args):
        start, nbytes, offset = host_extent(context, builder, array, args[0])
        if isinstance(array, USMArray):
            link_runtime()
            meminfo = cgutils.alloca_once(builder, I8P)
            call_runtime(context, builder, "xpuc_usm_array_alloc", nbytes,
                         I32(_USM_KINDS[array.usm_type]), meminfo)
            meminfo = builder.load(meminfo)
        else:
            align = context.get_preferred_array_alignment(array.dtype)
            meminfo = context.nrt.meminfo_alloc_aligned(builder, nbytes, align)
        span = builder.bitcast(context.nrt.meminfo_data(builder, meminfo), I8P)
        if isinstance(array, USMArray):
            call_runtime(context, builder, "xpuc_device_copy", span, start, nbytes)
        else:
            cgutils.raw_memcpy(builder, span, start, nbytes, 1)
        source = context.make_array(array)(context, builder, value=args[0])
        copy = context.make_array(array)(context, builder)
        populate_array(copy, data=builder.bitcast(builder.gep(span, [offset]), source.data.type),
                       shape=source.shape, strides=source.strides, itemsize=source.itemsize,
                       meminfo=meminfo)
        return copy._getvalue()

    return array(array), codegen


# Array analysis knows an array's shape from NumPy's constructors by the
# callee's module and name; ``empty_usm`` (what dpnp's constructors inline to,
# and the parfor pass's USM allocations) takes its shape as np.empty does, so
# that a size-1 axis of ``dpnp.empty((n, 1))`` broadcasts as np.empty's does.
setattr(ArrayAnalysis,
        f"_analyze_op_call_{empty_usm._defn.__module__}_{empty_usm._name}".replace(".", "_"),
        ArrayAnalysis._analyze_numpy_create_array)


def _allocate(cls, allocsize, align):
    def impl(cls, allocsize, align):
        return _allocate_usm(cls, allocsize)

    return impl


def register_usm_class(cls: type[USMArray]) -> None:
    """Make Numba lower ``cls`` as its arrays, with the runtime allocating
    what is made of them."""
    register_model(cls)(ArrayModel)
    # Numba fuses array expressions only over types it calls internal (those
    # defined in numba's package); these are arrays it lowers like its own
    cls._is_internal = True
    overload_classmethod(cls, "_allocate")(_allocate)


for _cls in USM_ARRAY_CLASSES.values():
    register_usm_class(_cls)
