"""The MLIR half of xpuc: a parfor's module, from the frontend's linalg stage
to a SPIR-V binary and the launch plan the host runs it with."""

import contextlib
import ctypes
import importlib
import importlib.util
import os
import sys
import threading

from .target import Target

# Everything else here needs the MLIR bindings, which take 0.1 s to load: a
# process that only runs compiled code (a warm start from the disk cache) never
# loads them. Each name is imported from its module when first used (PEP 562).
_LAZY = {
    "HostOp": "launch_plan", "KernelLaunch": "launch_plan", "LaunchPlan": "launch_plan",
    **dict.fromkeys(("CUDA_KERNEL_STAGES", "CUDA_STAGES", "KERNEL_STAGES", "STAGE_TABLES",
                     "STAGES", "Lowered", "Stage", "StageInput", "lower", "read_stage_input",
                     "stages_for"), "stages"),
}


_background_load: threading.Thread | None = None


def load_in_background() -> None:
    """Start importing the MLIR half in a thread, where a compile that needs it
    begins: most of its 0.1 s is the bindings' libraries being loaded, which
    runs beside Numba's work (the dynamic linker's part without the GIL,
    ``_open_bindings_library``) until the first parfor is lowered, whose
    import of it waits for the thread."""
    global _background_load
    if _background_load is None and f"{__name__}.stages" not in sys.modules:
        _background_load = threading.Thread(target=_load_stages, name="xpuc-load-mlir",
                                            daemon=True)
        _background_load.start()


def _load_stages() -> None:
    # where libc's dlopen cannot be reached, the import opens the library itself
    with contextlib.suppress(Exception):
        _open_bindings_library()
    # an import that fails here fails again, with its error, where lowering imports it
    with contextlib.suppress(Exception):
        importlib.import_module(".stages", __name__)


# The bindings' C API library, with the libLLVM it links: 200 MB of C++ that
# calls nothing of Python's, the most of their load.
_BINDINGS_LIBRARY = "libMLIRPythonCAPI.so"


def _open_bindings_library() -> None:
    """Have the dynamic linker map and initialize the bindings' C API library
    through libc's ``dlopen``, a foreign call that releases the GIL: Python's
    import of an extension module (and ``ctypes.CDLL``) holds it throughout,
    40 ms and more in which no other thread runs Python. The import of the
    bindings' extension then finds the library loaded."""
    spec = importlib.util.find_spec("mlir")
    if spec is None or not spec.submodule_search_locations:
        return
    path = os.path.join(next(iter(spec.submodule_search_locations)), "_mlir_libs",
                        _BINDINGS_LIBRARY)
    dlopen = ctypes.CDLL(None).dlopen
    dlopen.argtypes, dlopen.restype = (ctypes.c_char_p, ctypes.c_int), ctypes.c_void_p
    # the flags Python's import opens it with; left open, as the import leaves it
    dlopen(os.fsencode(path), sys.getdlopenflags())


def _finish_background_load() -> None:
    # a process forked mid-import would find the modules' import locks held by
    # a thread it does not have, and wait for them forever
    if _background_load is not None:
        _background_load.join()


os.register_at_fork(before=_finish_background_load)


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)


__all__ = ["CUDA_KERNEL_STAGES", "CUDA_STAGES", "KERNEL_STAGES", "STAGES", "STAGE_TABLES",
           "HostOp", "KernelLaunch", "LaunchPlan", "Lowered", "Stage", "StageInput", "Target",
           "load_in_background", "lower", "read_stage_input", "stages_for"]
