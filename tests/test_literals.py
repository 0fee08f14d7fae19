"""Constants in IR: the formatter of every attribute kind the emit rules print
(compiler/dialects/literals.py), read back through MLIR bit for bit; and
constants of every float and integer kind in parfor bodies and kernels,
equal bit for bit to what Numba's CPU code computes with them."""

import math
import struct

import hypothesis.strategies as st
import numba
import numpy as np
import pytest
from device_support import DEVICE, offload
from hypothesis import HealthCheck, given, settings
from mlir import ir

import xpuc
from xpuc.dialects import BOOL, F32, F64, I8, I16, I32, I64, INDEX, U8, U16, U32, U64
from xpuc.dialects.builder import Builder, located
from xpuc.dialects.literals import (
    float_literal,
    integer_literal,
    location_literal,
    scalar_literal,
    string_literal,
)

FLOAT64_EDGES = [
    0.0, -0.0, 5e-324, -5e-324, 2.225073858507201e-308, 2.2250738585072014e-308,
    1e-05, 1e+308, -1e+308, 1.7976931348623157e+308, -1.7976931348623157e+308,
    1e16, 1e22, 1e23, 0.1, 1 / 3, 2.0**53 + 2, 16777217.0, 3.4028235677973366e+38,
    math.inf, -math.inf, math.nan, -math.nan,
]
FLOAT32_EDGES = [float(np.float32(v)) for v in (
    1e-45, -1e-45, 1.1754942e-38, 1.1754944e-38, 3.4028235e+38, -3.4028235e+38, 1e-05, 0.1,
    16777216.0, 1 / 3)] + [0.0, -0.0, math.inf, -math.inf, math.nan]
INTEGER_EDGES = {
    np.int8: [-128, 127], np.int16: [-2**15, 2**15 - 1], np.int32: [-2**31, 2**31 - 1],
    np.int64: [-2**63, 2**63 - 1], np.uint8: [255], np.uint16: [2**16 - 1],
    np.uint32: [2**32 - 1], np.uint64: [2**63, 2**64 - 1],
}


def bits_of(value: float, bits: int) -> int:
    float_format, bits_format = {32: ("<f", "<I"), 64: ("<d", "<Q")}[bits]
    return struct.unpack(bits_format, struct.pack(float_format, value))[0]


def parsed_constant(literal: str) -> ir.Attribute:
    """The value attribute of ``arith.constant <literal>`` as MLIR parses it."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(f"func.func @f() {{\n  %c = arith.constant {literal}\n"
                                 "  return\n}")
        op = module.body.operations[0].regions[0].blocks[0].operations[0]
        return op.attributes["value"]


def parsed_float_bits(value: float, bits: int) -> int:
    attr = parsed_constant(scalar_literal(value, F64 if bits == 64 else F32))
    text = str(attr)
    if text.startswith("0x"):  # MLIR prints non-finite floats by their bits
        return int(text.split(" ")[0], 16)
    return bits_of(ir.FloatAttr(attr).value, bits)


@pytest.mark.parametrize("value", FLOAT64_EDGES)
def test_float64_literal_parses_to_the_same_bits(value):
    assert parsed_float_bits(value, 64) == bits_of(value, 64)


@pytest.mark.parametrize("value", FLOAT32_EDGES)
def test_float32_literal_parses_to_the_same_bits(value):
    assert parsed_float_bits(value, 32) == bits_of(value, 32)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False))
def test_any_float64_round_trips(value):
    assert parsed_float_bits(value, 64) == bits_of(value, 64)


@settings(max_examples=300, deadline=None)
@given(st.floats(width=32, allow_nan=False))
def test_any_float32_round_trips(value):
    assert parsed_float_bits(value, 32) == bits_of(value, 32)


def test_float_literal_has_the_decimal_point_mlir_requires():
    assert float_literal(1e-05, 64) == "1.0e-05"
    assert float_literal(5e-324, 64) == "5.0e-324"
    assert float_literal(2.5, 64) == "2.5"
    assert float_literal(math.inf, 32) == "0x7F800000"
    assert float_literal(-math.inf, 64) == "0xFFF0000000000000"


def test_float_literal_rounds_to_its_type():
    # 0.1 as a float32 constant is the float32 nearest 0.1, and what overflows
    # float32 is infinite, as a conversion of the constant in compiled code is
    assert float_literal(0.1, 32) == repr(float(np.float32(0.1)))
    assert float_literal(1e300, 32) == "0x7F800000"


@pytest.mark.parametrize("dtype", list(INTEGER_EDGES))
def test_integer_literal_parses_to_the_same_bits(dtype):
    scalar = {np.int8: I8, np.int16: I16, np.int32: I32, np.int64: I64,
              np.uint8: U8, np.uint16: U16, np.uint32: U32, np.uint64: U64}[dtype]
    for value in [*INTEGER_EDGES[dtype], 0, 1]:
        attr = ir.IntegerAttr(parsed_constant(scalar_literal(value, scalar)))
        assert attr.value % (1 << scalar.bits) == value % (1 << scalar.bits)


def test_integer_literal_refuses_what_does_not_fit():
    with pytest.raises(ValueError, match="does not fit in 8 bits"):
        integer_literal(256, 8)
    with pytest.raises(ValueError, match="does not fit in 8 bits"):
        integer_literal(-129, 8)


def test_bool_and_index_literals():
    assert ir.BoolAttr(parsed_constant(scalar_literal(True, BOOL))).value is True
    assert ir.BoolAttr(parsed_constant(scalar_literal(False, BOOL))).value is False
    assert ir.IntegerAttr(parsed_constant(scalar_literal(2**40, INDEX))).value == 2**40


FILENAMES = ["plain.py", "/home/me/my project/run.py", 'quote"d.py', "back\\slash.py",
             "tab\tand\nnewline.py", "ünïcødé/数値.py", "<string>", "loc(\"x\":1:2).py"]


@pytest.mark.parametrize("filename", FILENAMES)
def test_location_literal_parses_to_the_same_file_line_and_column(filename):
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(
            f"func.func @f() {{\n  return {location_literal(filename, 12, 7)}\n}}")
        location = module.body.operations[0].regions[0].blocks[0].operations[0].location
        assert (location.filename, location.start_line, location.start_col) == \
            (filename, 12, 7)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_string_literal_round_trips(text):
    with ir.Context():
        assert ir.StringAttr(ir.Attribute.parse(string_literal(text))).value == text


def test_ops_carry_the_location_current_when_they_are_emitted():
    here, there = location_literal("f.py", 3), location_literal("f.py", 4)
    b = Builder(depth=0, location=here)
    with b.region("scf.if %c"):
        b.location = there
        b.emit("memref.store %x, %m[] : memref<f64>")
        b.emit("} else {", indent=-1)
        b.emit("^bb0(%y: f64):", indent=-1)
    assert b.lines == ["scf.if %c {", f"  memref.store %x, %m[] : memref<f64> {there}",
                       "} else {", "^bb0(%y: f64):", f"}} {here}"]
    assert b.location == there  # the ops after the region are the body's statement's
    assert located("%v1 = arith.addf %a, %b : f64", None) == "%v1 = arith.addf %a, %b : f64"


# ---- constants in compiled code, against Numba on the CPU ----------------------

def constants_program(constants: list, kernel: bool):
    """A parfor (or a kernel) storing each constant into its own column of
    ``stored`` and computing ``ones * constant`` into ``computed``. The
    constants are globals of their NumPy type, which Numba freezes into the
    code, so each reaches the IR as a constant of exactly that type."""
    names = {f"C{k}": value for k, value in enumerate(constants)}
    if kernel:
        head, indent = "    i = xpuc.get_global_id(0)\n", "    "
    else:
        head, indent = "    for i in numba.prange(stored.shape[0]):\n", "        "
    body = "".join(f"{indent}stored[i, {k}] = C{k}\n"
                   f"{indent}computed[i, {k}] = ones[i, {k}] * C{k}\n"
                   for k in range(len(constants)))
    source = f"def program(ones, stored, computed):\n{head}{body}"
    namespace = {"numba": numba, "xpuc": xpuc, **names}
    exec(compile(source, f"<constants {len(constants)}>", "exec"), namespace)
    return namespace["program"]


def buffers(constants: list, rows: int = 5):
    dtype = np.result_type(*constants)
    return (np.ones((rows, len(constants)), dtype), np.zeros((rows, len(constants)), dtype),
            np.zeros((rows, len(constants)), dtype))


def check_against_numba(constants: list) -> None:
    """Stored constants equal Numba's bit for bit; so do the products, but
    for NaNs, whose payload an arithmetic operation may change."""
    function = constants_program(constants, kernel=False)
    device, cpu = buffers(constants), buffers(constants)
    offload(xpuc.jit(function), *device)
    numba.njit(function)(*cpu)
    np.testing.assert_array_equal(device[1].view(np.uint8), cpu[1].view(np.uint8))
    np.testing.assert_array_equal(device[2], cpu[2])

    kernel = xpuc.kernel(constants_program(constants, kernel=True))
    on_device = buffers(constants)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        kernel[on_device[0].shape[0]](*on_device)
    assert xpuc.stats()["kernel_launches"] == 1
    np.testing.assert_array_equal(on_device[1].view(np.uint8), cpu[1].view(np.uint8))
    np.testing.assert_array_equal(on_device[2], cpu[2])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_edge_constants_equal_numbas(dtype):
    edges = FLOAT32_EDGES if dtype is np.float32 else FLOAT64_EDGES
    check_against_numba([dtype(v) for v in edges])


@pytest.mark.parametrize("dtype", list(INTEGER_EDGES))
def test_integer_extreme_constants_equal_numbas(dtype):
    check_against_numba([dtype(v) for v in INTEGER_EDGES[dtype]])


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(width=32), min_size=6, max_size=6),
       st.lists(st.floats(), min_size=6, max_size=6))
def test_any_float_constants_equal_numbas(floats32, floats64):
    check_against_numba([np.float32(v) for v in floats32])
    check_against_numba([np.float64(v) for v in floats64])


def test_float_of_a_string_is_its_constant():
    @xpuc.jit
    def bounded(a, out):
        for i in numba.prange(a.shape[0]):
            lowest = float("inf")
            out[i] = min(a[i], lowest) + max(a[i], float("-inf")) + (a[i] < float("nan"))

    a = np.array([1.0, -2.5, np.inf, -np.inf, np.nan])
    device, cpu = np.zeros(5), np.zeros(5)
    offload(bounded, a, device)
    bounded(a, cpu)
    np.testing.assert_array_equal(device, cpu)
