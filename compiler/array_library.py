"""The USM array library of this environment, which every xpuc module and test
imports instead of naming a package. dpctl 0.21 has the array type in
``dpctl.tensor`` (and dpnp 0.19 builds on it); dpctl 0.22 dropped it, and
dpnp 0.20 carries it as ``dpnp.tensor``. Each supported stack has exactly one
of the two. A leaf: it imports nothing of xpuc, and every layer may import it.

The library is imported when first needed, not with xpuc: ``dpnp.tensor``
imports all of dpnp, 0.6 s that a user of NumPy arrays alone never needs.
A USM array argument means its library is imported already
(``usm_ndarray_class`` finds it in ``sys.modules``); ``tensor``, ``usm_ndarray`` and
``ExecutionPlacementError`` as attributes of this module import it."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType

CANDIDATES = ("dpctl.tensor", "dpnp.tensor")

# What the library raises for arrays on queues it cannot reconcile, and so
# xpuc.ExecutionPlacementError (SPEC): dpctl.tensor's is in dpctl.utils
_PLACEMENT_ERROR_HOME = {"dpctl.tensor": "dpctl.utils", "dpnp.tensor": "dpnp.tensor"}

# The library's usm_ndarray once it is loaded here, else None: read on every
# call's fast path, where None means no argument can be one of its arrays.
loaded_usm_ndarray: type | None = None
_loaded: ModuleType | None = None
_when_loaded: list[Callable[[ModuleType], None]] = []


def find_tensor_library(candidates: tuple[str, ...] = CANDIDATES) -> ModuleType:
    """The first of ``candidates`` that this environment has."""
    for name in candidates:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as error:
            # only an absent package moves on: a present one that fails to
            # import is a broken install, reported as it is
            if error.name is None or not (name == error.name
                                          or name.startswith(error.name + ".")):
                raise
    raise ImportError(
        f"xpuc needs a USM array library, but none of {', '.join(candidates)} is "
        "installed: install one of xpuc's stacks into this environment, "
        "pip install dpctl==0.22.1 dpnp==0.20.0 (or dpctl==0.21.1 dpnp==0.19.1)")


def _load(library: ModuleType) -> ModuleType:
    global _loaded, loaded_usm_ndarray
    _loaded, loaded_usm_ndarray = library, library.usm_ndarray
    for hook in _when_loaded:
        hook(library)
    return library


def tensor_library() -> ModuleType:
    """The library, imported now if no one has yet."""
    return _loaded if _loaded is not None else _load(find_tensor_library())


def usm_ndarray_class() -> type | None:
    """The library's ``usm_ndarray`` if anyone imported the library (else no
    value can be one), without importing it."""
    if _loaded is None:
        for name in CANDIDATES:
            library = sys.modules.get(name)
            if library is not None and hasattr(library, "usm_ndarray"):
                _load(library)
                break
    return loaded_usm_ndarray


def is_usm_ndarray(value: object) -> bool:
    cls = usm_ndarray_class()
    return cls is not None and isinstance(value, cls)


def when_loaded(hook: Callable[[ModuleType], None]) -> None:
    """Call ``hook(library)`` once the library is loaded (now, if it is)."""
    _when_loaded.append(hook)
    if _loaded is not None:
        hook(_loaded)


def placement_error_class() -> type[Exception]:
    """The library's ``ExecutionPlacementError`` (importing the library)."""
    name = tensor_library().__name__
    return importlib.import_module(_PLACEMENT_ERROR_HOME[name]).ExecutionPlacementError


def __getattr__(name: str) -> object:
    # PEP 562: the library's names, for the tests and users that want them
    if name == "tensor":
        return tensor_library()
    if name == "usm_ndarray":
        return tensor_library().usm_ndarray
    if name == "ExecutionPlacementError":
        return placement_error_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dpnp_array_class() -> type | None:
    """``dpnp.ndarray``, once something imported dpnp, else None. Looks dpnp up
    only once imported: a dpnp array means someone imported it."""
    dpnp = sys.modules.get("dpnp")
    return None if dpnp is None else dpnp.ndarray


def is_dpnp_array(value: object) -> bool:
    """A ``dpnp.ndarray`` (whose outputs are dpnp arrays too, SPEC rule 2)."""
    cls = dpnp_array_class()
    return cls is not None and isinstance(value, cls)
