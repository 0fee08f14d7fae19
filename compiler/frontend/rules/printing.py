"""``print()`` in parfor bodies and kernels: one device printf per call, so
that the lines of work-items running at once do not interleave.

Items are separated by a space and the line ends as Python's do; floats print
as C's ``%g`` (six significant digits), complex numbers as ``(re+imj)``,
bools as True/False, string constants as they are. Arrays and other objects
have no device printf form and are refused."""

from __future__ import annotations

from dataclasses import dataclass

from numba.core import ir, types

from ...dialects import I32, Builder, Complex, ScalarType, Value, arith, gpu, scf
from ...errors import UnsupportedError
from ..body_values import CalleeValue
from ..translation import Translation, described, statement_rule
from ..user_locations import where


@dataclass(frozen=True)
class _Number:
    """A number printed by one conversion; ``flags`` as printf's (``+``: the
    sign always, as the imaginary part of a complex number has)."""

    value: Value
    flags: str = ""

    def conversion(self) -> tuple[str, ScalarType]:
        """Its printf conversion and the type it is passed as (C's default
        promotions: small integers widen to int)."""
        type = self.value.type
        if type.is_float:
            return f"%{self.flags}g", type
        letter = "d" if type.is_signed else "u"
        if type.bits == 64 or type.kind == "index":
            return f"%{self.flags}l{letter}", type
        return f"%{self.flags}{letter}", I32 if type.bits < 32 else type


def _pieces(t: Translation, stmt: ir.Print) -> list[str | Value | _Number]:
    """The line ``stmt`` prints: format text, numbers, and bools (a bool's
    text is chosen at run time)."""
    pieces: list[str | Value | _Number] = []
    for index, var in enumerate(stmt.args):
        if index:
            pieces.append(" ")
        const = stmt.consts.get(index)
        held = const if isinstance(const, str) else t.lookup(var)
        if isinstance(held, CalleeValue) and isinstance(held.obj, types.StringLiteral):
            held = held.obj.literal_value
        if isinstance(held, str):
            pieces.append(held.replace("%", "%%"))
        elif isinstance(held, Complex):
            pieces += ["(", _Number(held.real), _Number(held.imag, "+"), "j)"]
        elif isinstance(held, Value):
            pieces.append(held if held.type.kind == "b" else _Number(held))
        else:
            raise UnsupportedError(
                f"{where(stmt.loc)}: print() of {described(var)} of type "
                f"{t.typemap.get(var.name)}: only scalars and string constants print on a device")
    pieces.append("\n")
    return pieces


@statement_rule(ir.Print)
def _print(t: Translation, stmt: ir.Print) -> None:
    if stmt.vararg is not None:
        raise UnsupportedError(f"{where(stmt.loc)}: print(*args) on a device")
    _emit(t.b, _pieces(t, stmt), "", [])


def _emit(b: Builder, pieces: list[str | Value | _Number], format: str,
          values: list[Value]) -> None:
    """Emit the printf of ``pieces`` after ``format`` and ``values``; at a bool,
    one printf for each of its texts, chosen by an scf.if."""
    for position, piece in enumerate(pieces):
        if isinstance(piece, str):
            format += piece
        elif isinstance(piece, Value):  # a bool
            rest = pieces[position + 1:]
            with scf.if_else(b, piece) as otherwise:
                _emit(b, rest, format + "True", values)
                otherwise()
                _emit(b, rest, format + "False", values)
            return
        else:
            conversion, passed = piece.conversion()
            format += conversion
            values = [*values, arith.cast(b, piece.value, passed)]
    gpu.printf(b, format, values)
