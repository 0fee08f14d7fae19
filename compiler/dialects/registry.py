"""The table of emit rules, keyed by the operator or callee they implement
(``operator.add``, ``math.sin``, ``numpy.sin``, ...), as JAX keeps one lowering
rule per primitive. A rule gets its operands already cast to the argument types
Numba typed the call with, and returns a value of the result type."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .builder import Builder, Value
    from .types import ScalarType

Rule = Callable[["Builder", "Sequence[Value]", "ScalarType"], "Value"]

_RULES: dict[object, Rule] = {}


def rule(*keys: object) -> Callable[[Rule], Rule]:
    """Register the decorated function as the emit rule of every key."""

    def register(fn: Rule) -> Rule:
        for key in keys:
            if key in _RULES:
                raise ValueError(f"two emit rules for {key!r}")
            _RULES[key] = fn
        return fn

    return register


def lookup_rule(key: object) -> Rule | None:
    try:
        return _RULES.get(key)
    except TypeError:  # an unhashable callee has no rule
        return None
