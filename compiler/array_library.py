"""The USM array library of this environment, which every xpuc module and test
imports instead of naming a package. dpctl 0.21 has the array type in
``dpctl.tensor`` (and dpnp 0.19 builds on it); dpctl 0.22 dropped it, and
dpnp 0.20 carries it as ``dpnp.tensor``. Each supported stack has exactly one
of the two. A leaf: it imports nothing of xpuc, and every layer may import it."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

CANDIDATES = ("dpctl.tensor", "dpnp.tensor")


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


tensor = find_tensor_library()
usm_ndarray = tensor.usm_ndarray

# What the library raises for arrays on queues it cannot reconcile, and so
# xpuc.ExecutionPlacementError (SPEC): dpctl.tensor's is in dpctl.utils
_PLACEMENT_ERROR_HOME = {"dpctl.tensor": "dpctl.utils", "dpnp.tensor": "dpnp.tensor"}
ExecutionPlacementError: type[Exception] = importlib.import_module(
    _PLACEMENT_ERROR_HOME[tensor.__name__]).ExecutionPlacementError


def dpnp_array_class() -> type | None:
    """``dpnp.ndarray``, once something imported dpnp, else None. Looks dpnp up
    only once imported: a dpnp array means someone imported it, and importing
    it here would cost every xpuc import 0.4 s on dpctl 0.21's stack
    (dpnp.tensor imports dpnp on the other)."""
    dpnp = sys.modules.get("dpnp")
    return None if dpnp is None else dpnp.ndarray


def is_dpnp_array(value: object) -> bool:
    """A ``dpnp.ndarray`` (whose outputs are dpnp arrays too, SPEC rule 2)."""
    cls = dpnp_array_class()
    return cls is not None and isinstance(value, cls)
