"""xpuc: offload the parfors Numba finds in a function to a SYCL device."""

import warnings

from ._environment import configure_opencl_loader

configure_opencl_loader()

# dpctl 0.21 deprecates dpctl.tensor, its stack's USM array type (array_library.py)
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"dpctl(\..*)?")

from . import (  # noqa: E402
    atomic,
    errors,
    group,
    local,
    private,
    runtime,  # noqa: E402
)
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
from .frontend.kernel_intrinsics import (  # noqa: E402
    get_global_id,
    get_global_size,
    get_group_id,
    get_local_id,
    get_local_size,
)
from .frontend.kernel_work_group import (  # noqa: E402
    GLOBAL_MEM_FENCE,
    LOCAL_MEM_FENCE,
    atomic_fence,
    barrier,
    mem_fence,
)
from .kernel import KernelFunction, NdRange, kernel  # noqa: E402
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


def __getattr__(name: str) -> object:
    # PEP 562: ExecutionPlacementError is the array library's class, imported
    # (with all of dpnp, on dpnp's stack) when first used, not with xpuc
    if name == "ExecutionPlacementError":
        return errors.placement_error_class()
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
    "local",
    "mem_fence",
    "offload_to",
    "private",
    "reset_stats",
    "set_default_device",
    "stats",
]
