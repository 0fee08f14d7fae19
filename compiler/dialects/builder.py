"""An SSA text builder for MLIR: emit rules append ops and get back named values.

Text, not the bindings' op builders: the output is what the ``linalg`` stage
prints, and the passes layer parses and verifies it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .literals import scalar_literal
from .types import INDEX, ScalarType


@dataclass(frozen=True)
class Value:
    name: str
    type: ScalarType


class Builder:
    def __init__(self, depth: int = 2) -> None:
        """``depth``: the indentation level of the first lines emitted."""
        self.lines: list[str] = []
        self._count = 0
        self._depth = depth

    def fresh(self) -> str:
        self._count += 1
        return f"%v{self._count}"

    def emit(self, text: str, indent: int = 0) -> None:
        """Append a line; ``indent=-1`` for block labels, which sit one level out."""
        self.lines.append("  " * (self._depth + indent) + text)

    def op(self, text: str, result: ScalarType) -> Value:
        """Append ``%name = text`` and return the result."""
        value = Value(self.fresh(), result)
        self.emit(f"{value.name} = {text}")
        return value

    @contextmanager
    def region(self, header: str, footer: str = "}") -> Iterator[None]:
        """Lines emitted inside are nested in ``header { ... footer``."""
        self.emit(header + " {")
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            self.emit(footer)

    def constant(self, value: int | float | bool, type: ScalarType) -> Value:
        return self.op(f"arith.constant {scalar_literal(value, type)}", type)

    def index_constant(self, value: int) -> Value:
        return self.constant(value, INDEX)
