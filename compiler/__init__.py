"""xpuc: offload the parfors Numba finds in a function to a SYCL device."""

import importlib
import warnings

from ._environment import configure_opencl_loader

configure_opencl_loader()

# dpctl 0.21 deprecates dpctl.tensor, its stack's USM array type (array_library.py)
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"dpctl(\..*)?")

from . import errors, runtime  # noqa: E402
from .device import (  # noqa: E402
    device_context,
    get_current_queue,
    offload_to,
    set_default_device,
)
from .dispatcher import JitFunction, jit  # noqa: E402
from .errors import (  # noqa: E402
    ConflictingOptionsError,
    DeviceError,
    UnsupportedError,
    XpucError,
)
from .frontend import kernels_compiled  # noqa: E402
from .placement import asarray  # noqa: E402

__version__ = "0.1.0"


def stats() -> dict[str, int]:
    """Counters since the last ``reset_stats()``."""
    counters = runtime.stats()
    counters["kernels_compiled"] = kernels_compiled() - _compiled_at_reset
    return counters


def reset_stats() -> None:
    global _compiled_at_reset
    runtime.reset_stats()
    _compiled_at_reset = kernels_compiled()


_compiled_at_reset = 0


# The explicit-kernel API, imported (with the compiler it needs) when first
# used: a process that runs cached jit functions never imports the compiler.
# Submodules are imported by name; the others are names of these modules.
_KERNEL_API = {
    "atomic": None,
    "group": None,
    "kernel_api": None,
    "local": None,
    "private": None,
    "KernelFunction": ".explicit_kernels",
    "NdRange": ".explicit_kernels",
    "call_kernel": ".kernel_api",
    "kernel": ".explicit_kernels",
    "get_global_id": ".frontend.kernel_intrinsics",
    "get_global_size": ".frontend.kernel_intrinsics",
    "get_group_id": ".frontend.kernel_intrinsics",
    "get_local_id": ".frontend.kernel_intrinsics",
    "get_local_size": ".frontend.kernel_intrinsics",
    "GLOBAL_MEM_FENCE": ".frontend.kernel_work_group",
    "LOCAL_MEM_FENCE": ".frontend.kernel_work_group",
    "atomic_fence": ".frontend.kernel_work_group",
    "barrier": ".frontend.kernel_work_group",
    "mem_fence": ".frontend.kernel_work_group",
}


def __getattr__(name: str) -> object:
    # PEP 562: ExecutionPlacementError is the array library's class, imported
    # (with all of dpnp, on dpnp's stack) when first used, not with xpuc
    if name == "ExecutionPlacementError":
        return errors.placement_error_class()
    if name in _KERNEL_API:
        module = _KERNEL_API[name]
        if module is None:
            return importlib.import_module(f".{name}", __name__)
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value  # found directly from now on
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "GLOBAL_MEM_FENCE",
    "LOCAL_MEM_FENCE",
    "ConflictingOptionsError",
    "DeviceError",
    "ExecutionPlacementError",
    "JitFunction",
    "KernelFunction",
    "NdRange",
    "UnsupportedError",
    "XpucError",
    "asarray",
    "atomic",
    "atomic_fence",
    "barrier",
    "call_kernel",
    "device_context",
    "get_current_queue",
    "get_global_id",
    "get_global_size",
    "get_group_id",
    "get_local_id",
    "get_local_size",
    "group",
    "jit",
    "kernel",
    "kernel_api",
    "local",
    "mem_fence",
    "offload_to",
    "private",
    "reset_stats",
    "set_default_device",
    "stats",
]
