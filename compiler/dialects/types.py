"""Scalar types as the emit rules see them: MLIR's integers are signless, so the
signedness Numba typed a value with travels next to it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScalarType:
    kind: str  # "f" float, "i" signed int, "u" unsigned int, "b" bool, "index"
    bits: int

    @property
    def mlir(self) -> str:
        """The type of SSA values of this type."""
        if self.kind == "f":
            return f"f{self.bits}"
        if self.kind == "index":
            return "index"
        return f"i{self.bits}"

    @property
    def storage(self) -> str:
        """The element type in memory and in kernel arguments: OpenCL has no
        1-bit storage, so bools are bytes there."""
        return "i8" if self.kind == "b" else self.mlir

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_signed(self) -> bool:
        return self.kind in ("i", "index")


F32, F64 = ScalarType("f", 32), ScalarType("f", 64)
I8, I16, I32, I64 = (ScalarType("i", n) for n in (8, 16, 32, 64))
U8, U16, U32, U64 = (ScalarType("u", n) for n in (8, 16, 32, 64))
BOOL = ScalarType("b", 1)
INDEX = ScalarType("index", 64)
