"""Python rewrites and checks of the nvvm stage, before convert-gpu-to-nvvm:
what a CUDA launch needs that a SYCL range launch does not, and the GPU's
own float atomic adds (the frontend's spirv ops are spirv_to_nvvm.py's)."""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, scf

from ..abi import MAX_WORK_ITEMS
from .disjoint import disjoint_variant
from .ir_queries import (
    add_index_arguments,
    add_launch_operands,
    defining_op,
    integer_constant,
    is_defined_in,
    ops_named,
    symbol_name,
)
from .launch_plan import is_range_launch
from .unswitch import unit_variant

_DIMENSIONS = ("x", "y", "z")
_LIBDEVICE_SQRTF = "__nv_sqrtf"
_SPIRV_PRIVATE = "#spirv.storage_class<Function>"

# attributes outlining sets from the launch's constant sizes: a CUDA launch
# of the same range has other block counts and sizes (the runtime picks the
# block), and convert-gpu-to-nvvm would turn them into wrong range facts
_LAUNCH_SHAPE_ATTRIBUTES = ("known_grid_size", "known_block_size")


def guard_range_tails(module: ir.Module) -> None:
    """Give each parfor kernel the extent of its range and make the work-items
    past it return at once.

    A parfor launch is a range of work-items (``blocks in (n, ...) threads in
    (1, 1, 1)``, see gpu_rewrites.index_by_global_ids): a SYCL runtime runs
    exactly that range, with work-groups of its choosing. CUDA has no such
    launch: the runtime picks a block size and launches whole blocks, so the
    last block may run past the range. Each extent that is not a constant
    becomes a new last argument of the kernel (and of the copies the host may
    launch instead of it), passed by the launch."""
    kernels = {symbol_name(kernel): kernel for kernel in ops_named(module.operation, "gpu.func")}
    for launch in ops_named(module.operation, "gpu.launch_func"):
        if not is_range_launch(launch):
            continue  # its blocks are the kernel's own
        view = launch.opview
        extents = [view.gridSizeX, view.gridSizeY, view.gridSizeZ]
        passed = [extent for extent in extents if integer_constant(extent) is None]
        _, name = ir.SymbolRefAttr(launch.attributes["kernel"]).value
        for kernel in _launched_copies(kernels[name], kernels):
            _guard_kernel(kernel, extents, passed)
        if passed:
            add_launch_operands(launch, passed)


def _launched_copies(kernel: ir.Operation, kernels: dict[str, ir.Operation]
                     ) -> list[ir.Operation]:
    """``kernel`` and the copies of it that the launch plan may launch instead
    (launch_plan.KernelChoice), which take the same arguments."""
    found = [kernel]
    if (unit := unit_variant(kernel)) is not None:
        found.append(kernels[unit[0]])
    found += [kernels[name] for name in map(disjoint_variant, list(found)) if name is not None]
    return found


def _guard_kernel(kernel: ir.Operation, extents: list[ir.Value], passed: list[ir.Value]) -> None:
    """Wrap ``kernel``'s body in ``if id < extent`` for each dimension whose
    extent is not 1, the extents in ``passed`` read from new arguments."""
    for attribute in _LAUNCH_SHAPE_ATTRIBUTES:
        if attribute in kernel.attributes:
            del kernel.attributes[attribute]
    arguments = dict(zip(passed, add_index_arguments(kernel, len(passed))))
    _guard_body(kernel, [None if integer_constant(extent) == 1
                         else arguments.get(extent, integer_constant(extent))
                         for extent in extents])


def _guard_body(kernel: ir.Operation, limits: list[ir.Value | int | None]) -> None:
    """Wrap ``kernel``'s body in ``if id < limit`` for each dimension (x, y,
    z) with a limit (a value of the kernel, or a constant)."""
    entry = kernel.regions[0].blocks[0]
    index = ir.IndexType.get()
    body = list(entry.operations)
    with kernel.location:
        with ir.InsertionPoint.at_block_begin(entry):
            inside = None
            bound = ir.IntegerAttr.get(index, MAX_WORK_ITEMS)
            for dimension, limit in zip(_DIMENSIONS, limits):
                if limit is None:
                    continue
                if isinstance(limit, int):
                    limit = arith.constant(index, limit)
                work_item = gpu.global_id(gpu.Dimension[dimension], upper_bound=bound)
                within = arith.cmpi(arith.CmpIPredicate.ult, work_item, limit)
                inside = within if inside is None else arith.andi(inside, within)
            if inside is None:
                return
            guard = scf.IfOp(inside)
        with ir.InsertionPoint(guard.then_block):
            yielded = scf.YieldOp([])
    for op in body[:-1]:  # all but gpu.return
        op.operation.move_before(yielded)


def guard_kernel_ranges(module: ir.Module) -> None:
    """Give each explicit kernel its range's extents in x, y and z (1 past
    the range's rank), as three new last arguments its launches pass, and
    make the work-items past them return at once.

    A kernel launched over a range with no local size runs in blocks the
    runtime picks (the occupancy calculator's size), so the last block may
    run past the range; over an NdRange the blocks divide it, and the guard
    holds for every work-item. ``get_global_size`` (the frontend's
    ``grid_dim * block_dim``, the SPIR-V meaning) becomes the extent."""
    for kernel in ops_named(module.operation, "gpu.func"):
        extents = add_index_arguments(kernel, len(_DIMENSIONS))
        for product in ops_named(kernel, "arith.muli"):
            dimension = _grid_size_dimension(product)
            if dimension is not None:
                product.results[0].replace_all_uses_with(extents[dimension])
                product.erase()
        _guard_body(kernel, extents)


def _grid_size_dimension(product: ir.Operation) -> int | None:
    """The dimension (0 for x) of ``grid_dim * block_dim`` that ``product``
    computes, in either order; None for another product."""
    sources = {}
    for operand in product.operands:
        op = defining_op(operand)
        if op is None or op.name not in ("gpu.grid_dim", "gpu.block_dim"):
            return None
        sources[op.name] = str(op.attributes["dimension"])
    if len(sources) != 2 or len(set(sources.values())) != 1:
        return None
    return [f"#gpu<dim {name}>" for name in _DIMENSIONS].index(sources["gpu.grid_dim"])


def private_arrays_in_default_memory(module: ir.Module) -> None:
    """Put the kernels' private arrays (``memref.alloca``, which the frontend
    places in SPIR-V's Function storage class) in the default memory space,
    which NVVM lowers to a thread's local memory."""
    for alloca in ops_named(module.operation, "memref.alloca"):
        array_type = ir.MemRefType(alloca.results[0].type)
        if str(array_type.memory_space) == _SPIRV_PRIVATE:
            with alloca.location:
                alloca.results[0].set_type(ir.MemRefType.get(
                    array_type.shape, array_type.element_type, array_type.layout))


# The static extent a kernel's array arguments get: larger than any array.
# convert-gpu-to-nvvm passes a memref as one bare pointer (the SPIR-V kernels'
# ABI) only if its shape is static, and a bare pointer carries no extent: the
# kernels read their arrays' sizes from separate arguments, never from the
# memref (it is never checked against an index).
_UNBOUNDED_EXTENT = 1 << 62


def static_array_arguments(module: ir.Module) -> None:
    """Give every kernel's ``memref<?xT>`` arguments a static extent, and
    have the launches pass their arrays cast to it (``memref.cast``)."""
    retype_kernel_arguments(module, _static, memref.cast)


def retype_kernel_arguments(module: ir.Module, convert: Callable[[ir.Type], ir.Type],
                            cast: Callable[[ir.Type, ir.Value], ir.Value]) -> None:
    """Give every kernel's arguments the types ``convert`` makes of theirs
    (a type it keeps stays), and have the launches pass ``cast(new type,
    operand)`` for each operand whose type changes."""
    for kernel in ops_named(module.operation, "gpu.func"):
        with kernel.location:
            for argument in kernel.regions[0].blocks[0].arguments:
                argument.set_type(convert(argument.type))
            function_type = ir.FunctionType(
                ir.TypeAttr(kernel.attributes["function_type"]).value)
            kernel.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                [convert(argument) for argument in function_type.inputs],
                function_type.results))
    for launch in ops_named(module.operation, "gpu.launch_func"):
        view = launch.opview
        first = len(launch.operands) - len(view.kernelOperands)
        with launch.location, ir.InsertionPoint(launch):
            for position, operand in enumerate(list(view.kernelOperands)):
                converted = convert(operand.type)
                if converted != operand.type:
                    launch.operands[first + position] = cast(converted, operand)


def _static(value_type: ir.Type) -> ir.Type:
    """``memref<?xT>`` as ``memref<_UNBOUNDED_EXTENTxT>``; other types as they are."""
    if not isinstance(value_type, ir.MemRefType) or value_type.has_static_shape:
        return value_type
    return ir.MemRefType.get([_UNBOUNDED_EXTENT], value_type.element_type,
                             memory_space=value_type.memory_space)


# NVPTX's 64-bit data layout, as LLVM's NVPTX target gives it
_NVPTX_DATA_LAYOUT = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"


def nvptx_data_layout(module: ir.Module) -> None:
    """Give each gpu.module NVPTX's data layout, which the translation to
    LLVM IR reads the alignment of each load and store without one from.
    Without it the translation takes LLVM's default layout, where an i64 is
    4-byte aligned, and each int64 element became two 32-bit accesses
    (``st.global.b32`` twice for a k-means label); gpu-module-to-binary sets
    the target's layout only after the translation."""
    layout = ir.StringAttr.get(_NVPTX_DATA_LAYOUT)
    for gpu_module in ops_named(module.operation, "gpu.module"):
        gpu_module.attributes["llvm.data_layout"] = layout


def exact_square_roots(module: ir.Module) -> None:
    """Make each call of libdevice's float32 square root LLVM's sqrt
    intrinsic (``sqrt.rn.f32``, correctly rounded, as NumPy's).

    libdevice's ``__nv_sqrtf`` is ``sqrt.approx.f32`` unless NVVMReflect is
    told ``__CUDA_PREC_SQRT=1``, and nothing in the MLIR pipeline tells it
    (nvcc does, by default). convert-gpu-to-nvvm makes every square root that
    call, so this runs after it."""
    for call in ops_named(module.operation, "llvm.call"):
        if ir.FlatSymbolRefAttr(call.attributes["callee"]).value != _LIBDEVICE_SQRTF:
            continue
        with call.location, ir.InsertionPoint(call):
            exact = ir.Operation.create("llvm.intr.sqrt", results=[call.results[0].type],
                                        operands=[call.operands[0]])
        call.results[0].replace_all_uses_with(exact.results[0])
        call.erase()
    for declaration in ops_named(module.operation, "llvm.func"):  # now called nowhere
        if symbol_name(declaration) == _LIBDEVICE_SQRTF:
            declaration.erase()


# the ops of a compare-exchange loop that adds to a float element (the
# frontend's spirv.atomic_update_loop of an addf, once translated), in order
_FLOAT_ADD_LOOP = ("arith.addf", "arith.bitcast", "arith.bitcast", "llvm.cmpxchg",
                   "llvm.extractvalue", "arith.bitcast", "arith.cmpi", "scf.condition")


def native_float_adds(module: ir.Module) -> None:
    """Make each compare-exchange loop that adds a value to a float element
    one ``llvm.atomicrmw fadd``: SPIR-V for OpenCL has no float atomics, so
    the frontend writes the loop, which NVIDIA GPUs need not (``atom.add.f32``,
    ``.f64``), and which retries under contention. Both give the value the
    element held before; float32's native add flushes subnormals to zero."""
    for loop in ops_named(module.operation, "scf.while"):
        before = loop.regions[0].blocks[0]
        ops = [op.operation for op in before.operations]
        if tuple(op.name for op in ops) != _FLOAT_ADD_LOOP:
            continue
        add, new_bits, _, exchange = ops[:4]
        old = before.arguments[0]
        addends = [operand for operand in add.operands if operand != old]
        if len(addends) != 1 or exchange.operands[2] != new_bits.results[0] \
                or new_bits.operands[0] != add.results[0] \
                or is_defined_in(addends[0], loop):
            continue
        with loop.location, ir.InsertionPoint(loop):
            fetched = llvm.AtomicRMWOp(
                llvm.AtomicBinOp.fadd, exchange.operands[0], addends[0],
                llvm.AtomicOrdering.monotonic,
                syncscope=ir.StringAttr(exchange.attributes["syncscope"]).value)
        first = defining_op(loop.operands[0])
        loop.results[0].replace_all_uses_with(fetched.result)
        loop.erase()
        if first is not None and first.name == "llvm.load" and not list(first.results[0].uses):
            first.erase()  # the loop's first guess of the element
