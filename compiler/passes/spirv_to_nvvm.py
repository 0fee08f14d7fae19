"""The nvvm stage's translation of the spirv-dialect ops the frontend writes
into kernels: a CUDA device's lowering of what the SYCL tail serializes as
it is.

The frontend writes work-group (local) arrays, atomics, barriers, fences and
the work-group product in the spirv dialect (``dialects/spirv.py``), because
upstream MLIR has no op of a higher dialect that the SPIR-V conversion lowers
to them for OpenCL. This table gives each of those ops its CUDA meaning, one
rule per op name, before convert-gpu-to-nvvm runs: pointers become ``llvm.ptr``
(a Workgroup one in shared memory, address space 3; a CrossWorkgroup one the
kernel's generic pointer argument), atomics ``llvm.atomicrmw`` /
``llvm.cmpxchg``, barriers ``gpu.barrier`` and products ``gpu.all_reduce mul``
(which convert-gpu-to-nvvm lowers), fences ``llvm.fence``. An op with no rule
is refused by name: the conversion would fail on it, and a failure inside the
MLIR bindings can end the process rather than raise.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mlir import ir
from mlir.dialects import gpu, llvm

from ..errors import UnsupportedError
from .ir_queries import nested_ops, ops_named, source_line, symbol_name
from .nvvm_rewrites import retype_kernel_arguments

# address space of a SPIR-V storage class's pointers: CrossWorkgroup memory is
# what the kernel's array arguments point to, generic pointers (as the bare
# memref pointers convert-gpu-to-nvvm gives them are)
_ADDRESS_SPACES = {"CrossWorkgroup": 0, "Workgroup": 3}
# LLVM's NVPTX synchronization scope of a SPIR-V scope
_SCOPES = {"Workgroup": "block", "Device": "device"}
_DYNAMIC_INDEX = -(2 ** 31)  # a GEP's rawConstantIndices entry taken from its operands

_POINTER = re.compile(r"!spirv\.ptr<(?P<pointee>.+), (?P<storage>\w+)>")
_ARRAY = re.compile(r"!spirv\.array<(?P<count>\d+) x (?P<element>.+)>")

_Rule = Callable[[ir.Operation], None]
_RULES: dict[str, _Rule] = {}


def _rule(*names: str) -> Callable[[_Rule], _Rule]:
    def register(fn: _Rule) -> _Rule:
        for name in names:
            _RULES[name] = fn
        return fn

    return register


def spirv_ops_to_llvm(module: ir.Module) -> None:
    """Translate every spirv op of the module's kernels (and their pointer
    arguments, an array passed again for its atomics) by the op's rule."""
    for kernel in ops_named(module.operation, "gpu.func"):
        for op in nested_ops(kernel):
            if op.name.startswith("spirv.") and op.name not in _RULES:
                where = source_line(op.location)
                raise UnsupportedError(
                    f"the kernel uses {op.name}{f' (at {where})' if where else ''}, "
                    "which has no CUDA lowering")
    # an array passed again as a pointer for its atomics (a parfor's launch
    # passes a SPIR-V pointer of the host code)
    retype_kernel_arguments(module, _llvm_pointer, _unrealized_cast)
    for op in nested_ops(module.operation):
        if op.name in _RULES:
            with op.location, ir.InsertionPoint(op):
                _RULES[op.name](op)


def _pointer_parts(value_type: ir.Type) -> tuple[str, str] | None:
    """(pointee, storage class) of a ``!spirv.ptr`` type, as MLIR prints
    them (the spirv types have no Python bindings); None for other types."""
    found = _POINTER.fullmatch(str(value_type))
    return (found["pointee"], found["storage"]) if found else None


def _llvm_pointer(value_type: ir.Type) -> ir.Type:
    """The ``llvm.ptr`` a ``!spirv.ptr`` becomes; other types as they are."""
    parts = _pointer_parts(value_type)
    if parts is None:
        return value_type
    return llvm.PointerType.get(_ADDRESS_SPACES[parts[1]])


def _pointee(value_type: ir.Type) -> ir.Type:
    return ir.Type.parse(_pointer_parts(value_type)[0])


def _unrealized_cast(value_type: ir.Type, value: ir.Value) -> ir.Value:
    """``value`` as a ``value_type`` for the host code's launches, which are
    only read for the launch plan, never lowered: a cast nothing lowers does."""
    return ir.Operation.create("builtin.unrealized_conversion_cast", results=[value_type],
                               operands=[value]).results[0]


def _replace(op: ir.Operation, value: ir.Value | None) -> None:
    if value is not None:
        op.results[0].replace_all_uses_with(value)
    op.erase()


@_rule("spirv.GlobalVariable")
def _global_variable(op: ir.Operation) -> None:
    """A local array: a shared-memory array of the module."""
    array = _ARRAY.fullmatch(_pointer_parts(ir.TypeAttr(op.attributes["type"]).value)[0])
    element = ir.Type.parse(array["element"])
    array_type = ir.Type.parse(f"!llvm.array<{array['count']} x {element}>")
    llvm.GlobalOp(array_type, symbol_name(op), ir.Attribute.parse("#llvm.linkage<internal>"),
                  addr_space=_ADDRESS_SPACES["Workgroup"])
    op.erase()


@_rule("spirv.mlir.addressof")
def _address_of(op: ir.Operation) -> None:
    variable = ir.FlatSymbolRefAttr(op.attributes["variable"]).value
    _replace(op, llvm.AddressOfOp(_llvm_pointer(op.results[0].type), variable).result)


@_rule("spirv.AccessChain", "spirv.PtrAccessChain")
def _element_pointer(op: ir.Operation) -> None:
    """The pointer to element ``i`` (the one index) of an array or from a pointer."""
    result_type = op.results[0].type
    indices = ir.DenseI32ArrayAttr.get([_DYNAMIC_INDEX])
    _replace(op, llvm.GEPOp(_llvm_pointer(result_type), op.operands[0], [op.operands[-1]],
                            indices, _pointee(result_type), None).result)


@_rule("spirv.Bitcast")
def _bitcast(op: ir.Operation) -> None:
    """A pointer to a float as one to its bits: llvm's pointers have no pointee."""
    _replace(op, op.operands[0])


@_rule("spirv.Load")
def _load(op: ir.Operation) -> None:
    _replace(op, llvm.LoadOp(op.results[0].type, op.operands[0]).result)


@_rule("spirv.Store")
def _store(op: ir.Operation) -> None:
    llvm.StoreOp(op.operands[1], op.operands[0])
    op.erase()


_ATOMICS = {
    "spirv.AtomicIAdd": llvm.AtomicBinOp.add, "spirv.AtomicISub": llvm.AtomicBinOp.sub,
    "spirv.AtomicSMin": llvm.AtomicBinOp.min, "spirv.AtomicUMin": llvm.AtomicBinOp.umin,
    "spirv.AtomicSMax": llvm.AtomicBinOp.max, "spirv.AtomicUMax": llvm.AtomicBinOp.umax,
    "spirv.AtomicAnd": llvm.AtomicBinOp._and, "spirv.AtomicOr": llvm.AtomicBinOp._or,
    "spirv.AtomicXor": llvm.AtomicBinOp._xor, "spirv.AtomicExchange": llvm.AtomicBinOp.xchg,
}


def _scope(op: ir.Operation, attribute: str) -> str:
    """The NVPTX synchronization scope of the op's SPIR-V scope attribute."""
    return _SCOPES[str(op.attributes[attribute]).removeprefix("#spirv.scope<").rstrip(">")]


@_rule(*_ATOMICS)
def _atomic(op: ir.Operation) -> None:
    """SPIR-V's atomics have no memory order (``<None>``): monotonic ones."""
    _replace(op, llvm.AtomicRMWOp(_ATOMICS[op.name], op.operands[0], op.operands[1],
                                  llvm.AtomicOrdering.monotonic,
                                  syncscope=_scope(op, "memory_scope")).result)


@_rule("spirv.AtomicCompareExchange")
def _compare_exchange(op: ir.Operation) -> None:
    """SPIR-V's operands are (pointer, new value, expected), llvm's (pointer,
    expected, new value); both give the value held before."""
    pointer, desired, expected = op.operands
    exchanged = llvm.AtomicCmpXchgOp(pointer, expected, desired, llvm.AtomicOrdering.monotonic,
                                     llvm.AtomicOrdering.monotonic,
                                     syncscope=_scope(op, "memory_scope"))
    _replace(op, llvm.ExtractValueOp(op.results[0].type, exchanged.result, [0]).result)


@_rule("spirv.ControlBarrier")
def _barrier(op: ir.Operation) -> None:
    """A work-group barrier: CUDA's ``__syncthreads``, which orders the block's
    shared and global memory accesses, whatever memories the fence names."""
    gpu.BarrierOp()
    op.erase()


@_rule("spirv.MemoryBarrier")
def _fence(op: ir.Operation) -> None:
    sequential = "SequentiallyConsistent" in str(op.attributes["memory_semantics"])
    ordering = llvm.AtomicOrdering.seq_cst if sequential else llvm.AtomicOrdering.acq_rel
    llvm.FenceOp(ordering, syncscope=_scope(op, "memory_scope"))
    op.erase()


@_rule("spirv.KHR.GroupFMul", "spirv.KHR.GroupIMul")
def _group_product(op: ir.Operation) -> None:
    """The work-group product, which gpu.all_reduce's NVVM lowering computes
    (its SPIR-V conversion has none)."""
    _replace(op, gpu.AllReduceOp(op.operands[0], op=gpu.AllReduceOperation.MUL,
                                 uniform=True).result)
