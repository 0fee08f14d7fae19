"""Offloaded builds on disk: Numba's cache files, keyed also by what changes
xpuc's code.

Numba's own cache index keys an overload by signature and CPU only, so an
offload build and a CPU build of one function (or builds for two devices)
would overwrite each other. An offload build gets index and data files of its
own (a tag of the device and toolchain in their names) and the same key in its
index entries. What it stores is Numba's compile result: the host code, with
each kernel's SPIR-V inside it, so that a process loading it runs no MLIR.

Where: ``$XPUC_CACHE_DIR`` if set (``xpuc compile -o DIR`` fills such a
directory), else where Numba would cache the function (``__pycache__`` beside
its file, ``NUMBA_CACHE_DIR``, ...). Offloaded functions always look there;
they write there with ``cache=True`` or under ``xpuc compile`` (without
``--emit``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from numba.core.caching import (
    CompileResultCacheImpl,
    FunctionCache,
    IndexDataCacheFile,
    NullCache,
    UserProvidedCacheLocator,
)
from numba.core.runtime import rtsys

from . import abi, runtime
from .cuda_runtime import CudaDevice
from .device import root_device
from .errors import XpucError

if TYPE_CHECKING:  # imported when a SYCL device is first named: xpuc imports without it
    import dpctl

    from .frontend import CompiledParfor

CACHE_DIR_VARIABLE = "XPUC_CACHE_DIR"


class CacheWarning(UserWarning):
    """An unreadable cache entry was ignored (the function is recompiled)."""


class _XpucDirLocator(UserProvidedCacheLocator):
    """Numba's user-provided-directory locator, pointed at $XPUC_CACHE_DIR."""

    def __init__(self, py_func: Callable, py_file: str) -> None:
        super().__init__(py_func, py_file)
        self._cache_path = os.path.join(os.environ[CACHE_DIR_VARIABLE],
                                        self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func: Callable, py_file: str):
        if not os.environ.get(CACHE_DIR_VARIABLE):
            return None
        # past UserProvidedCacheLocator's own check of NUMBA_CACHE_DIR
        return super(UserProvidedCacheLocator, cls).from_function(py_func, py_file)


class _OffloadCacheImpl(CompileResultCacheImpl):
    _locator_classes = [_XpucDirLocator, *CompileResultCacheImpl._locator_classes]


@functools.cache
def toolchain_versions() -> tuple[tuple[str, str], ...]:
    """The packages whose versions change the code xpuc produces."""
    packages = ("xpuc", "numba", "llvmlite", "xtc-mlir-python-bindings", "dpctl")
    found = []
    for package in packages:
        try:
            found.append((package, importlib.metadata.version(package)))
        except importlib.metadata.PackageNotFoundError:
            found.append((package, "?"))
    return tuple(found)


# The runtime entries compiled host code calls, as the header declares them.
_HOST_CODE_ENTRIES = tuple(abi.c_prototype(e) for e in abi.ENTRIES.values() if e.host_code)


def device_key(device: dpctl.SyclDevice | CudaDevice | str, target: object) -> tuple:
    """What about ``device`` changes the compiled code: its identity and
    driver, and the ``Target`` code generation used. A sub-device is keyed by
    its root device: processes on different sub-devices share the files. An
    Intel GPU architecture (``xpuc compile --arch``) is its name and Target."""
    if isinstance(device, str):
        return (device, repr(target))
    if isinstance(device, CudaDevice):  # its driver is the process's: the PTX does not depend on it
        return (f"cuda:{device.ordinal}", device.name, repr(target))
    return (root_device(device).filter_string, device.name, device.driver_version,
            repr(target))


class OffloadCache(FunctionCache):
    """The on-disk cache of one function's offloaded builds for one device."""

    _impl_class = _OffloadCacheImpl

    def __init__(self, py_func: Callable, key: tuple, load: bool, save: bool,
                 compiled: dict[tuple, list[CompiledParfor]]) -> None:
        super().__init__(py_func)
        # compiled host code is linked to the runtime entries it calls
        self._xpuc_key = (key, toolchain_versions(), _HOST_CODE_ENTRIES)
        self._load, self._save = load, save
        tag = hashlib.sha256(repr(self._xpuc_key).encode()).hexdigest()[:16]
        self._cache_file = IndexDataCacheFile(
            cache_path=self._cache_path,
            filename_base=f"{self._impl.filename_base}.xpuc-{tag}",
            source_stamp=self._impl.locator.get_source_stamp())
        # each entry's device modules, beside it: a load has them built while
        # Numba loads the host code; what the build recorded, by argument types
        self._modules_file = IndexDataCacheFile(
            cache_path=self._cache_path,
            filename_base=f"{self._impl.filename_base}.xpuc-{tag}-modules",
            source_stamp=self._impl.locator.get_source_stamp())
        self._compiled = compiled

    def _index_key(self, sig, codegen) -> tuple:
        return (*super()._index_key(sig, codegen), self._xpuc_key)

    def load_overload(self, sig, target_context):
        if not self._load:
            return None
        try:
            self._build_ahead(sig, target_context.codegen())
            # Numba's load refreshes the target context first: it imports and
            # installs every registry of implementations (and SciPy's, to find
            # BLAS), 0.3 s and more of a warm start, for compiling. Loaded code
            # compiles nothing; it links against the NRT, which is initialized
            # here, and Numba's other symbols, which are added at import (its
            # hashing's, imported with xpuc) or by the entry's reload_init.
            rtsys.initialize(target_context)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        except Exception as error:  # noqa: BLE001 (any unreadable entry: recompile)
            self._unreadable(error)
            return None

    def save_overload(self, sig, data) -> None:
        if not self._save:
            return
        try:
            self._save_entry(sig, data)
        except Exception as error:  # noqa: BLE001 (a corrupted index: start it afresh)
            self._unreadable(error)
            self._cache_file.flush()
            self._modules_file.flush()
            self._save_entry(sig, data)

    def _save_entry(self, sig, data) -> None:
        super().save_overload(sig, data)
        modules = [p.lowered.binary for p in self._compiled.get(tuple(data.fndesc.argtypes), ())
                   if p.lowered.binary]
        self._modules_file.save(self._index_key(sig, data.codegen), modules)

    def _build_ahead(self, sig, codegen) -> None:
        """Have the device modules of the entry for ``sig`` built on the queue
        of the call that loads it, while Numba loads the entry."""
        queue = runtime.named_call_queue()
        modules = self._modules_file.load(self._index_key(sig, codegen)) if queue else None
        if modules:
            runtime.build_ahead(queue, modules)

    def _unreadable(self, error: Exception) -> None:
        warnings.warn(f"xpuc: ignoring an unreadable cache entry of {self._name} in "
                      f"{self._cache_path} ({type(error).__name__}: {error}); recompiling",
                      CacheWarning, stacklevel=4)


_ahead = threading.local()


@contextlib.contextmanager
def compiling_ahead(save: bool) -> Iterator[None]:
    """Offloaded builds made in the block are compiled afresh, never loaded,
    and written to the cache if ``save``, whatever their ``cache`` option
    (``xpuc compile``: ``--emit`` shows what it compiled; without it, it
    stores)."""
    _ahead.save = save
    try:
        yield
    finally:
        del _ahead.save


def offload_cache(py_func: Callable, key: tuple, cache_option: bool,
                  compiled: dict[tuple, list[CompiledParfor]]):
    """The cache an offloaded build of ``py_func`` for ``key`` uses (its
    parfors as compiled recorded, ``OffloadTarget.compiled``): Numba's
    NullCache for a function no locator can place (defined in a REPL)."""
    ahead = getattr(_ahead, "save", None)
    try:
        return OffloadCache(py_func, key, load=ahead is None,
                            save=bool(ahead) if ahead is not None else cache_option,
                            compiled=compiled)
    except RuntimeError:  # Numba: "no locator available"
        if cache_option:
            raise XpucError(f"{py_func.__qualname__}: cache=True, but there is nowhere to "
                            "cache it (no source file, or no writable directory)") from None
        return NullCache()
