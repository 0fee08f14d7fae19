"""Host side of an offloaded parfor: in place of Numba's threaded lowering, the
function calls the C runtime directly to put its arrays on the device, evaluate
the launch plan and launch the kernel, then copy written arrays back."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from typing import TYPE_CHECKING

import numba
from llvmlite import ir as llvm
from numba.core import cgutils, types
from numba.core.typing import signature
from numba.core.typing.builtins import IndexValueType
from numba.parfors.parfor import Parfor

from .. import passes, runtime
from ..abi import CopyIn
from ..errors import UnsupportedError, XpucError
from ..passes import Target
from . import host_parfors
from .body_values import composite_of, scalar_items
from .compiled import CompiledParfor, OffloadTarget, count_kernel_compiled
from .literal_arguments import arguments_of
from .parfor_reductions import Reduction
from .parfor_to_mlir import ParforKernel, kernel_name, translate_parfor
from .runtime_calls import I8P, I32, I64, call_runtime, host_extent, link_runtime
from .shared_hyperplanes import hyperplanes_checked, polynomial_value
from .slice_assignments import elements_meet, elements_meet_elsewhere, same_elements
from .translation import KernelParam, SliceLength
from .user_locations import refused_as_user_code
from .usm import USMArray

if TYPE_CHECKING:  # the MLIR half, loaded by the first compile (passes.__getattr__)
    from ..passes import Lowered, Stage
    from ..passes.launch_plan import KernelLaunch, LaunchPlan


DUMP_DIR_VARIABLE = "XPUC_DUMP_DIR"


def _memory_shared(written, read, alike, own_axis):
    """Whether the elements of ``written`` and ``read`` may meet where
    ``SeparateArrays`` says they must not (``own_axis``: -1 for none).
    Compiled into the host code: it reads where the arrays are, never an
    element."""
    places = (written.ctypes.data, written.shape, written.strides, written.itemsize,
              read.ctypes.data, read.shape, read.strides, read.itemsize)
    if own_axis >= 0:
        return elements_meet_elsewhere(*places, own_axis)
    return elements_meet(*places) and not (alike and same_elements(*places))


def compile_to_spirv(name: str, mlir: str, target: Target,
                     stages: tuple[Stage, ...] | None = None) -> Lowered:
    """Lower a kernel module through ``stages`` (the parfor stages of
    ``target``'s device family unless told), counted in ``kernels_compiled``
    and kept in ``XPUC_DUMP_DIR`` if that is set."""
    dump_dir = os.environ.get(DUMP_DIR_VARIABLE)
    lowered = passes.lower(mlir, target, stages=stages, keep_texts=bool(dump_dir))
    count_kernel_compiled()
    if dump_dir:
        _dump(name, lowered, dump_dir)
    return lowered


def _dump(name: str, lowered: Lowered, directory: str) -> None:
    """Keep every stage of a kernel on disk, to read or to reproduce a failure
    outside xpuc (``spirv-val``, ``spirv-dis``, ``mlir-opt``)."""
    os.makedirs(directory, exist_ok=True)
    digest = hashlib.blake2b(lowered.binary or b"", digest_size=4).hexdigest()
    for stage, text in lowered.all_texts().items():
        with open(os.path.join(directory, f"{name}.{digest}.{stage}.mlir"), "w") as out:
            out.write(text)
    # none for a parfor with nothing to launch
    for binary, suffix in ((lowered.spirv, "spv"), (lowered.ptx, "ptx")):
        if binary:
            with open(os.path.join(directory, f"{name}.{digest}.{suffix}"), "wb") as out:
                out.write(binary)


# the least bytes of an aligned array for which a streaming kernel's launch is
# split in three (launch_aligned): each extra launch costs a few microseconds,
# vector accesses that straddle cache lines about a quarter of the time a
# streaming kernel takes (1 MiB: 50 us at 20 GB/s)
SPLIT_MIN_BYTES = 1 << 20
# the middle launch of a split covers a multiple of this many vectors
ALIGNED_GRANULE = 64


class _HostEmitter:
    def __init__(self, lowerer, kernel: ParforKernel, target: Target) -> None:
        self.lowerer = lowerer
        self.target = target
        self.builder = lowerer.builder
        self.context = lowerer.context
        self.kernel = kernel
        self.typemap = lowerer.fndesc.typemap
        # (var, part) -> (host, bytes)
        self.partials: dict[tuple[str, int], tuple[llvm.Value, llvm.Value]] = {}

    def call(self, entry: str, *args: llvm.Value) -> None:
        call_runtime(self.context, self.builder, entry, *args)

    def host_extent(self, var: str) -> tuple[llvm.Value, llvm.Value, llvm.Value]:
        return host_extent(self.context, self.builder, self.typemap[var],
                           self.lowerer.loadvar(var))

    def array(self, var: str):
        nbtype = self.typemap[var]
        return self.context.make_array(nbtype)(self.context, self.builder,
                                               value=self.lowerer.loadvar(var))

    def check_sizes(self) -> None:
        """Raise, before the launch or the host's copy of the loop, where
        sizes the kernel's body needs equal differ (its SizeChecks)."""
        b = self.builder
        for check in self.kernel.size_checks:
            first, second = (self.size(param) for param in (check.first, check.second))
            differ = b.icmp_signed("!=", first, second)
            if check.stretches:
                differ = b.and_(differ, b.icmp_signed("!=", second, I64(1)))
            with cgutils.if_unlikely(b, differ):
                self.context.call_conv.return_user_exc(b, check.exception, (check.message,))

    def check_separate_arrays(self) -> None:
        """Raise, before the launch or the host's copy of the loop, where two
        arrays whose views one statement of the body stores from one into the
        other share memory (view_order.keep_apart)."""
        for check in self.kernel.separate_arrays:
            arrays = [self.typemap[check.written], self.typemap[check.read]]
            own_axis = -1 if check.own_axis is None else check.own_axis
            meet = self.context.compile_internal(
                self.builder, _memory_shared,
                signature(types.boolean, *arrays, types.boolean, types.int64),
                [self.lowerer.loadvar(check.written), self.lowerer.loadvar(check.read),
                 llvm.Constant(llvm.IntType(1), int(check.alike)), I64(own_axis)])
            with cgutils.if_unlikely(self.builder, meet):
                self.context.call_conv.return_user_exc(self.builder, UnsupportedError,
                                                       (check.message,))

    def size(self, param: KernelParam | SliceLength) -> llvm.Value:
        """The i64 value of an array's dimension or an integer parameter, or
        of the length of a slice of a dimension, its bounds clipped as
        Python clips them (as Numba's ``wrap_index`` does in the body)."""
        if isinstance(param, SliceLength):
            b, extent = self.builder, self.size(param.extent)
            start, stop = (default if bound is None else _clipped(b, b.add(
                polynomial_value(self.lowerer, bound), extent if from_end else I64(0)), extent)
                for bound, from_end, default in zip((param.start, param.stop), param.from_end,
                                                    (I64(0), extent)))
            length = b.sub(stop, start)
            return b.select(b.icmp_signed("<", length, I64(0)), I64(0), length)
        nbtype = self.typemap[param.var]
        if param.kind == "dim":
            return cgutils.unpack_tuple(self.builder, self.array(param.var).shape,
                                        nbtype.ndim)[param.axis]
        return self.context.cast(self.builder, self.lowerer.loadvar(param.var), nbtype,
                                 types.int64)

    def param_values(self) -> list[llvm.Value]:
        """The kernel function's arguments as i64 host values, in order."""
        b = self.builder
        values = []
        arrays: dict[str, llvm.Value] = {}
        for param in self.kernel.params:
            if param.kind == "pointer":  # an array again, for its atomics
                values.append(arrays[param.var])
            elif param.kind == "array" and isinstance(self.typemap[param.var], USMArray):
                # USM of the call's context (placement checked the arguments'
                # queues; the runtime allocated the rest on the call's queue):
                # kernels use it in place, with no runtime call to find that out
                values.append(b.ptrtoint(self.array(param.var).data, I64))
            elif param.kind == "array":
                use = self.kernel.arrays[param.var]
                # an array this function made stays on the device until the
                # host needs it (a time loop's arrays, swapped or not)
                self.call("xpuc_array_resident", b.bitcast(self.array(param.var).meminfo, I8P))
                host, nbytes, first = self.host_extent(param.var)
                device = cgutils.alloca_once(b, I8P)
                copy_in = (CopyIn.OVERWRITTEN if use.fresh
                           else CopyIn.IN if use.reads or use.writes else CopyIn.NONE)
                self.call("xpuc_buffer_acquire", host, nbytes, I32(copy_in), device)
                values.append(b.add(b.ptrtoint(b.load(device), I64), first))
            elif param.kind == "num_threads":
                values.append(self.context.compile_internal(
                    b, _launching_thread_count, signature(types.int64), ()))
            elif param.kind == "partials":
                values.append(self.partials_buffer(param.var, param.axis))
            elif param.kind in ("dim", "stride"):
                ary = self.array(param.var)
                ndim = self.typemap[param.var].ndim
                if param.kind == "dim":
                    values.append(cgutils.unpack_tuple(b, ary.shape, ndim)[param.axis])
                else:
                    stride = cgutils.unpack_tuple(b, ary.strides, ndim)[param.axis]
                    values.append(b.sdiv(stride, ary.itemsize))
            else:
                item = param.axis if param.kind == "tuple_item" else None
                values.append(self.scalar_bits(param.var, param.mlir_type, item))
            if param.kind == "array":
                arrays[param.var] = values[-1]
        return values

    def scalar_bits(self, var: str, mlir_type: str, item: int | None = None) -> llvm.Value:
        """A scalar variable (or item ``item`` of a tuple) as the 64 bits of its
        kernel-argument slot."""
        b = self.builder
        nbtype = self.typemap[var]
        value = self.lowerer.loadvar(var)
        if item is not None:
            nbtype, value = scalar_items(nbtype)[item], b.extract_value(value, item)
        if mlir_type == "index":
            return self.context.cast(b, value, nbtype, types.int64)
        if mlir_type in ("f32", "f64"):
            float_type = types.float32 if mlir_type == "f32" else types.float64
            as_float = self.context.cast(b, value, nbtype, float_type)
            bits = b.bitcast(as_float, llvm.IntType(int(mlir_type[1:])))
            return b.zext(bits, I64) if mlir_type == "f32" else bits
        as_int = self.context.cast(b, value, nbtype, types.int64 if mlir_type != "i8"
                                   else types.uint8)
        return b.zext(as_int, I64) if as_int.type != I64 else as_int

    def run_plan(self, plan: LaunchPlan, params: list[llvm.Value], spirv: bytes,
                 ndim: int) -> None:
        b = self.builder
        values = list(params)
        for op in plan.ops:
            values.append(_emit_host_op(b, op.opcode, [values[i] for i in op.operands], op.attr))
        module = b.module
        spirv_ptr = self.context.insert_const_bytes(module, spirv)
        spirv_hash = runtime.spirv_hash(spirv)
        for launch in plan.launches:
            nargs = len(launch.args)
            slots = cgutils.alloca_once(b, I64, size=max(nargs, 1))
            for k, (value_number, _) in enumerate(launch.args):
                b.store(values[value_number], b.gep(slots, [I32(k)]))
            kinds = cgutils.global_constant(
                module, f"{self.kernel.name}.{launch.kernel_name}.kinds",
                llvm.Constant(llvm.ArrayType(I32, max(nargs, 1)),
                              [I32(kind) for _, kind in launch.args] or [I32(0)]),
            )
            global_range = cgutils.alloca_once(b, I64, size=3)
            # parfor kernels fix no work-group size, the device runtime picks
            # one (passes/gpu_rewrites.index_by_global_ids), unless they run in
            # blocks of their own (a GPU's reduction work-groups)
            local_range = (cgutils.alloca_once(b, I64, size=3) if launch.own_blocks
                           else llvm.Constant(I64.as_pointer(), None))
            for axis in range(3):
                grid, block = values[launch.grid[axis]], values[launch.block[axis]]
                b.store(b.mul(grid, block), b.gep(global_range, [I32(axis)]))
                if launch.own_blocks:
                    b.store(block, b.gep(local_range, [I32(axis)]))
            name = self.context.insert_const_string(module, launch.kernel_name)
            disjoint = None
            for choice in launch.choices:
                holds = llvm.Constant(llvm.IntType(1), 1)
                for position in choice.ones:
                    holds = b.and_(holds, b.icmp_signed(
                        "==", values[launch.args[position][0]], I64(1)))
                if choice.disjoint:
                    if disjoint is None:
                        disjoint = self.runs_disjoint_copy(launch)
                    holds = b.and_(holds, disjoint)
                name = b.select(holds, self.context.insert_const_string(
                    module, choice.kernel_name), name)
            launch_args = (spirv_ptr, I64(len(spirv)), I64(spirv_hash), name, slots,
                           b.bitcast(kinds, I32.as_pointer()), I32(nargs))
            if launch.aligns is not None and ndim == 1:
                self.launch_aligned(launch, launch_args, global_range)
            else:
                self.launch(launch_args, global_range, local_range, ndim)

    def launch(self, launch_args: tuple[llvm.Value, ...], global_range: llvm.Value,
               local_range: llvm.Value, ndim: int) -> None:
        """``xpuc_launch`` of ``launch_args`` (binary, kernel name, argument
        slots and kinds) over ``global_range`` in work-groups of
        ``local_range`` (a null pointer: of the device runtime's choice)."""
        self.call("xpuc_launch", *launch_args, global_range, local_range, I32(ndim))

    def launch_aligned(self, launch: KernelLaunch, launch_args: tuple[llvm.Value, ...],
                       global_range: llvm.Value) -> None:
        """Run a streaming kernel (passes/aligned_lanes.py) over an array of
        at least ``SPLIT_MIN_BYTES`` as three launches, each from its
        ``first`` element: the elements before the first whose address in the
        aligned array is on a cache line, then from that one as many as a
        multiple of ``ALIGNED_GRANULE`` vectors, then the rest. The device's
        vectors of work-items then start on cache lines, and it divides the
        middle range into work-groups of whole vectors (it picks work-group
        sizes that divide the range). Over a
        smaller array, or one whose address is not a multiple of its element
        size, one launch runs them all (the runtime runs nothing for a launch
        of no work-items)."""
        b = self.builder
        array, element_bytes, first = launch.aligns
        count = b.load(global_range)
        slots = launch_args[4]
        address = b.load(b.gep(slots, [I32(array)]))
        line = I64(self.target.cache_line_bytes)
        head = b.udiv(b.urem(b.sub(I64(0), address), line), I64(element_bytes))
        granule = I64(ALIGNED_GRANULE * self.target.vector_lanes)
        splits = b.and_(
            b.and_(b.icmp_unsigned(">=", b.mul(count, I64(element_bytes)), I64(SPLIT_MIN_BYTES)),
                   b.icmp_unsigned("==", b.urem(address, I64(element_bytes)), I64(0))),
            b.icmp_unsigned("<", b.add(head, granule), count))
        head = b.select(splits, head, I64(0))
        rest = b.sub(count, head)
        body = b.select(splits, b.mul(b.udiv(rest, granule), granule), rest)
        for start, size in ((I64(0), head), (head, body), (b.add(head, body), b.sub(rest, body))):
            b.store(size, global_range)
            b.store(start, b.gep(slots, [I32(first)]))
            self.launch(launch_args, global_range, llvm.Constant(I64.as_pointer(), None), 1)

    def runs_disjoint_copy(self, launch: KernelLaunch) -> llvm.Value:
        """Whether to launch the copy of ``launch``'s kernel that assumes its
        arrays disjoint: no array it may write overlaps another of its array
        arguments (compared as host arrays, whose device copies overlap as
        they do; other pointers are the runtime's scratch, of this launch
        alone), and the written arrays' rows are at least a vector long. The
        copy's gain is its vectorized inner loops, and over shorter rows a
        vector loop never runs while its masked remainder costs more than a
        scalar loop (rows of 4 doubles: 20% slower)."""
        b = self.builder
        extents, written = {}, []
        for position, (value_number, _) in enumerate(launch.args):
            param = self.kernel.params[value_number] if value_number < len(
                self.kernel.params) else None
            if param is not None and param.kind == "array":
                start, nbytes, _ = self.host_extent(param.var)
                start = b.ptrtoint(start, I64)
                extents[position] = (start, b.add(start, nbytes))
                if position in launch.written:
                    written.append((position, param.var))
        runs = llvm.Constant(llvm.IntType(1), 1)
        for position, var in written:
            if self.typemap[var].ndim > 0:
                row = cgutils.unpack_tuple(b, self.array(var).shape)[-1]
                runs = b.and_(runs, b.icmp_signed(">=", row, I64(self.target.vector_lanes)))
            start, end = extents[position]
            for other, (other_start, other_end) in extents.items():
                if other != position:
                    overlap = b.and_(b.icmp_unsigned("<", start, other_end),
                                     b.icmp_unsigned("<", other_start, end))
                    runs = b.and_(runs, b.not_(overlap))
        return runs

    def partials_buffer(self, var: str, part: int) -> llvm.Value:
        """A host array for the partial results of a reduction (of part
        ``part`` of an IndexValue one) and its device copy (written by the
        kernel, so nothing to copy in)."""
        b = self.builder
        element = self.context.get_value_type(self.part_types(var)[part])
        count = self.kernel.partial_count
        host = cgutils.alloca_once(b, element, size=count)
        nbytes = I64(count * self.context.get_abi_sizeof(element))
        host_bytes = b.bitcast(host, I8P)
        device = cgutils.alloca_once(b, I8P)
        self.call("xpuc_buffer_acquire", host_bytes, nbytes, I32(CopyIn.NONE), device)
        self.partials[var, part] = (host, nbytes)
        return b.ptrtoint(b.load(device), I64)

    def part_types(self, var: str) -> tuple[types.Type, ...]:
        """What the kernel reduces of a variable: itself, or the parts of an
        IndexValue or a complex number."""
        nbtype = self.carried_type(var)
        return scalar_items(nbtype) if composite_of(nbtype) else (nbtype,)

    def carried_type(self, var: str) -> types.Type:
        """The type the kernel reduces a variable in: a last-assigned
        variable as an IndexValue of (iteration, value)."""
        nbtype = self.typemap[var]
        last_values = {r.var for r in self.kernel.reductions if r.last_value}
        return IndexValueType(nbtype) if var in last_values else nbtype

    def copy_back(self) -> None:
        for use in self.kernel.arrays.values():
            if use.writes and not isinstance(self.typemap[use.var], USMArray):
                host, nbytes, _ = self.host_extent(use.var)
                self.call("xpuc_buffer_release", host, nbytes, I32(1))

    def combine_reductions(self) -> None:
        """Each reduction variable becomes its value before the loop combined
        with the work-items' partial results."""
        for reduction in self.kernel.reductions:
            hosts = []
            for part in range(len(self.part_types(reduction.var))):
                host, nbytes = self.partials[reduction.var, part]
                self.call("xpuc_buffer_release", self.builder.bitcast(host, I8P), nbytes,
                          I32(1))
                hosts.append(host)
            nbtype = self.carried_type(reduction.var)
            partials = hosts[0] if len(hosts) == 1 else self._composites(nbtype, hosts)
            combined = self._combined_pairwise(reduction, nbtype, partials)
            before = self.lowerer.loadvar(reduction.var)
            if reduction.last_value:  # assigned at iteration -1: any later one wins
                before = self.composite(nbtype, [I64(-1), before])
            total = self._combine(reduction, nbtype, before, combined)
            if reduction.last_value:
                total = self.builder.extract_value(total, 1)
            self.lowerer.storevar(total, reduction.var)

    def _combine(self, reduction: Reduction, nbtype: types.Type, left: llvm.Value,
                 right: llvm.Value) -> llvm.Value:
        return self.context.compile_internal(self.builder, reduction.combine,
                                             signature(nbtype, nbtype, nbtype), (left, right))

    def _combined_pairwise(self, reduction: Reduction, nbtype: types.Type,
                           partials: llvm.Value) -> llvm.Value:
        """The partial results combined halves into halves, in place, so that
        a float sum loses no more than log2(partial count) roundings here: of
        ``count`` results, the first ``count // 2`` take in the last ones,
        each its own (the middle one of an odd count waits for a later round)."""
        b = self.builder
        count = self.kernel.partial_count
        while count > 1:
            half = count // 2
            with cgutils.for_range(b, I64(half)) as loop:
                left = b.gep(partials, [loop.index])
                right = b.gep(partials, [b.add(loop.index, I64(count - half))])
                b.store(self._combine(reduction, nbtype, b.load(left), b.load(right)), left)
            count -= half
        return b.load(partials)

    def _composites(self, nbtype: types.Type, parts: list[llvm.Value]) -> llvm.Value:
        """An array of the IndexValue or complex structs whose parts the kernel
        wrote to the arrays ``parts``."""
        b = self.builder
        made = cgutils.alloca_once(b, self.context.get_value_type(nbtype),
                                   size=self.kernel.partial_count)
        with cgutils.for_range(b, I64(self.kernel.partial_count)) as loop:
            values = [b.load(b.gep(part, [loop.index])) for part in parts]
            b.store(self.composite(nbtype, values), b.gep(made, [loop.index]))
        return made

    def composite(self, nbtype: types.Type, parts: list[llvm.Value]) -> llvm.Value:
        """The IndexValue or complex struct of ``parts``."""
        made = cgutils.create_struct_proxy(nbtype)(self.context, self.builder)
        for name, value in zip(composite_of(nbtype).PARTS, parts):
            setattr(made, name, value)
        return made._getvalue()


def _clipped(b: llvm.IRBuilder, bound: llvm.Value, extent: llvm.Value) -> llvm.Value:
    """A slice's bound within ``[0, extent]``, counted from the end where negative."""
    from_end = b.add(bound, extent)
    return b.select(b.icmp_signed("<", bound, I64(0)),
                    b.select(b.icmp_signed("<", from_end, I64(0)), I64(0), from_end),
                    b.select(b.icmp_signed(">", bound, extent), extent, bound))


def _launching_thread_count() -> int:
    return numba.get_num_threads()


def _emit_host_op(b: llvm.IRBuilder, opcode: str, args: list[llvm.Value],
                  attr: int | str | None) -> llvm.Value:
    """One launch-plan op on i64 values (comparisons give 0 or 1)."""
    if opcode == "const":
        return I64(int(attr))
    if opcode == "copy":
        return args[0]
    if opcode == "select":
        cond = b.icmp_signed("!=", args[0], I64(0))
        return b.select(cond, args[1], args[2])
    if opcode == "cmp":
        predicate = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}
        unsigned = {"ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}
        if attr in unsigned:
            cond = b.icmp_unsigned(unsigned[attr], *args)
        else:
            cond = b.icmp_signed(predicate[attr], *args)
        return b.zext(cond, I64)
    lhs, rhs = args
    if opcode in ("min", "max"):
        cond = b.icmp_signed("<" if opcode == "min" else ">", lhs, rhs)
        return b.select(cond, lhs, rhs)
    if opcode == "ceildiv":  # for the non-negative sizes the plan divides
        return b.sdiv(b.sub(b.add(lhs, rhs), I64(1)), rhs)
    if opcode == "floordiv":
        quotient = b.sdiv(lhs, rhs)
        inexact = b.icmp_signed("!=", b.mul(quotient, rhs), lhs)
        signs_differ = b.icmp_signed("<", b.xor(lhs, rhs), I64(0))
        return b.select(b.and_(inexact, signs_differ), b.sub(quotient, I64(1)), quotient)
    simple = {"add": b.add, "sub": b.sub, "mul": b.mul, "div": b.sdiv, "rem": b.srem}
    if opcode not in simple:
        raise XpucError(f"host lowering: launch-plan op '{opcode}' has no host translation")
    return simple[opcode](lhs, rhs)


def _with_fast_math(target: Target, fastmath) -> Target:
    """``target`` with the fastmath flags of the function being compiled
    (Numba's ``FastMathOptions``, false without any), which its kernels may
    use (passes/fast_math.py)."""
    return dataclasses.replace(target, fast_math=tuple(sorted(fastmath.flags))) \
        if fastmath else target


def lower_parfor(offload: OffloadTarget, lowerer, parfor: Parfor) -> None:
    """Numba's hook for lowering ``parfor`` (``Parfor.lowerer``)."""
    link_runtime()
    fndesc = lowerer.fndesc
    ordinal = getattr(lowerer, "_xpuc_parfor_count", 0)
    lowerer._xpuc_parfor_count = ordinal + 1
    # copied before translation, which must see the parfor as Numba made it
    target = _with_fast_math(offload.target, lowerer.context.fastmath)
    on_host = host_parfors.can_run_on_host(parfor, fndesc.typemap, fndesc.calltypes)
    host_twin = host_parfors.sequential_copy(parfor, fndesc.calltypes) if on_host else None
    with refused_as_user_code(parfor.loc), arguments_of(lowerer.func_ir):
        kernel = translate_parfor(parfor, fndesc.typemap, fndesc.calltypes,
                                  kernel_name(fndesc.qualname, ordinal), target)
    try:
        lowered = compile_to_spirv(kernel.name, kernel.mlir, target)
    except UnsupportedError as error:  # what the device cannot run (no fp64)
        raise UnsupportedError(f"{parfor.loc.filename}:{parfor.loc.line}: {error}") from None
    offload.compiled.setdefault(tuple(fndesc.argtypes), []).append(
        CompiledParfor(kernel, lowered))
    if offload.queue is not None and lowered.binary:  # built while Numba compiles the host code
        runtime.build_ahead(offload.queue, [lowered.binary])

    for inst in (*parfor.init_block.body, *kernel.host_bounds):
        lowerer.lower_inst(inst)

    # before the choice of side: the host's copy of the loop would raise
    # Numba's own size checks, in other words than the kernel's
    checks = _HostEmitter(lowerer, kernel, target)
    checks.check_sizes()
    checks.check_separate_arrays()

    def launch() -> None:
        emitter = _HostEmitter(lowerer, kernel, target)
        emitter.run_plan(lowered.plan, emitter.param_values(), lowered.binary, kernel.ndim)
        emitter.copy_back()
        emitter.combine_reductions()

    with hyperplanes_checked(lowerer, kernel.read_hyperplanes):
        if host_twin is None:
            launch()
        else:
            host_parfors.lower_with_host_choice(lowerer, parfor, host_twin, kernel.name,
                                                kernel.arrays.values(), launch)
