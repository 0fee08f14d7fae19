"""``xpuc.local``: work-group local memory in explicit kernels."""

from .frontend.kernel_intrinsics import local_array as array

__all__ = ["array"]
