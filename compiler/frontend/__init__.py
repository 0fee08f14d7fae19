"""From a function's Numba IR to kernels and the host code that launches them.

Importing the package loads what running compiled code needs (the runtime's
calls, USM and CUDA array types); the compiler itself (Numba pipelines, the
parfors' lowering, the MLIR rules) is imported by the first compile, through
``CPU_PIPELINE`` and ``offload_pipeline``, so that a process whose functions
all load from the cache never imports it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import passes
from .compiled import CompiledParfor, OffloadTarget, kernels_compiled
from .runtime_calls import KernelFault, link_runtime

if TYPE_CHECKING:
    from collections.abc import Callable

    from numba.core.compiler import CompilerBase


def load_compiler() -> None:
    """Import the compiler: its modules register Numba overloads, typing of
    the kernel API and rules, all of which must be in place before Numba's
    typing context refreshes at the start of a compile."""
    from . import kernel_to_mlir, numpy_functions, pipeline  # noqa: F401


class LazyPipeline:
    """A Numba pipeline class, made (with the compiler imported) when Numba
    first compiles with it: Numba only calls ``pipeline_class`` with its
    compiler's arguments. One that ``offloads`` lowers parfors through the
    MLIR half, which starts loading, in a thread, as it is first called."""

    def __init__(self, make: Callable[[], type[CompilerBase]], offloads: bool) -> None:
        self._make = make
        self._offloads = offloads
        self._class: type[CompilerBase] | None = None

    def __call__(self, typingctx: Any, targetctx: Any, *args: Any, **kwargs: Any
                 ) -> CompilerBase:
        if self._class is None:
            if self._offloads:
                passes.load_in_background()
                # Numba's own registries first (imports its compile needs in
                # any case, and most of its first compile): Python for the main
                # thread while the thread loads the bindings' library, which the
                # compiler's modules need. The refresh that every compile
                # begins with installs what the compiler then registers.
                typingctx.refresh()
                targetctx.refresh()
            load_compiler()
            self._class = self._make()
        return self._class(typingctx, targetctx, *args, **kwargs)


def _cpu_compiler() -> type[CompilerBase]:
    from .pipeline import CpuCompiler
    return CpuCompiler


CPU_PIPELINE = LazyPipeline(_cpu_compiler, offloads=False)


def offload_pipeline(offload: OffloadTarget) -> LazyPipeline:
    """The pipeline that offloads parfors for ``offload``'s device
    (``pipeline.compiler_for``)."""

    def make() -> type[CompilerBase]:
        from .pipeline import compiler_for
        return compiler_for(offload)

    return LazyPipeline(make, offloads=True)


__all__ = ["CPU_PIPELINE", "CompiledParfor", "KernelFault", "LazyPipeline", "OffloadTarget",
           "kernels_compiled", "link_runtime", "load_compiler", "offload_pipeline"]
