"""xpuc's exception classes (SPEC: all importable from ``xpuc``, as is
``ExecutionPlacementError``, the array library's class)."""

from . import array_library

__all__ = [
    "ConflictingOptionsError",
    "DeviceError",
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


def placement_error(message: str) -> Exception:
    """An ``ExecutionPlacementError`` (the array library's class, SPEC) saying ``message``."""
    return array_library.placement_error_class()(message)
