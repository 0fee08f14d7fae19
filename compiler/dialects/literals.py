"""The one place where a Python value becomes MLIR attribute text.

Every constant the emit rules put into IR goes through ``scalar_literal``;
``tests/test_literals.py`` parses what each function prints back through MLIR
and checks the value bit for bit, for every kind of attribute emitted.
"""

from __future__ import annotations

import struct

import numpy as np

from .types import ScalarType

_FLOAT_FORMATS = {16: ("<e", "<H", np.float16), 32: ("<f", "<I", np.float32),
                  64: ("<d", "<Q", np.float64)}


def round_to_float(value: float, bits: int) -> float:
    """``value`` rounded to the nearest float of ``bits`` bits (overflowing to
    infinity, as a conversion of the constant in compiled code would)."""
    with np.errstate(over="ignore"):
        return float(np.array(value, dtype=np.float64).astype(_FLOAT_FORMATS[bits][2]))


def float_literal(value: float, bits: int) -> str:
    """The literal of the float of ``bits`` bits nearest ``value``.

    Finite values print in decimal, the shortest form that names the value
    exactly (MLIR reads a decimal literal through a double, which holds every
    float32 exactly), with the decimal point MLIR's grammar requires
    (``1e-05`` would parse as the integer 1 followed by an op named ``e``).
    Infinities and NaNs have no decimal form: MLIR spells them by their bits.
    """
    rounded = round_to_float(value, bits)
    if np.isfinite(rounded):
        text = repr(rounded)
        mantissa, exponent_mark, exponent = text.partition("e")
        if "." not in mantissa:
            mantissa += ".0"
        return mantissa + exponent_mark + exponent
    float_format, bits_format, _ = _FLOAT_FORMATS[bits]
    pattern = struct.unpack(bits_format, struct.pack(float_format, rounded))[0]
    return f"0x{pattern:0{bits // 4}X}"


def integer_literal(value: int, bits: int) -> str:
    """The literal of ``value`` as a signless integer of ``bits`` bits: values
    of the unsigned range print as the signed number with the same bits."""
    value = int(value)
    if not -(1 << (bits - 1)) <= value < (1 << bits):
        raise ValueError(f"{value} does not fit in {bits} bits")
    if value >= 1 << (bits - 1):
        value -= 1 << bits
    return str(value)


def bool_literal(value: bool) -> str:
    return "true" if value else "false"


def string_literal(text: str) -> str:
    """``text`` as an MLIR string literal: quoted, each byte of its UTF-8 that
    is not printable ASCII (and the quote and backslash) as ``\\XX``."""
    return '"' + "".join(chr(byte) if 0x20 <= byte < 0x7F and byte not in b'"\\'
                         else f"\\{byte:02X}" for byte in text.encode()) + '"'


def location_literal(filename: str, line: int, column: int = 0) -> str:
    """The location ``filename:line:column`` of the user's code, as an op's
    trailing ``loc(...)``."""
    return f"loc({string_literal(filename)}:{int(line)}:{int(column)})"


def scalar_literal(value: int | float | bool, type: ScalarType) -> str:
    """``value`` as an ``arith.constant`` attribute of ``type``, with its type."""
    if type.kind == "b":
        return bool_literal(value)
    if type.is_float:
        return f"{float_literal(value, type.bits)} : {type.mlir}"
    if type.kind == "index":
        return f"{int(value)} : index"
    return f"{integer_literal(value, type.bits)} : {type.mlir}"
