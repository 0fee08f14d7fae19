"""``xpuc.private``: arrays of the work-item's own in explicit kernels."""

from .frontend.kernel_intrinsics import private_array as array

__all__ = ["array"]
