"""From a function's Numba IR to kernels and the host code that launches them."""

from .host_lowering import CompiledParfor, KernelFault, OffloadTarget, kernels_compiled
from .pipeline import compiler_for

__all__ = ["CompiledParfor", "KernelFault", "OffloadTarget", "compiler_for", "kernels_compiled"]
