"""An SSA text builder for MLIR: emit rules append ops and get back named values.

Text, not the bindings' op builders: the output is what the ``linalg`` stage
prints, and the passes layer parses and verifies it. Every op carries the
location of the user's code it was translated from (``Builder.location``),
so that an error in any later stage names the user's file and line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .literals import scalar_literal
from .types import INDEX, ScalarType


@dataclass(frozen=True)
class Value:
    name: str
    type: ScalarType


_LOCATED = re.compile(r' loc\("(?:[^"\\]|\\.)*":\d+:\d+\)$')  # as location_literal writes it


def located(line: str, location: str | None) -> str:
    """``line`` with ``location`` appended if the line ends an op: not a block
    label (``^bb0(...):``), not a line opening a region (``... {``, ``} else {``);
    a region's closing ``}`` ends its op. A line located already keeps its own."""
    text = line.rstrip()
    if (location is None or text.endswith(("{", ":")) or text.lstrip().startswith("^")
            or _LOCATED.search(text)):
        return line
    return f"{text} {location}"


class Builder:
    def __init__(self, depth: int = 2, location: str | None = None) -> None:
        """``depth``: the indentation level of the first lines emitted;
        ``location``: the ``loc(...)`` of the ops emitted until it changes."""
        self.lines: list[str] = []
        self.location = location
        self._count = 0
        self._depth = depth

    def fresh(self) -> str:
        self._count += 1
        return f"%v{self._count}"

    def emit(self, text: str, indent: int = 0) -> None:
        """Append a line; ``indent=-1`` for block labels, which sit one level out."""
        self.lines.append("  " * (self._depth + indent) + located(text, self.location))

    def op(self, text: str, result: ScalarType) -> Value:
        """Append ``%name = text`` and return the result."""
        value = Value(self.fresh(), result)
        self.emit(f"{value.name} = {text}")
        return value

    @contextmanager
    def region(self, header: str, footer: str = "}") -> Iterator[None]:
        """Lines emitted inside are nested in ``header { ... footer``; the op
        takes the location current at its header, whatever its body's are."""
        location = self.location
        self.emit(header + " {")
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            body_location, self.location = self.location, location
            self.emit(footer)
            self.location = body_location

    def constant(self, value: int | float | bool, type: ScalarType) -> Value:
        return self.op(f"arith.constant {scalar_literal(value, type)}", type)

    def index_constant(self, value: int) -> Value:
        return self.constant(value, INDEX)
