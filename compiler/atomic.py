"""``xpuc.atomic``: atomic updates of array elements in explicit kernels."""

from .frontend.kernel_intrinsics import atomic_add as add

__all__ = ["add"]
