"""xpuc's exception classes (SPEC: all importable from ``xpuc``, as is
``ExecutionPlacementError``, the array library's class)."""

from . import array_library

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


class ExecutionPlacementError(XpucError):
    """Arrays that leave a call's device ambiguous, where no USM array
    library is installed (a machine with an NVIDIA GPU alone); elsewhere
    ``xpuc.ExecutionPlacementError`` is the library's class."""


def placement_error_class() -> type[Exception]:
    """``xpuc.ExecutionPlacementError``: the array library's class (SPEC),
    or, where there is none, xpuc's own."""
    try:
        return array_library.placement_error_class()
    except ImportError:
        return ExecutionPlacementError


def placement_error(message: str) -> Exception:
    """An ``xpuc.ExecutionPlacementError`` saying ``message``."""
    return placement_error_class()(message)
