"""Rule tables, and the table of emit rules, keyed by the operator or callee
they implement (``operator.add``, ``math.sin``, ``numpy.sin``, ...), as JAX
keeps one lowering rule per primitive. An emit rule gets its operands already
cast to the argument types Numba typed the call with, and returns a value of
the result type. The frontend keeps its translation rules in tables of the
same kind (frontend/translation.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from .builder import Builder, Value
    from .types import ScalarType

Rule = Callable[["Builder", "Sequence[Value]", "ScalarType"], "Value"]

K = TypeVar("K")
R = TypeVar("R", bound=Callable)


class RuleTable(Generic[K, R]):
    """Rules of type ``R`` keyed by what they implement (of type ``K``), one
    per key; ``kind`` names the rules in errors."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._rules: dict[K, R] = {}

    def rule(self, *keys: K) -> Callable[[R], R]:
        """Register the decorated function as the rule of every key."""

        def register(fn: R) -> R:
            for key in keys:
                if key in self._rules:
                    raise ValueError(f"two {self.kind} rules for {key!r}")
                self._rules[key] = fn
            return fn

        return register

    def lookup(self, key: K) -> R | None:
        try:
            return self._rules.get(key)
        except TypeError:  # an unhashable callee has no rule
            return None


# the rules of scalar operands (complex numbers have a table of their own)
_SCALAR_RULES: RuleTable[object, Rule] = RuleTable("emit")
rule = _SCALAR_RULES.rule
lookup_rule = _SCALAR_RULES.lookup
