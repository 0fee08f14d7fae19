"""Differential fuzzer: random parfor programs run by xpuc under a device
context and by Numba on the CPU, results compared with a dtype-aware tolerance.

A program is Python source (an array expression, a whole-array or prange
reduction, or a prange body with a branch) plus inputs of random shapes,
dtypes and strided views. ``python tests/fuzz_programs.py [--examples N]
[--seed S]`` runs it on demand (random seeds unless ``--seed`` is given);
tests/test_fuzz.py runs a bounded, derandomized session in a subprocess, so
that a crash fails a test instead of ending pytest. Each program is printed
before it runs, so the last one printed is the one that crashed.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xpuc

DEVICE = "opencl:cpu"
FLOAT_DTYPES = ("float32", "float64")
INT_DTYPES = ("int8", "uint8", "int32", "int64")

# Operators and functions by the kind of value they take; each is valid in an
# array expression and on the scalars of a prange body alike.
_FLOAT_UNARY = ("np.sin({})", "np.cos({})", "np.exp(-np.abs({}))", "np.sqrt(np.abs({}))",
                "np.tanh({})", "np.log1p(np.abs({}))", "np.floor({})", "np.abs({})", "(-{})")
_FLOAT_BINARY = ("({} + {})", "({} - {})", "({} * {})", "({} / (np.abs({}) + 1.0))",
                 "np.minimum({}, {})", "np.maximum({}, {})", "np.hypot({}, {})",
                 "np.arctan2({}, {})", "np.copysign({}, {})")
_INT_UNARY = ("np.abs({})", "(-{})", "({} // 3)", "({} % 5)")
# a divisor ``| 1`` is odd, so never zero (Numba's CPU raises on a scalar x // 0)
_INT_BINARY = ("({} + {})", "({} - {})", "({} * {})", "({} // ({} | 1))", "({} % ({} | 1))",
               "np.minimum({}, {})", "np.maximum({}, {})", "({} & {})", "({} | {})",
               "({} ^ {})")
_FLOAT_CONSTANTS = ("0.5", "2.0", "-1.25", "3")
_INT_CONSTANTS = ("1", "2", "-3", "7")
_COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


def expressions(leaves: tuple[str, ...], is_float: bool, depth: int = 3) -> st.SearchStrategy:
    """Source of an expression over ``leaves`` (variables of one kind) and
    constants."""
    constants = _FLOAT_CONSTANTS if is_float else _INT_CONSTANTS
    unary = _FLOAT_UNARY if is_float else _INT_UNARY
    binary = _FLOAT_BINARY if is_float else _INT_BINARY
    leaf = st.sampled_from(leaves) | st.sampled_from(constants)
    if depth == 0:
        return leaf
    inner = expressions(leaves, is_float, depth - 1)
    return st.one_of(
        st.sampled_from(leaves),
        st.tuples(st.sampled_from(unary), inner).map(lambda t: t[0].format(t[1])),
        st.tuples(st.sampled_from(binary), inner, leaf | inner).map(
            lambda t: t[0].format(t[1], t[2])),
    )


def operations(leaves: tuple[str, ...], is_float: bool) -> st.SearchStrategy:
    """Source of a binary operation on one of ``leaves`` (so that an array
    expression is a parfor, never a bare argument or a constant)."""
    binary = _FLOAT_BINARY if is_float else _INT_BINARY
    return st.tuples(st.sampled_from(binary), st.sampled_from(leaves),
                     expressions(leaves, is_float), st.booleans()).map(
        lambda t: t[0].format(*((t[1], t[2]) if t[3] else (t[2], t[1]))))


@dataclass
class Operand:
    """An array argument: a view (``key``, maybe transposed) of ``base``, kept
    apart so each run gets its own copy and the bytes around the view are
    compared too."""

    base: np.ndarray
    key: tuple[slice, ...]
    transposed: bool

    def view_of(self, base: np.ndarray) -> np.ndarray:
        view = base[self.key]
        return view.T if self.transposed else view

    @property
    def view(self) -> np.ndarray:
        return self.view_of(self.base)


@dataclass
class Program:
    """A function's source and the operands to call it with."""

    source: str
    operands: tuple[Operand, ...]
    is_float: bool

    def __str__(self) -> str:
        shown = ", ".join(
            f"array(shape={op.view.shape}, dtype={op.base.dtype}, strides={op.view.strides}, "
            f"values={np.array2string(op.view, threshold=20, edgeitems=2)})"
            for op in self.operands)
        return f"{self.source}# args: {shown}"


@st.composite
def arrays(draw: st.DrawFn, dtype: str, shape: tuple[int, ...]) -> Operand:
    """An array of ``shape``, maybe a strided, reversed or transposed view."""
    transposed = len(shape) == 2 and draw(st.booleans())
    if transposed:
        shape = shape[::-1]
    steps = [draw(st.sampled_from((1, 1, 2, -1, -3))) for _ in shape]
    base_shape = tuple(n * abs(step) + draw(st.integers(0, 2)) for n, step in zip(shape, steps))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if np.issubdtype(dtype, np.integer):
        low = 0 if np.dtype(dtype).kind == "u" else -20
        base = rng.integers(low, 20, base_shape).astype(dtype)
    else:
        base = rng.uniform(-4, 4, base_shape).astype(dtype)
    # the first n elements along each axis, walking by step (from the end if negative)
    key = tuple(_first(n, step, length) for n, step, length in zip(shape, steps, base_shape))
    return Operand(base, key, transposed)


def _first(n: int, step: int, length: int) -> slice:
    """The first ``n`` elements of an axis of ``length``, walking by ``step``
    (from the end if negative)."""
    if step > 0:
        return slice(0, n * step, step)
    stop = length - 1 + n * step
    return slice(length - 1, stop if stop >= 0 else None, step)


def shapes() -> st.SearchStrategy:
    """1-D lengths around the work-group size (64) and beyond, or small 2-D shapes."""
    lengths = st.integers(0, 70) | st.sampled_from((1, 63, 64, 65, 1000, 4097))
    return st.tuples(lengths) | st.tuples(st.integers(0, 20), st.integers(0, 40))


@st.composite
def operands(draw: st.DrawFn) -> tuple[bool, Operand, Operand]:
    """Two arrays of one shape and of one kind (float or integer)."""
    is_float = draw(st.booleans())
    kinds = FLOAT_DTYPES if is_float else INT_DTYPES
    shape = draw(shapes())
    first = draw(arrays(draw(st.sampled_from(kinds)), shape))
    second = draw(arrays(draw(st.sampled_from(kinds)), first.view.shape))
    return is_float, first, second


@st.composite
def elementwise_programs(draw: st.DrawFn) -> Program:
    is_float, a, b = draw(operands())
    body = draw(operations(("a", "b"), is_float))
    return Program(f"def kernel(a, b):\n    return {body}\n", (a, b), is_float)


_REDUCERS = ("np.sum({})", "({}).sum()", "({}).max()", "({}).min()")


@st.composite
def reduction_programs(draw: st.DrawFn) -> Program:
    is_float, a, b = draw(operands())
    body = draw(operations(("a", "b"), is_float))
    # NumPy and Numba refuse max/min of an empty array (test_reliability checks it)
    reducers = _REDUCERS if a.view.size else _REDUCERS[:2]
    reducer = draw(st.sampled_from(reducers))
    return Program(f"def kernel(a, b):\n    return {reducer.format(body)}\n", (a, b), is_float)


@st.composite
def prange_programs(draw: st.DrawFn) -> Program:
    """A prange over the rows (and a serial or prange loop over the columns of
    2-D operands) whose body branches on a comparison, writing ``out`` and
    accumulating a sum."""
    is_float, a, b = draw(operands())
    two_d = a.view.ndim == 2
    index = "i, j" if two_d else "i"
    condition = "{} {} {}".format(draw(expressions(("x", "y"), is_float, 1)),
                                  draw(st.sampled_from(_COMPARISONS)),
                                  draw(expressions(("x", "y"), is_float, 1)))
    then = draw(expressions(("x", "y"), is_float))
    otherwise = draw(expressions(("x", "y"), is_float))
    body = textwrap.dedent(f"""\
        x = a[{index}]
        y = b[{index}]
        if {condition}:
            out[{index}] = {then}
            total += x
        else:
            out[{index}] = {otherwise}
        """)
    if two_d:
        inner = draw(st.sampled_from(("range", "numba.prange")))
        body = f"for j in {inner}(a.shape[1]):\n" + textwrap.indent(body, "    ")
    source = ("def kernel(a, b, out):\n    total = 0\n"
              "    for i in numba.prange(a.shape[0]):\n"
              + textwrap.indent(body, "        ") + "    return total\n")
    # a float result stored into an integer array would be undefined for NaN
    out_dtype = np.result_type(a.base, b.base) if is_float else np.int64
    out = draw(arrays(np.dtype(out_dtype).name, a.view.shape))
    return Program(source, (a, b, out), is_float)


def load(program: Program, directory: Path) -> object:
    """The program's function, from a file (its source lines appear in errors)."""
    path = directory / f"fuzz_{abs(hash(program.source)):x}.py"
    path.write_text("import numba\nimport numpy as np\n\n" + program.source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.kernel


def tolerance(program: Program, expected: object) -> dict[str, float]:
    """rtol/atol for comparing with the CPU: exact for integers; for floats a
    few ulps of the least precise float type, scaled by the values' magnitude and
    the square root of the number of terms (a reduction's order differs on the
    device, and device math may differ from the CPU's by ulps)."""
    if not program.is_float:
        return {"rtol": 0, "atol": 0}
    eps = max(np.finfo(op.base.dtype).eps for op in program.operands
              if np.issubdtype(op.base.dtype, np.floating))
    values = np.abs(np.asarray(expected, dtype=np.float64))
    finite = values[np.isfinite(values)]
    scale = max(1.0, float(finite.max()) if finite.size else 1.0)
    terms = max(op.view.size for op in program.operands)
    return {"rtol": 64 * eps, "atol": 64 * eps * scale * np.sqrt(max(1, terms))}


def compare(program: Program, directory: Path) -> None:
    """Run ``program`` with Numba on the CPU and with xpuc on the device, each
    on its own copy of the operands; the results and every operand's base agree."""
    kernel = load(program, directory)
    cpu_bases = [op.base.copy() for op in program.operands]
    device_bases = [op.base.copy() for op in program.operands]
    expected = numba.njit(kernel)(
        *[op.view_of(base) for op, base in zip(program.operands, cpu_bases)])
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        actual = xpuc.jit(kernel)(
            *[op.view_of(base) for op, base in zip(program.operands, device_bases)])
    stats = xpuc.stats()
    # a fresh function, compiled for the device; its kernels launched unless
    # an operand is empty (a parfor over an empty range launches nothing)
    assert stats["kernels_compiled"] > 0, "nothing was offloaded"
    assert stats["kernel_launches"] > 0 or not all(op.view.size for op in program.operands)
    assert stats["usm_allocs"] == stats["usm_frees"], stats
    assert np.asarray(actual).dtype == np.asarray(expected).dtype
    tol = tolerance(program, expected)
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), equal_nan=True, **tol)
    for cpu_base, device_base in zip(cpu_bases, device_bases):
        np.testing.assert_allclose(device_base, cpu_base, equal_nan=True, **tol)


PROGRAMS = {
    "elementwise": elementwise_programs(),
    "reduction": reduction_programs(),
    "prange": prange_programs(),
}


def fuzz(kind: str, examples: int, seed: int | None, directory: Path) -> None:
    """Compare ``examples`` programs of ``kind``; raise on the first (shrunk) mismatch."""

    @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(PROGRAMS[kind])
    def check(program: Program) -> None:
        print(f"--- {kind}\n{program}", flush=True)
        compare(program, directory)

    if seed is not None:
        from hypothesis import seed as with_seed

        check = with_seed(seed)(check)
    check()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="programs per kind")
    parser.add_argument("--seed", type=int, default=None,
                        help="random seed (default: derandomized, the same programs each run)")
    parser.add_argument("--kind", choices=sorted(PROGRAMS), action="append")
    options = parser.parse_args(argv)
    # Numba's notes on loops it did not parallelize, once per program: noise here
    warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
    with tempfile.TemporaryDirectory(prefix="xpuc-fuzz-") as directory:
        sys.path.insert(0, directory)
        for kind in options.kind or sorted(PROGRAMS):
            fuzz(kind, options.examples, options.seed, Path(directory))
    print("fuzz: all programs agree")


if __name__ == "__main__":
    main()
