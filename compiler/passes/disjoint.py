"""Copies of kernels that may assume that their arrays do not overlap.

A kernel whose work-items each walk a row of their own runs unvectorized across
work-items on a CPU device (``lane_strides.walks_rows``), which leaves its
inner loops to the device compiler's loop vectorizer. That vectorizes a loop
storing into one array and loading from another only if it knows that the two
do not overlap, which a SPIR-V kernel says with the ``FuncParamAttr NoAlias``
of its pointer parameters: a 5-point stencil over rows ran 2.4 ms without it,
1.9 ms with it. Arguments may overlap (``f(a, a)``, two views of one array), so
such a kernel, when it stores in an innermost loop, gets a copy,
``<name>_disjoint``, whose memref arguments are declared disjoint. The launch
plan names the copy and the arguments the kernel may write, and the host
launches the copy only when no written array overlaps another argument (arrays
only read may overlap each other).

MLIR declares a SPIR-V pointer parameter disjoint with the ``Restrict``
decoration, which Intel's OpenCL CPU compiler ignores (the stencil ran no
faster with it); it reads ``FuncParamAttr NoAlias``, which MLIR cannot
express, so ``declare_noalias`` adds it to the binary.
"""

from __future__ import annotations

import array

from mlir import ir

from .ir_queries import copy_kernel, ops_named, symbol_name
from .lane_strides import WALKS_ROWS, in_innermost_loops

# on a kernel: the name of its copy; on the copy: that its arrays are disjoint
DISJOINT_VARIANT, DISJOINT_ARGS = "xpuc.disjoint_variant", "xpuc.disjoint_args"


def _memref_arguments(kernel: ir.Operation) -> list[ir.BlockArgument]:
    return [arg for arg in kernel.regions[0].blocks[0].arguments
            if isinstance(arg.type, ir.MemRefType)]


def _takes_atomic_pointers(kernel: ir.Operation) -> bool:
    """Whether ``kernel`` takes an array a second time, as the SPIR-V pointer
    its atomics use: that pointer aliases the array's memref, which the copy
    would declare disjoint from it."""
    return any(str(arg.type).startswith("!spirv.ptr")
               for arg in kernel.regions[0].blocks[0].arguments)


def written_arguments(kernel: ir.Operation) -> list[int]:
    """Positions of the memref arguments of ``kernel`` (a gpu.func) that it may
    write: all but those used only as the memref of loads."""
    return [arg.arg_number for arg in _memref_arguments(kernel)
            if any(use.owner.operation.name != "memref.load" or use.operand_number != 0
                   for use in arg.uses)]


def _writes_in_innermost_loops(kernel: ir.Operation) -> bool:
    """Whether ``kernel`` may write an argument inside an innermost loop, the
    loops whose vectorizing a possible overlap prevents."""
    arguments = kernel.regions[0].blocks[0].arguments
    writes = [use.owner.operation for position in written_arguments(kernel)
              for use in arguments[position].uses]
    return any(in_innermost_loops(writes, kernel))


def add_disjoint_variants(module: ir.Module) -> None:
    """Give each kernel that ``WALKS_ROWS``, takes more than one array and may
    write one in an innermost loop a copy with the unit attribute
    ``DISJOINT_ARGS``, named on the kernel by ``DISJOINT_VARIANT``."""
    for kernel in ops_named(module.operation, "gpu.func"):
        if (WALKS_ROWS not in kernel.attributes or len(_memref_arguments(kernel)) < 2
                or not _writes_in_innermost_loops(kernel) or _takes_atomic_pointers(kernel)):
            continue
        name = f"{symbol_name(kernel)}_disjoint"
        copy_kernel(kernel, name).attributes[DISJOINT_ARGS] = ir.UnitAttr.get()
        kernel.attributes[DISJOINT_VARIANT] = ir.StringAttr.get(name)


def disjoint_variant(kernel: ir.Operation) -> str | None:
    """The name of the copy ``add_disjoint_variants`` made of ``kernel``."""
    if DISJOINT_VARIANT not in kernel.attributes:
        return None
    return ir.StringAttr(kernel.attributes[DISJOINT_VARIANT]).value


def disjoint_kernels(module: ir.Module) -> list[str]:
    """The names of the copies ``add_disjoint_variants`` made."""
    return [symbol_name(kernel) for kernel in ops_named(module.operation, "gpu.func")
            if DISJOINT_ARGS in kernel.attributes]


def declare_restrict(module: ir.Module, kernels: list[str]) -> None:
    """Decorate the pointer parameters of ``kernels`` (SPIR-V functions by
    now) ``Restrict``."""
    restrict = ir.DictAttr.get({"spirv.decoration": ir.Attribute.parse(
        "#spirv.decoration<Restrict>")})
    for kernel in ops_named(module.operation, "spirv.func"):
        if symbol_name(kernel) not in kernels:
            continue
        arguments = kernel.regions[0].blocks[0].arguments
        kernel.attributes["arg_attrs"] = ir.ArrayAttr.get([
            restrict if str(arg.type).startswith("!spirv.ptr") else ir.DictAttr.get({})
            for arg in arguments])


# SPIR-V's numbers (the specification's "Binary Form")
_OP_DECORATE, _OP_FUNCTION_PARAMETER = 71, 55
_DECORATION_RESTRICT, _DECORATION_FUNC_PARAM_ATTR, _NO_ALIAS = 19, 38, 4
_HEADER_WORDS = 5


def declare_noalias(spirv: bytes) -> bytes:
    """``spirv`` with ``FuncParamAttr NoAlias`` next to each ``Restrict`` of a
    function parameter. The binary is in this machine's byte order (MLIR
    wrote it here)."""
    words = array.array("I", spirv)
    instructions = []
    offset = _HEADER_WORDS
    while offset < len(words):
        count = words[offset] >> 16
        instructions.append(words[offset:offset + count])
        offset += count
    parameters = {ins[2] for ins in instructions if ins[0] & 0xFFFF == _OP_FUNCTION_PARAMETER}
    out = words[:_HEADER_WORDS]
    for ins in instructions:
        out.extend(ins)
        if (ins[0] & 0xFFFF == _OP_DECORATE and ins[2] == _DECORATION_RESTRICT
                and ins[1] in parameters):
            out.extend([4 << 16 | _OP_DECORATE, ins[1], _DECORATION_FUNC_PARAM_ATTR, _NO_ALIAS])
    return out.tobytes()
