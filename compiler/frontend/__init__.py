"""From a function's Numba IR to kernels and the host code that launches them."""

from . import numpy_functions  # noqa: F401  (importing registers the overloads)
from .host_lowering import CompiledParfor, OffloadTarget, kernels_compiled
from .pipeline import CpuCompiler, compiler_for
from .runtime_calls import KernelFault, link_runtime

__all__ = ["CompiledParfor", "CpuCompiler", "KernelFault", "OffloadTarget", "compiler_for",
           "kernels_compiled", "link_runtime"]
