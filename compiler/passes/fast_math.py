"""Numba's ``fastmath`` option, carried to a function's kernels.

``xpuc.jit(fastmath=True)`` (or a set of LLVM's flags, ``{"contract",
"reassoc"}``, as Numba takes them) allows what it allows Numba's host code:
contracting a multiply and an add into one fused multiply-add, reassociating
sums, assuming no NaN or infinity. Without it a kernel rounds op by op as
NumPy does. The flags ride on the Target (``Target.fast_math``), so that each
stage sees them as data: the nvvm stage writes them onto every float op of
the kernels (``stamp``), which LLVM's NVPTX back end reads (a ``contract``
multiply feeding a ``contract`` add becomes an ``fma``). SPIR-V has no such
flags on its operations: a SYCL kernel forbids contraction as a whole
(spirv_rewrites.forbid_contraction) unless ``contract`` allows it
(``allows_contraction``), and its loop's float sums are left to the device's
compiler to reorder where ``reassoc`` allows it (``allows_reassociation``;
see ordered_reductions.py).
"""

from __future__ import annotations

import functools
import operator

from mlir import ir
from mlir.dialects import arith

from .ir_queries import gpu_modules, nested_ops

# Numba's and LLVM's names, which are arith's too ("fast": all of them)
FLAGS = frozenset({"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"})


def stamp(module: ir.Module, flags: tuple[str, ...]) -> None:
    """Give every float op of ``module``'s kernels (those with fastmath flags:
    arith's float ops and math's functions) the flags ``flags``."""
    combined = functools.reduce(operator.or_, (arith.FastMathFlags[flag] for flag in flags))
    attribute = ir.AttrBuilder.get("Arith_FastMathAttr")(combined, ir.Context.current)
    for gpu_module in gpu_modules(module):
        for op in nested_ops(gpu_module):
            if "fastmath" in op.attributes:
                op.attributes["fastmath"] = attribute


def allows_reassociation(flags: tuple[str, ...]) -> bool:
    """Whether ``flags`` let a float sum be reordered."""
    return "fast" in flags or "reassoc" in flags


def allows_contraction(flags: tuple[str, ...]) -> bool:
    """Whether ``flags`` let a multiply and an add be fused."""
    return "fast" in flags or "contract" in flags
