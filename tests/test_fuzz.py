"""The differential fuzzer (tests/fuzz_programs.py) in a bounded run, and a
regression test for each bug it found.

The bounded runs compare a fixed (derandomized) set of programs per kind,
about 90 s for the kinds compared with Numba, 60 s for the aliasing kind
(compared with NumPy), 15 s for the float32 kind (XPUC_FP64=0, compared
with NumPy's float32) and 15 s for the loops kind (stepped pranges, empty
slices), each in a subprocess so that a crash fails its test
with the program that caused it. More on demand:
``python tests/fuzz_programs.py --examples 2000 --seed $RANDOM``.
"""

import math
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from device_support import DEVICE, offload

import xpuc

CI_EXAMPLES = int(os.environ.get("XPUC_FUZZ_EXAMPLES", "50"))
# an aliasing program is compiled twice and called four times (NumPy and dpnp
# arrays, each with the cost model on and off)
CI_ALIASING_EXAMPLES = int(os.environ.get("XPUC_FUZZ_ALIASING_EXAMPLES", "10"))
CI_FLOAT32_EXAMPLES = int(os.environ.get("XPUC_FUZZ_FLOAT32_EXAMPLES", "20"))
CI_LOOP_EXAMPLES = int(os.environ.get("XPUC_FUZZ_LOOP_EXAMPLES", "20"))


@pytest.mark.parametrize("kinds, examples", [
    (("elementwise", "reduction", "prange"), CI_EXAMPLES),
    (("aliasing",), CI_ALIASING_EXAMPLES),
    (("float32",), CI_FLOAT32_EXAMPLES),
    (("loops",), CI_LOOP_EXAMPLES),
], ids=["against-numba", "aliasing", "float32", "loops"])
def test_bounded_fuzz_run(kinds, examples):
    fuzzer = Path(__file__).with_name("fuzz_programs.py")
    kind_options = [option for kind in kinds for option in ("--kind", kind)]
    result = subprocess.run([sys.executable, fuzzer, "--examples", str(examples), *kind_options],
                            capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        # the last program printed is the one that failed (or crashed), shrunk
        last = result.stdout[result.stdout.rfind("--- "):]
        pytest.fail(f"exit {result.returncode}; last program:\n{last}\n{result.stderr[-5000:]}")
    assert "fuzz: all programs agree" in result.stdout


# ---- what the fuzzer found ---------------------------------------------------

rng = np.random.default_rng(6)
HALVES = rng.uniform(-4, 4, 50).astype(np.float32), rng.uniform(-4, 4, 50)
SMALL_INTS = rng.integers(-20, 20, 50).astype(np.int8), rng.integers(0, 250, 50).astype(np.uint8)


@pytest.mark.parametrize("fn", [
    lambda a, b: np.minimum(a, b) + a,
    lambda a, b: np.maximum(b, a),
    lambda a, b: np.hypot(a, b),
    lambda a, b: np.arctan2(a, b),
    lambda a, b: np.copysign(a, b),
], ids=["minimum", "maximum", "hypot", "arctan2", "copysign"])
def test_ufunc_of_float32_and_float64_computes_in_float64(fn):
    """A ufunc of mixed argument types computes in the types of the loop
    NumPy picks; the kernel used to get Numba's call signature, which keeps
    the arguments' own types, and emitted ill-typed MLIR (a parse error in
    the linalg stage)."""
    a, b = HALVES
    result = offload(xpuc.jit(fn), a, b)
    expected = numba.njit(fn)(a, b)
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(result, expected, rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda a, b: b // (a | 1),
    lambda a, b: b % (a | 1),
    lambda a, b: (b // (a | 1)) - b,
    lambda a, b: b > a,
    lambda a, b: np.minimum(a, b),
], ids=["floordiv", "mod", "floordiv-sub", "greater", "minimum"])
def test_array_operators_on_signed_and_unsigned_compute_as_their_ufunc(fn):
    """uint8 // int64 in an array expression is np.floor_divide's int64
    loop: the kernel divided 200 // -3 as unsigned (0, not -67)."""
    a, b = SMALL_INTS
    result = offload(xpuc.jit(fn), a, b)
    expected = numba.njit(fn)(a, b)  # Numba types ``a | 1`` as int64, NumPy as int8
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_array_operators_on_mixed_types_compute_in_the_result_type_as_numba_does():
    """Numba's CPU converts an array expression operator's operands to the
    result type: ``-(-b) + a`` (uint8 b, int8 a) adds in int16, where Numba
    typed ``-(-b)`` as uint64. Computing in np.add's loop went through
    float64 and stored garbage (0)."""
    a, b = SMALL_INTS
    fn = xpuc.jit(lambda a, b: -(-b) + a)  # noqa: B002 (a double negation, fused)
    np.testing.assert_array_equal(offload(fn, a, b), numba.njit(fn.py_func)(a, b))


@pytest.mark.parametrize("reduce", [np.max, np.min, np.sum], ids=["max", "min", "sum"])
def test_int16_reduction(reduce):
    """int8 + uint8 is int16: a max/min reduction passes its int16 initial
    value to the kernel, which had no runtime argument kind."""
    a, b = SMALL_INTS
    fn = xpuc.jit(lambda a, b: reduce(b + a))
    assert offload(fn, a, b) == reduce(b.astype(np.int16) + a)


def test_rounding_an_integer_is_the_identity():
    """NumPy 2 has integer loops for floor, ceil and trunc (np.floor of an
    int64 is that int64): the kernel emitted math.floor on an integer, which
    the linalg stage refused."""

    @xpuc.jit
    def rounded(a, out):
        for i in numba.prange(a.shape[0]):
            out[i] = np.floor(a[i]) + np.ceil(3) + np.trunc(a[i] // 2) + math.floor(a[i])

    a = np.arange(-5, 5)
    out, expected = np.zeros(10), np.zeros(10)
    offload(rounded, a, out)
    rounded.py_func(a, expected)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(offload(xpuc.jit(lambda a: np.floor(a) - np.ceil(a)), a),
                                  np.zeros(10, dtype=np.int64))


def _reverse_scaled(a, b):
    a[::-1] = b * 2


def _odd_from_even(a, b):
    a[1::2] = a[::2][: a.shape[0] // 2] + 1


def _reverse_own_doubled(a, b):
    a[::-1] = a * 2


def _odd_rows_from_even_rows(m, b):
    m[1::2, :] = m[:-1:2, :] * 2


def _columns_reversed_plus(m, b):
    m[:, ::-1] = m + b


@pytest.mark.parametrize("store, shape", [
    (_reverse_scaled, (10,)), (_odd_from_even, (11,)), (_reverse_own_doubled, (9,)),
    (_odd_rows_from_even_rows, (7, 5)), (_columns_reversed_plus, (4, 6)),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_store_into_a_stepped_slice_offloads_and_reads_old_values(store, shape):
    """``a[::-1] = b * 2``, ``m[1::2, :] = ...``: Numba's parfor pass leaves a
    store through a slice with a step to host code (its array analysis does
    not size the view), which a usm_type="device" array refused; it is the
    loop over the view that other host stores are, reading what the right
    side computed before any element is written."""
    dpnp = pytest.importorskip("dpnp")
    a, b = np.arange(np.prod(shape), dtype=np.float64).reshape(shape), np.ones(shape)
    expected = a.copy()
    store(expected, b)
    got = dpnp.asarray(a, device=DEVICE, usm_type="device")
    xpuc.jit(store)(got, dpnp.asarray(b, device=DEVICE, usm_type="device"))
    np.testing.assert_array_equal(dpnp.asnumpy(got), expected)
