"""The table of emit rules, keyed by the operator or callee they implement
(``operator.add``, ``math.sin``, ``numpy.sin``, ...), as JAX keeps one lowering
rule per primitive. A rule gets its operands already cast to the argument types
Numba typed the call with, and returns a value of the result type."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from .builder import Builder, Value
    from .types import ScalarType

Rule = Callable[["Builder", "Sequence[Value]", "ScalarType"], "Value"]

R = TypeVar("R", bound=Callable)


class RuleTable(Generic[R]):
    """Rules keyed by the operator or callee they implement, one per key."""

    def __init__(self) -> None:
        self._rules: dict[object, R] = {}

    def rule(self, *keys: object) -> Callable[[R], R]:
        """Register the decorated function as the rule of every key."""

        def register(fn: R) -> R:
            for key in keys:
                if key in self._rules:
                    raise ValueError(f"two emit rules for {key!r}")
                self._rules[key] = fn
            return fn

        return register

    def lookup(self, key: object) -> R | None:
        try:
            return self._rules.get(key)
        except TypeError:  # an unhashable callee has no rule
            return None


# the rules of scalar operands (complex numbers have a table of their own)
_SCALAR_RULES: RuleTable[Rule] = RuleTable()
rule = _SCALAR_RULES.rule
lookup_rule = _SCALAR_RULES.lookup
