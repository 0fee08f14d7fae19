"""``xpuc.kernel_api``: numba-dpex's kernel API over xpuc's explicit kernels.

A kernel written for numba-dpex takes its work-item first and is launched by
``call_kernel(kernel, Range(...) or NdRange(...), *args)``, which passes no
argument for the item: an ``Item`` over a ``Range``, an ``NdItem`` over an
``NdRange``. Inside, the item's methods, ``AtomicRef``, ``PrivateArray``,
``group_barrier`` and ``atomic_fence`` are xpuc's intrinsics under
numba-dpex's names (frontend/kernel_api_calls.py); a ``LocalAccessor``
argument is the work-group's local array.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from .explicit_kernels import KernelFunction, NdRange, launch_range_of
from .frontend.kernel_api_calls import (
    AddressSpace,
    AtomicRef,
    Group,
    Item,
    KernelApiLaunch,
    MemoryOrder,
    MemoryScope,
    NdItem,
    PrivateArray,
    group_barrier,
)
from .frontend.kernel_api_calls import kernel_api_atomic_fence as atomic_fence

# the element types a local accessor may have, as numba-dpex allows
_ACCESSOR_TYPES = (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
                   np.uint16, np.uint32, np.uint64)


class Range(tuple):
    """A global range of 1 to 3 sizes: ``Range(n0)``, ``Range(n0, n1)``, ``Range(n0, n1, n2)``."""

    def __new__(cls, dim0: int, dim1: int | None = None, dim2: int | None = None) -> Range:
        sizes = [dim0, *(d for d in (dim1, dim2) if d is not None)]
        if dim1 is None and dim2 is not None:
            raise TypeError("Range(dim0, None, dim2): give dim1")
        if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in sizes):
            raise TypeError(f"the sizes of a Range are ints, not {sizes}")
        return super().__new__(cls, (int(d) for d in sizes))

    @property
    def ndim(self) -> int:
        return len(self)


class LocalAccessor:
    """A work-group local array of ``shape`` and ``dtype``, passed to a kernel
    launched over an ``NdRange``: each work-group has its own."""

    def __init__(self, shape: int | tuple[int, ...], dtype: Any) -> None:
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        if not (1 <= len(shape) <= 3 and all(
                isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n > 0
                for n in shape)):
            raise TypeError(f"a LocalAccessor's shape is 1 to 3 positive ints, not {shape}")
        try:
            scalar = np.dtype(dtype).type
        except TypeError:
            scalar = None
        if scalar not in _ACCESSOR_TYPES:
            raise TypeError(f"a LocalAccessor of {dtype}: its dtype is one of "
                            f"{', '.join(t.__name__ for t in _ACCESSOR_TYPES)}")
        self.shape = tuple(int(n) for n in shape)
        self.dtype = scalar


def call_kernel(kernel: KernelFunction, index_range: Range | NdRange, *args: Any) -> None:
    """Launch ``kernel``, whose first parameter is its work-item, over
    ``index_range`` with ``args`` for its other parameters."""
    if not isinstance(kernel, KernelFunction):
        raise TypeError(f"call_kernel launches an @xpuc.kernel function, not {kernel!r}")
    if isinstance(index_range, NdRange):
        item: type = NdItem
    elif isinstance(index_range, tuple):  # a Range, or a tuple of sizes
        item = Item
    else:
        raise TypeError(f"call_kernel launches over a kernel_api.Range or kernel_api.NdRange, "
                        f"not {type(index_range).__name__}")
    parameters = list(inspect.signature(kernel.py_func).parameters)
    if len(args) != len(parameters) - 1:
        raise TypeError(f"kernel {kernel.__qualname__} takes its work-item and "
                        f"{len(parameters) - 1} arguments ({', '.join(parameters[1:])}), "
                        f"got {len(args)} arguments")
    accessors = tuple((position, value.shape, value.dtype)
                      for position, value in enumerate(args, start=1)
                      if isinstance(value, LocalAccessor))
    if accessors and item is Item:
        raise TypeError(f"kernel {kernel.__qualname__}: a LocalAccessor argument needs an "
                        "NdRange (work-groups to share it)")
    passed = [value for value in args if not isinstance(value, LocalAccessor)]
    kernel.launch(launch_range_of(index_range), KernelApiLaunch(item, accessors), *passed)


__all__ = ["AddressSpace", "AtomicRef", "Group", "Item", "LocalAccessor", "MemoryOrder",
           "MemoryScope", "NdItem", "NdRange", "PrivateArray", "Range", "atomic_fence",
           "call_kernel", "group_barrier"]
