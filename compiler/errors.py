"""xpuc's exception classes (SPEC: all importable from ``xpuc``)."""

from .array_library import ExecutionPlacementError

__all__ = [
    "ConflictingOptionsError",
    "DeviceError",
    "ExecutionPlacementError",
    "UnsupportedError",
    "XpucError",
]


class XpucError(Exception):
    """Base of xpuc's own errors."""


class UnsupportedError(XpucError):
    """A construct in a parfor that xpuc cannot offload."""


class ConflictingOptionsError(XpucError):
    """Options that contradict offload (``parallel=False`` on an offloaded call)."""


class DeviceError(XpucError):
    """A kernel build or launch failed on the device."""
