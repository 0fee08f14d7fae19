"""The host's check of the hyperplanes that a prange's iterations read and
one of them owns (parfor_dependences.py): ``path[k, :]`` in Floyd–Warshall's
``path[i, :] = np.minimum(path[i, :], path[i, k] + path[k, :])``.

Before the loop, the bytes the hyperplane's elements span are copied to host
memory: a USM array's (a CUDA array's too) by the runtime
(``xpuc_element_copy``), a NumPy array's by one ``memcpy`` after
``xpuc_host_access``. After the loop (the kernel's launch, or the host's
sequential copy of the parfor) they are copied again and compared element by
element, bit for bit (a NaN equals itself), and where one differs the call
raises UnsupportedError: the iteration that owns the hyperplane changed what
the others read. The cost is two copies of the hyperplane and one pass over
it on the host, no kernel. The host computes the index from its polynomial
in the function's variables, as the body does. An index out of the array's
range (the loop then reads no element there) is checked for nothing. The
copies are freed on every way out of the code between (``_freed_on_raise``):
a size check or a failed launch raises by returning from the function.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from llvmlite import ir as llvm
from numba.core import cgutils, types

from ..errors import UnsupportedError
from .parfor_dependences import ReadHyperplane
from .runtime_calls import I8P, I32, I64, byte_span, call_runtime
from .translation import FrozenPolynomial, dimension_of_factor
from .usm import USMArray


@dataclass(frozen=True)
class _HostCopy:
    """A hyperplane's bytes as they were before the loop, with where they are."""
    plane: ReadHyperplane
    copy: llvm.Value  # host memory, nbytes long
    start: llvm.Value  # the lowest byte of the hyperplane's elements
    nbytes: llvm.Value  # 0 where the index is out of range
    shape: list[llvm.Value]  # of the other dimensions, and their byte strides
    strides: list[llvm.Value]
    first: llvm.Value  # the offset of the hyperplane's first element from start


@contextlib.contextmanager
def hyperplanes_checked(lowerer, planes: tuple[ReadHyperplane, ...]) -> Iterator[None]:
    """Around the lowering of a loop: copy each hyperplane to host memory
    before it, compare after, and raise where one changed. The copies are
    freed on every way out, the ways the loop's code raises included."""
    context, builder = lowerer.context, lowerer.builder
    copies = []
    for plane in planes:
        start, nbytes, shape, strides, first = _extent(lowerer, plane)
        copy = context.nrt.allocate(builder, _at_least_one(lowerer, nbytes))
        copies.append(_HostCopy(plane, copy, start, nbytes, shape, strides, first))
    with _freed_on_raise(lowerer, [held.copy for held in copies]):
        for held in copies:
            _copy_to_host(lowerer, held.plane, held.copy, held.start, held.nbytes)
        yield
        changed = [_changed(lowerer, held) for held in copies]
    for held in copies:
        context.nrt.free(builder, held.copy)
    for held, differs in zip(copies, changed):
        with cgutils.if_unlikely(builder, differs):
            context.call_conv.return_user_exc(builder, UnsupportedError, (held.plane.message,))


@contextlib.contextmanager
def _freed_on_raise(lowerer, memory: list[llvm.Value]) -> Iterator[None]:
    """Free ``memory`` (NRT allocations) before each return of the blocks
    the code lowered inside makes: Numba's code raises by returning an error
    code (a size check, a failed launch or copy, a division by zero in the
    host's copy of the loop), and a loop returns for nothing else."""
    builder = lowerer.builder
    blocks_before = set(builder.function.blocks)
    yield
    if not memory:
        return
    block_now = builder.block
    for block in builder.function.blocks:
        if block not in blocks_before and isinstance(block.terminator, llvm.Ret):
            builder.position_before(block.terminator)
            for pointer in memory:
                lowerer.context.nrt.free(builder, pointer)
    builder.position_at_end(block_now)


def _changed(lowerer, held: _HostCopy) -> llvm.Value:
    """Whether a hyperplane's elements differ now, bit for bit, from its copy."""
    context, builder = lowerer.context, lowerer.builder
    nbtype = lowerer.fndesc.typemap[held.plane.array]
    after = context.nrt.allocate(builder, _at_least_one(lowerer, held.nbytes))
    with _freed_on_raise(lowerer, [after]):
        _copy_to_host(lowerer, held.plane, after, held.start, held.nbytes)
    bits = llvm.IntType(8 * context.get_abi_sizeof(context.get_data_type(nbtype.dtype)))
    changed = cgutils.alloca_once_value(builder, cgutils.false_bit)
    with builder.if_then(builder.icmp_signed(">", held.nbytes, I64(0))):
        with cgutils.loop_nest(builder, held.shape, I64) as indices:
            offset = held.first
            for index, stride in zip(indices, held.strides):
                offset = builder.add(offset, builder.mul(index, stride))
            before, now = (builder.load(builder.bitcast(builder.gep(memory, [offset]),
                                                        bits.as_pointer()))
                           for memory in (held.copy, after))
            builder.store(builder.or_(builder.load(changed),
                                      builder.icmp_unsigned("!=", before, now)), changed)
    context.nrt.free(builder, after)
    return builder.load(changed)


def _extent(lowerer, plane: ReadHyperplane) -> tuple[llvm.Value, llvm.Value, list[llvm.Value],
                                                     list[llvm.Value], llvm.Value]:
    """``(start, nbytes, shape, strides, first)`` of the hyperplane (see
    _HostCopy), the index counted from the end where it is negative."""
    context, builder = lowerer.context, lowerer.builder
    nbtype = lowerer.fndesc.typemap[plane.array]
    array = context.make_array(nbtype)(context, builder, value=lowerer.loadvar(plane.array))
    shape = cgutils.unpack_tuple(builder, array.shape, nbtype.ndim)
    strides = cgutils.unpack_tuple(builder, array.strides, nbtype.ndim)
    index = polynomial_value(lowerer, plane.index)
    extent, strides_along = shape[plane.axis], strides[plane.axis]
    index = builder.select(builder.icmp_signed("<", index, I64(0)),
                           builder.add(index, extent), index)
    in_range = builder.and_(builder.icmp_signed(">=", index, I64(0)),
                            builder.icmp_signed("<", index, extent))
    others = [axis for axis in range(nbtype.ndim) if axis != plane.axis]
    shape, strides = [shape[axis] for axis in others], [strides[axis] for axis in others]
    first = builder.gep(builder.bitcast(array.data, I8P),
                        [builder.mul(index, strides_along)])
    start, nbytes, offset = byte_span(builder, first, shape, strides, array.itemsize)
    return start, builder.select(in_range, nbytes, I64(0)), shape, strides, offset


def polynomial_value(lowerer, polynomial: FrozenPolynomial) -> llvm.Value:
    """The i64 value of ``polynomial`` in the function's variables (a
    hyperplane's index, a slice's bound), wrapping as Numba's int64
    arithmetic does."""
    builder = lowerer.builder
    value = I64(0)
    for names, coefficient in polynomial:
        term = I64((coefficient + 2**63) % 2**64 - 2**63)
        for name in names:
            term = builder.mul(term, _factor_value(lowerer, name))
        value = builder.add(value, term)
    return value


def _factor_value(lowerer, factor: str) -> llvm.Value:
    """The i64 value of a polynomial's factor: a variable, or an array's
    dimension (``shape_factor``)."""
    context, builder = lowerer.context, lowerer.builder
    dimension = dimension_of_factor(factor)
    if dimension is None:
        return context.cast(builder, lowerer.loadvar(factor), lowerer.fndesc.typemap[factor],
                            types.int64)
    array, axis = dimension
    nbtype = lowerer.fndesc.typemap[array]
    held = context.make_array(nbtype)(context, builder, value=lowerer.loadvar(array))
    return cgutils.unpack_tuple(builder, held.shape, nbtype.ndim)[axis]


def _at_least_one(lowerer, nbytes: llvm.Value) -> llvm.Value:
    builder = lowerer.builder
    return builder.select(builder.icmp_signed(">", nbytes, I64(0)), nbytes, I64(1))


def _copy_to_host(lowerer, plane: ReadHyperplane, host: llvm.Value, start: llvm.Value,
                  nbytes: llvm.Value) -> None:
    context, builder = lowerer.context, lowerer.builder
    with builder.if_then(builder.icmp_signed(">", nbytes, I64(0))):
        if isinstance(lowerer.fndesc.typemap[plane.array], USMArray):
            call_runtime(context, builder, "xpuc_element_copy", host, start, nbytes, I32(0))
        else:
            call_runtime(context, builder, "xpuc_host_access", start, nbytes, I32(0))
            cgutils.raw_memcpy(builder, host, start, nbytes, 1)
