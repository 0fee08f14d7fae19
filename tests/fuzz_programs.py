"""Differential fuzzer: random parfor programs run by xpuc under a device
context and by Numba on the CPU, results compared with a dtype-aware tolerance.

A program is Python source (an array expression, a whole-array or prange
reduction, or a prange body with a branch) plus inputs of random shapes,
dtypes and strided views. ``python tests/fuzz_programs.py [--examples N]
[--seed S]`` runs it on demand: the same (derandomized) programs each run
unless ``--seed`` is given, which draws them from that seed;
tests/test_fuzz.py runs a bounded, derandomized session in a subprocess, so
that a crash fails a test instead of ending pytest. Each program is printed
before it runs, so the last one printed is the one that crashed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import os
import re
import sys
import tempfile
import textwrap
import warnings
from collections.abc import Iterator
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
    # a range or a slice of the program may be empty, though no operand is
    may_launch_nothing: bool = False

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
    """1-D lengths around the work-group size (64) and beyond, or small 2-D
    and 3-D shapes."""
    lengths = st.integers(0, 70) | st.sampled_from((1, 63, 64, 65, 1000, 4097))
    return st.tuples(lengths) | st.tuples(st.integers(0, 20), st.integers(0, 40)) | \
        st.tuples(st.integers(0, 6), st.integers(0, 7), st.integers(0, 9))


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
    """A prange over the rows (and serial or prange loops over the other
    axes of 2-D and 3-D operands) whose body branches on a comparison, writing ``out`` and
    accumulating a sum."""
    is_float, a, b = draw(operands())
    ndim = a.view.ndim
    index = ", ".join("ijk"[:ndim])
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
    for axis in reversed(range(1, ndim)):  # the innermost loop first
        inner = draw(st.sampled_from(("range", "numba.prange")))
        body = f"for {'ijk'[axis]} in {inner}(a.shape[{axis}]):\n" + \
            textwrap.indent(body, "    ")
    source = ("def kernel(a, b, out):\n    total = 0\n"
              "    for i in numba.prange(a.shape[0]):\n"
              + textwrap.indent(body, "        ") + "    return total\n")
    # a float result stored into an integer array would be undefined for NaN
    out_dtype = np.result_type(a.base, b.base) if is_float else np.int64
    out = draw(arrays(np.dtype(out_dtype).name, a.view.shape))
    return Program(source, (a, b, out), is_float)


# ---- loops: prange steps and empty slices -------------------------------------
#
# A prange over ``range(start, stop, step)`` with steps of either sign and
# bounds that may leave it empty (rows, and maybe a nested prange over
# columns, of 2-D operands), or array expressions, stores and sums over
# slices that may be empty or stepped. The reference is Numba without
# ``parallel=True``, where a prange is a range (its parfors take a step of 1
# and refuse empty slices' shapes).

# the bounds of an axis of length n whose iterations are all in [0, n)
_FORWARD_STARTS = ("0", "1", "2", "{n} // 2", "{n} - 1", "{n}")
_FORWARD_STOPS = ("0", "1", "{n} // 2", "{n} - 1", "{n}")
_BACKWARD_STARTS = ("{n} - 1", "{n} - 2", "{n} // 2", "0", "-1")
_BACKWARD_STOPS = ("-1", "0", "1", "{n} // 2", "{n} - 1")
_STEPS = (1, 2, 3, 5, -1, -2, -3)
# bounds of a slice: clipped, so any may be past the end or before the start
_SLICE_BOUNDS = ("", "0", "1", "{n} // 2", "{n} - 1", "{n}", "{n} + 2", "-1")


@st.composite
def stepped_range(draw: st.DrawFn, length: str) -> str:
    """``start, stop, step`` of a range over an axis of ``length`` (source)."""
    step = draw(st.sampled_from(_STEPS))
    starts, stops = ((_FORWARD_STARTS, _FORWARD_STOPS) if step > 0
                     else (_BACKWARD_STARTS, _BACKWARD_STOPS))
    start, stop = (draw(st.sampled_from(bounds)).format(n=length) for bounds in (starts, stops))
    return f"{start}, {stop}, {step}"


@st.composite
def loop_programs(draw: st.DrawFn) -> Program:
    """A stepped prange (maybe in a serial loop, and with stepped loops over
    the other axes of 2-D and 3-D operands) writing ``out`` at its index and
    summing, or an array expression over maybe empty, maybe stepped slices
    of the operands, stored into ``out``'s slice or summed."""
    is_float, a, b = draw(operands())
    out_dtype = np.result_type(a.base, b.base) if is_float else np.int64
    out = draw(arrays(np.dtype(out_dtype).name, a.view.shape))
    ndim = a.view.ndim
    if draw(st.booleans()):
        key = ":".join(draw(st.sampled_from(_SLICE_BOUNDS)).format(n="n") for _ in range(2))
        key += draw(st.sampled_from(("", ":2", ":-1", ":-2")))
        value = draw(operations((f"a[{key}]", f"b[{key}]"), is_float))
        last = draw(st.sampled_from((f"out[{key}] = {value}", f"return np.sum({value})")))
        body = ["n = a.shape[0]", last]
    else:
        index = ", ".join("ijk"[:ndim])
        # a serial loop around the prange (a parfor in a host loop) adds its count
        repeated = draw(st.booleans())
        inner = draw(expressions(("x", "y"), is_float)) + (" + r" if repeated else "")
        lines = [f"x = a[{index}]", f"y = b[{index}]", f"out[{index}] = {inner}"]
        for axis in reversed(range(1, ndim)):  # the innermost loop first
            loop = draw(st.sampled_from(("range", "numba.prange")))
            lines = [f"for {'ijk'[axis]} in {loop}({draw(stepped_range(f'a.shape[{axis}]'))}):",
                     *("    " + line for line in lines)]
        # x is unset after an empty inner loop: the sum is of the rows walked
        lines.append("total += i" if ndim > 1 else "total += x")
        body = [f"for i in numba.prange({draw(stepped_range('a.shape[0]'))}):",
                *("    " + line for line in lines)]
        if repeated:
            body = ["for r in range(2):", *("    " + line for line in body)]
        body = ["total = 0", *body, "return total"]
    source = "def kernel(a, b, out):\n" + "".join(f"    {line}\n" for line in body)
    return Program(source, (a, b, out), is_float, may_launch_nothing=True)


def load(source: str, directory: Path) -> object:
    """The function ``kernel`` of ``source``, from a file (its source lines
    appear in errors)."""
    path = directory / f"fuzz_{abs(hash(source)):x}.py"
    path.write_text("import numba\nimport numpy as np\n\n" + source)
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


HOST_PARFOR_MAX = "XPUC_HOST_PARFOR_MAX"


@contextlib.contextmanager
def environment_variable(name: str, value: str | None) -> Iterator[None]:
    """The environment variable ``name`` set to ``value`` (``None``: unset)."""
    def set_value(setting: str | None) -> None:
        if setting is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = setting

    before = os.environ.get(name)
    set_value(value)
    try:
        yield
    finally:
        set_value(before)


def compare(program: Program, directory: Path) -> None:
    """Run ``program`` with Numba on the CPU and with xpuc on the device, each
    on its own copy of the operands; the results and every operand's base agree.
    Every parfor is a kernel (the cost model off, as tests/conftest.py sets it)."""
    kernel = load(program.source, directory)
    cpu_bases = [op.base.copy() for op in program.operands]
    device_bases = [op.base.copy() for op in program.operands]
    expected = numba.njit(kernel)(
        *[op.view_of(base) for op, base in zip(program.operands, cpu_bases)])
    xpuc.reset_stats()
    with environment_variable(HOST_PARFOR_MAX, "0"), xpuc.device_context(DEVICE):
        actual = xpuc.jit(kernel)(
            *[op.view_of(base) for op, base in zip(program.operands, device_bases)])
    stats = xpuc.stats()
    # a fresh function, compiled for the device; its kernels launched unless
    # an operand is empty (a parfor over an empty range launches nothing)
    assert stats["kernels_compiled"] > 0, "nothing was offloaded"
    assert (stats["kernel_launches"] > 0 or program.may_launch_nothing
            or not all(op.view.size for op in program.operands))
    assert stats["usm_allocs"] == stats["usm_frees"], stats
    tol = tolerance(program, expected)
    if expected is None:  # a program that only stores
        assert actual is None, actual
    else:
        assert np.asarray(actual).dtype == np.asarray(expected).dtype
        np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), equal_nan=True,
                                   **tol)
    for cpu_base, device_base in zip(cpu_bases, device_bases):
        np.testing.assert_allclose(device_base, cpu_base, equal_nan=True, **tol)


# ---- aliasing: stores whose operands share memory with their target ----------
#
# A program takes x and y, two views of one array, and b of another; its
# statements store array expressions into views of x or y that read other
# views of the same memory (shifted, reversed, strided, transposed, a row or
# a column broadcast, the same view), or store a scalar or a masked view
# (``m = x[1:] > 0; x[:-1][m] = x[::-1][1:][m]``), or store a scalar into
# all of x or y and then return an expression of x, y and b (a loop Numba
# fused with the store's). The reference is the
# Python function run by NumPy, which reads every operand as if before any
# element is written: a race that Numba shares is a mismatch here.

ALIASING_FLOAT_DTYPES = ("float64", "float32")
# no int8/uint8: Numba types a Python int constant as int64, so an int8
# expression overflows where NumPy's wraps (a typing difference, not aliasing)
ALIASING_INT_DTYPES = ("int64", "int32")
_AXIS_SLICES = (":", "1:", ":-1", "::-1", "1::2", ":-1:2")
_VECTOR_VIEWS = ("{0}", "{0}[1:]", "{0}[:-1]", "{0}[2:]", "{0}[1:-1]", "{0}[::-1]",
                 "{0}[1:][::-1]", "{0}[::2]", "{0}[1::2]", "{0}[:-1:2]", "{0}[::-2]",
                 "{0}[:{0}.shape[0] // 2]", "{0}[{0}.shape[0] - {0}.shape[0] // 2:]",
                 "{0}[:1]", "{0}[-1:]")
_MATRIX_VIEWS = tuple(
    [f"{{0}}[{rows}, {columns}]" for rows in _AXIS_SLICES for columns in _AXIS_SLICES]
    + [f"{{0}}[{rows}, {columns}].T" for rows in _AXIS_SLICES for columns in _AXIS_SLICES]
    + ["{0}", "{0}.T", "{0}[:1]", "{0}[:, :1]", "{0}[-1:, ::-1]", "{0}.T[::-1]",
       "{0}.T[:, ::-1]", "{0}[::-1].T[1:]"])
# a row or a column: an index of an empty axis is out of bounds
_MATRIX_LINES = ("{0}[0]", "{0}[-1]", "{0}[:, 0]", "{0}[:, -1]")
_CUBE_AXIS_SLICES = (":", "1:", "::-1", ":-1:2")
_CUBE_VIEWS = tuple(
    [f"{{0}}[{a}, {b}, {c}]{t}" for a in _CUBE_AXIS_SLICES for b in _CUBE_AXIS_SLICES
     for c in _CUBE_AXIS_SLICES for t in ("", ".T")]
    + ["{0}", "{0}.T", "{0}.T[::-1]", "{0}[:, ::-1].T[1:]"])
# a plane or a line of a cube, broadcast over it
_CUBE_LINES = ("{0}[0]", "{0}[-1, ::-1]", "{0}[:, -1]", "{0}[0, 0]", "{0}[-1, :, 0]")
_INPLACE = ("+=", "-=", "*=")


@functools.cache
def views(name: str, shape: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """Views of an array ``name`` of ``shape``, as source, with their shapes."""
    if len(shape) == 1:
        patterns = _VECTOR_VIEWS
    elif len(shape) == 2:
        patterns = _MATRIX_VIEWS + (_MATRIX_LINES if min(shape) > 0 else ())
    else:
        patterns = _CUBE_VIEWS + (_CUBE_LINES if min(shape) > 0 else ())
    probe = {"probe": np.empty(shape)}
    return {pattern.format(name): eval(pattern.format("probe"), probe).shape  # noqa: S307
            for pattern in patterns}


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...], stretch: bool) -> bool:
    """Whether an array of ``shape`` broadcasts to ``target``: by rank only
    (a row over a matrix), or with ``stretch`` also an extent of 1 over a
    longer one, which NumPy does and a slice store does, but Numba's
    parallel array expressions assert equal instead (SPEC rule 9's size
    checks)."""
    if len(shape) > len(target):
        return False
    aligned = target[len(target) - len(shape):]
    return all(n == m or stretch and n == 1 for n, m in zip(shape, aligned))


def _assignable(view: str) -> str:
    """``view`` as the target of an assignment (``x.T`` is not one)."""
    return view if view.endswith("]") else view + "[:]"


# host statements only: a scalar stored or filled in, a masked store, and of
# floats a scalar stored into all of x or y then an expression of x, y and b
# read (``r``, returned): a loop that Numba fused with the store's where the
# array analysis equates their extents, reading y[i] as it wrote x[i]
_HOST_FORMS = ("scalar", "fill", "masked")


@st.composite
def aliasing_statements(draw: st.DrawFn, names: tuple[str, ...], written: tuple[str, ...],
                        shape: tuple[int, ...], is_float: bool, host: bool = False) -> str:
    """One store into a view of one of ``written``: an in-place operator, a
    slice assignment or a ufunc's ``out=``, of an expression over views of
    ``names`` that broadcast to the target; in ``host`` code also a scalar
    stored or filled in, or a masked store ``t[m] = v[m]`` (two lines)."""
    name = draw(st.sampled_from(written))
    target, target_shape = draw(st.sampled_from(sorted(views(name, shape).items())))
    # operands mostly of the target's own array
    sources = (name,) * 2 + names
    leaves = {stretch: tuple(sorted({view for source in sources
                                     for view, extents in views(source, shape).items()
                                     if _broadcasts_to(extents, target_shape, stretch)}))
              for stretch in (False, True)}
    chosen = tuple(draw(st.lists(st.sampled_from(leaves[False]), min_size=1, max_size=3)))
    # a view alone (``x[1:] += x[:-1]``) or an operation on one
    value = draw(st.sampled_from(chosen) | operations(chosen, is_float))
    form = draw(st.sampled_from(("inplace", "store", "out", "stretched store")
                                + (_HOST_FORMS if host else ())))
    if form == "stretched store":  # x[1:] = x[:1]
        return f"{_assignable(target)} = {draw(st.sampled_from(leaves[True]))}"
    constant = draw(st.sampled_from(_FLOAT_CONSTANTS if is_float else _INT_CONSTANTS))
    if form in ("scalar", "fill") and is_float and draw(st.booleans()):  # then a read
        store = draw(st.sampled_from((f"{name}[:] = {constant}", f"{name}.fill({constant})")))
        # reading the other one (of the store's extents) and the stored one
        other = next(other for other in written if other != name)
        return f"{store}\nr = {draw(operations((other,), is_float))} + {name}"
    if form == "scalar":
        return f"{_assignable(target)} = {constant}"
    if form == "fill":
        return f"{target}.fill({constant})"
    if form == "masked":  # mask and value of the target's own shape
        same = sorted({view for source in sources for view, extents in
                       views(source, shape).items() if extents == target_shape})
        mask, read = (draw(st.sampled_from(same)) for _ in range(2))
        return f"m = {mask} > {constant}\n{target}[m] = {read}[m]"
    if form == "inplace":
        operator = draw(st.sampled_from(_INPLACE + (("/=",) if is_float else ())))
        if operator == "/=":  # by at least 1: near 0, a last-ulp difference of a
            value = f"(np.abs({value}) + 1.0)"  # ufunc (exp) would move it far
        return f"{_assignable(target) if '.T' in target else target} {operator} {value}"
    if form == "store":
        return f"{_assignable(target)} = {value}"
    ufunc = draw(st.sampled_from(("np.add", "np.subtract", "np.multiply", "np.maximum")))
    return f"{ufunc}({draw(st.sampled_from(chosen))}, {value}, out={target})"


@dataclass
class AliasingProgram:
    """A function ``kernel(x, y, b)`` and its arguments: x and y views
    (``keys``, y maybe transposed) of ``bases[0]``, b all of ``bases[1]``;
    the USM type of their dpnp copies."""

    source: str
    bases: tuple[np.ndarray, np.ndarray]
    keys: tuple[tuple[slice, ...], tuple[slice, ...]]
    y_transposed: bool
    is_float: bool
    usm_type: str

    def arguments(self, bases: tuple) -> tuple:
        x, y = bases[0][self.keys[0]], bases[0][self.keys[1]]
        return x, (y.T if self.y_transposed else y), bases[1]

    def __str__(self) -> str:
        transposed = ".T" if self.y_transposed else ""
        x, y = (", ".join(f"{k.start}:{'' if k.stop is None else k.stop}:{k.step or 1}"
                          for k in key) for key in self.keys)
        return (f"{self.source}# shared = {self.bases[0].dtype} {self.bases[0].shape}, "
                f"x = shared[{x}], y = shared[{y}]{transposed}, "
                f"b = {self.bases[1].dtype} {self.bases[1].shape}, usm_type={self.usm_type}")


def _window(offset: int, length: int, step: int, backwards: bool) -> slice:
    """``length`` elements from ``offset`` on, ``step`` apart, maybe walked
    backwards."""
    last = offset + (length - 1) * step
    if not backwards or not length:  # (a stop before 0 would wrap around)
        return slice(offset, last + 1 if length else offset, step)
    return slice(last, offset - 1 if offset else None, -step)


def _span(length: int, step: int) -> int:
    """How many elements of an axis ``length`` elements ``step`` apart cover."""
    return (length - 1) * step + 1 if length else 0


def _aliasing_shapes() -> st.SearchStrategy:
    """Sizes on both sides of the cost model's threshold (thousands of
    elements on opencl:cpu), 2-D and 3-D ones often square (first and last
    extents equal) so that a transpose fits."""
    length = st.integers(0, 40) | st.sampled_from((63, 64, 65, 1000, 30000))
    side = st.integers(0, 9) | st.sampled_from((33, 200))
    edge = st.integers(0, 5) | st.just(13)
    return (st.tuples(length) | st.tuples(side, side) | st.tuples(side).map(lambda t: t * 2)
            | st.tuples(edge, edge, edge) | st.tuples(edge, edge).map(lambda t: (*t, t[0])))


@st.composite
def _shared_views(draw: st.DrawFn, shape: tuple[int, ...], in_prange: bool
                  ) -> tuple[tuple[int, ...], list[tuple[slice, ...]], bool]:
    """The shared array's shape and the keys of x and y in it, and whether y
    is transposed. A prange loop's y meets x only where the iteration that
    writes an element reads it (another row would be a race in the program):
    in 1-D, x itself, the other half or the other elements; in 2-D and 3-D,
    the same row, maybe shifted, stepped or reversed. Elsewhere x and y are
    windows of the shared array, each maybe reversed or taking every other
    element along an axis, so that they meet at some elements only."""
    if in_prange and len(shape) == 1:
        n = shape[0]
        layout = draw(st.sampled_from(("same", "halves", "interleaved")))
        keys = {"same": [(slice(0, n),)] * 2,
                "halves": [(slice(0, n),), (slice(n, 2 * n),)],
                "interleaved": [(slice(0, 2 * n, 2),), (slice(1, 2 * n, 2),)]}[layout]
        return (n if layout == "same" else 2 * n,), keys, False
    # each iteration owns its row: axis 0 of a prange's x and y is the shared array's
    free = [not (in_prange and axis == 0) for axis in range(len(shape))]
    steps = [[draw(st.sampled_from((1, 1, 2))) if free[axis] else 1
              for axis in range(len(shape))] for _ in range(2)]
    extents = [n * max(steps[0][axis], steps[1][axis]) + (draw(st.integers(0, 2))
                                                          if free[axis] else 0)
               for axis, n in enumerate(shape)]
    keys = [tuple(_window(draw(st.integers(0, extent - _span(n, step))), n, step,
                          free[axis] and draw(st.booleans()))
                  for axis, (n, step, extent) in enumerate(zip(shape, key_steps, extents)))
            for key_steps in steps]
    square = len(shape) >= 2 and shape[0] == shape[-1]
    y_transposed = square and not in_prange and draw(st.booleans())
    return tuple(extents), keys, y_transposed


@st.composite
def aliasing_programs(draw: st.DrawFn) -> AliasingProgram:
    """One to three stores in host code (array expressions), or a prange
    loop storing at its own index: element ``i`` of x from x, y and b at
    ``i``, or, for 2-D and 3-D operands, a store into a view of row ``i`` of x from
    views of that row and of row ``i`` of y and b."""
    is_float = draw(st.booleans())
    dtypes = ALIASING_FLOAT_DTYPES if is_float else ALIASING_INT_DTYPES
    shape = draw(_aliasing_shapes())
    in_prange = draw(st.booleans())
    shared_shape, keys, y_transposed = draw(_shared_views(shape, in_prange))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bases = []
    for base_shape in (shared_shape, shape):
        values = (rng.uniform(-4, 4, base_shape) if is_float
                  else rng.integers(-20, 20, base_shape))
        bases.append(values.astype(draw(st.sampled_from(dtypes))))
    if not in_prange:
        body = draw(st.lists(aliasing_statements(("x", "y", "b"), ("x", "y"), shape, is_float,
                                                 host=True),
                             min_size=1, max_size=3))
        body = [line for statement in body for line in statement.split("\n")]
        if any(line.startswith("r = ") for line in body):
            body.append("return r")
    elif len(shape) == 1:
        body = ["for i in numba.prange(x.shape[0]):",
                f"    x[i] = {draw(operations(('x[i]', 'y[i]', 'b[i]'), is_float))}"]
    else:
        store = draw(aliasing_statements(("row", "other", "third"), ("row",), shape[1:],
                                         is_float))
        body = ["for i in numba.prange(x.shape[0]):", "    row = x[i]", "    other = y[i]",
                "    third = b[i]", f"    {store}"]
    source = "def kernel(x, y, b):\n" + "".join(f"    {line}\n" for line in body)
    return AliasingProgram(source, tuple(bases), tuple(keys), y_transposed, is_float,
                           draw(st.sampled_from(("shared", "device"))))


# what the calls did: some parfor launched as a kernel, all on the host (the
# cost model), or refused at compile time
ALIASING_OUTCOMES = {"kernels": 0, "host": 0, "refused": 0}


def run_aliasing(program: AliasingProgram, directory: Path) -> None:
    """Run ``program`` with NumPy (the reference) and with xpuc on NumPy
    arrays in a device context and on dpnp arrays, each with the cost model
    on (tiny parfors on the host) and off (every parfor a kernel); every array
    agrees with NumPy's afterwards. A refusal must be xpuc's, naming the
    program's line."""
    import dpnp

    kernel = load(program.source, directory)
    expected = [base.copy() for base in program.bases]
    with np.errstate(all="ignore"):
        returned = kernel(*program.arguments(expected))
    function = xpuc.jit(kernel)
    tol = {"rtol": 0, "atol": 0}
    if program.is_float:
        eps = max(np.finfo(base.dtype).eps for base in program.bases)
        finite = [np.abs(base[np.isfinite(base)]).max(initial=1.0) for base in expected]
        tol = {"rtol": 64 * eps, "atol": 64 * eps * float(max(finite))}
    for library in ("numpy", "dpnp"):
        for threshold in (None, "0"):
            if library == "numpy":
                bases = [base.copy() for base in program.bases]
            else:
                bases = [dpnp.asarray(base, device=DEVICE, usm_type=program.usm_type)
                         for base in program.bases]
            xpuc.reset_stats()
            try:
                with (environment_variable(HOST_PARFOR_MAX, threshold),
                      xpuc.device_context(DEVICE)):
                    result = function(*program.arguments(bases))
            except xpuc.UnsupportedError as error:
                assert re.match(rf"{re.escape(str(directory))}/fuzz_\w+\.py:\d+: ", str(error)), \
                    f"a refusal that does not name the program's line: {error}"
                print(f"refused: {error}", flush=True)
                ALIASING_OUTCOMES["refused"] += 1
                return
            ALIASING_OUTCOMES["kernels" if xpuc.stats()["kernel_launches"] else "host"] += 1
            results = (("shared", "b", "the result"), (*expected, returned), (*bases, result))
            for name, want, got in zip(*results):
                if want is None:  # a program that only stores
                    continue
                np.testing.assert_allclose(
                    dpnp.asnumpy(got) if isinstance(got, dpnp.ndarray) else got, want,
                    equal_nan=True,
                    **tol, err_msg=f"{name} differs from NumPy's on {library} arrays, "
                                   f"{HOST_PARFOR_MAX}={threshold or 'unset'}")
            del result, results, got  # the result's memory, which the call allocated
            stats = xpuc.stats()
            assert stats["usm_allocs"] == stats["usm_frees"], stats


# ---- float32: a device without fp64 (XPUC_FP64=0) ---------------------------
#
# A program computes a float32 expression per element (a prange body, maybe
# 2-D, maybe summed) or over whole arrays, mixing float32 data with int
# scalars (loop indices, a shape, int expressions of them) and Python
# literals. The reference is NumPy 2 evaluating the same source with
# np.float32 data and Python ints, which keeps it float32 (NEP 50); xpuc must
# agree within a few ulps, and no kernel may use f64. An int only ever meets
# float32 (a division of ints is float64, which the rule refuses).

FP64_VARIABLE = "XPUC_FP64"
_F32_UNARY = ("np.sin({})", "np.cos({})", "np.exp(-np.abs({}))", "np.sqrt(np.abs({}))",
              "np.tanh({})", "np.abs({})", "(-{})")
# a float beside a float or an int (maybe the other way round)
_F32_MIXED = ("({} + {})", "({} - {})", "({} * {})", "np.minimum({}, {})",
              "np.maximum({}, {})")
_F32_FLOATS = ("({} / (np.abs({}) + 1))", "np.hypot({}, {})")
_F32_CONSTANTS = ("0.5", "-1.25", "2.0", "0.003")
_F32_INT_CONSTANTS = ("2", "-3", "7", "0")
_F32_INT_BINARY = ("({} + {})", "({} - {})", "({} * {})", "({} // 3)", "({} % 5)")


def _ints(leaves: tuple[str, ...]) -> st.SearchStrategy:
    """An int expression: a variable or a literal, maybe in an int operation."""
    leaf = st.sampled_from(leaves + _F32_INT_CONSTANTS)
    return leaf | st.tuples(st.sampled_from(_F32_INT_BINARY), leaf, leaf).map(
        lambda t: t[0].format(t[1], t[2]))


def float32_expressions(floats: tuple[str, ...], ints: tuple[str, ...], branches: bool,
                        depth: int = 3) -> st.SearchStrategy:
    """Source of a float32 expression over ``floats`` (float32 values) and
    ``ints`` (int scalars), with ``branches`` a conditional expression too."""
    leaf = st.sampled_from(floats) | st.sampled_from(_F32_CONSTANTS)
    if depth == 0:
        return leaf
    inner = float32_expressions(floats, ints, branches, depth - 1)
    forms = [
        st.sampled_from(floats),
        st.tuples(st.sampled_from(_F32_UNARY), inner).map(lambda t: t[0].format(t[1])),
        st.tuples(st.sampled_from(_F32_MIXED), inner, leaf | inner | _ints(ints),
                  st.booleans()).map(
            lambda t: t[0].format(*((t[1], t[2]) if t[3] else (t[2], t[1])))),
        st.tuples(st.sampled_from(_F32_FLOATS), inner, leaf | inner).map(
            lambda t: t[0].format(t[1], t[2])),
    ]
    if branches:
        forms.append(st.tuples(inner, inner, st.sampled_from(_COMPARISONS), _ints(ints),
                               inner).map(lambda t: f"({t[0]} if {t[4]} {t[2]} {t[3]} "
                                                    f"else {t[1]})"))
    return st.one_of(forms)


@dataclass
class Float32Program:
    """A function ``kernel(a, b, out)`` over float32 arrays, and whether it
    returns a reduction (``total``), an array (``whole``) or only fills ``out``."""

    source: str
    a: np.ndarray
    b: np.ndarray
    form: str
    expression: str

    def __str__(self) -> str:
        return f"{self.source}# a, b, out: float32 {self.a.shape}"


@st.composite
def float32_programs(draw: st.DrawFn) -> Float32Program:
    form = draw(st.sampled_from(("prange", "prange 2-D", "total", "whole")))
    if form == "prange 2-D":
        shape = draw(st.tuples(st.integers(0, 9) | st.just(40), st.integers(0, 40)))
    else:
        shape = draw(st.tuples(st.integers(0, 70) | st.sampled_from((1000, 4097))))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a, b = (rng.uniform(-4, 4, shape).astype(np.float32) for _ in range(2))
    if form == "whole":
        expression = draw(float32_expressions(("a", "b"), ("n",), False).filter(
            # an operation on an array: a parfor
            lambda source: source not in "ab" and re.search(r"\b[ab]\b", source)))
        body = ["n = a.shape[0]", f"return {expression}"]
    elif form == "prange 2-D":
        expression = draw(float32_expressions(("x", "y"), ("i", "j", "n"), True))
        body = ["n = a.shape[1]", "for i in numba.prange(a.shape[0]):",
                "    for j in range(n):", "        x = a[i, j]", "        y = b[i, j]",
                f"        out[i, j] = {expression}"]
    else:
        expression = draw(float32_expressions(("x", "y"), ("i", "n"), True))
        store = "total += " if form == "total" else "out[i] = "
        body = ["n = a.shape[0]", "total = 0.0", "for i in numba.prange(n):", "    x = a[i]",
                "    y = b[i]", f"    {store}{expression}", "return total"]
    source = "def kernel(a, b, out):\n" + "".join(f"    {line}\n" for line in body)
    return Float32Program(source, a, b, form, expression)


def _float32_reference(program: Float32Program, dtype: type) -> tuple[np.ndarray, float]:
    """``out`` (the array returned, for a whole-array program) and the sum, by
    NumPy 2 in ``dtype``: float32, or float64 to see how much float32's
    rounding moves the result."""
    a, b = program.a.astype(dtype), program.b.astype(dtype)
    # a Python float is float32 on the device, even alone (``np.sin(0.5)``)
    expression = re.sub(r"(?<![\w.])(\d+\.\d+)", rf"np.{dtype.__name__}(\1)",
                        program.expression)
    with np.errstate(all="ignore"):
        if program.form == "whole":
            out = eval(expression, {"np": np, "a": a, "b": b, "n": a.shape[0]})  # noqa: S307
            assert out.dtype == dtype, f"NumPy computes {out.dtype}"
            return out, 0.0
        code = compile(expression, "<expression>", "eval")
        out, total = np.zeros(a.shape, dtype), dtype(0)
        for index in np.ndindex(a.shape):  # Python ints, as NumPy 2 sees the device's
            value = eval(code, {"np": np, "x": a[index], "y": b[index], "i": index[0],  # noqa: S307
                                "j": index[-1], "n": a.shape[-1]})
            assert value.dtype == dtype, f"NumPy computes {value.dtype}"
            out[index] = value
            total += value
    return out, float(total)


def run_float32(program: Float32Program, directory: Path) -> None:
    """Run ``program`` by xpuc with fp64 off and compare it with NumPy's
    float32: within a few ulps, plus four times what computing in float64
    would move it (the expression's own conditioning)."""
    kernel = load(program.source, directory)
    out = np.zeros_like(program.a)
    function = xpuc.jit(kernel)
    xpuc.reset_stats()
    with environment_variable(FP64_VARIABLE, "0"), environment_variable(HOST_PARFOR_MAX, "0"), \
            xpuc.device_context(DEVICE):
        returned = function(program.a, program.b, out)
        assert xpuc.stats()["kernels_compiled"] > 0, "nothing was offloaded"
        assert "f64" not in function.inspect_mlir("spirv"), "a kernel computes in float64"
    single, returned_single = _float32_reference(program, np.float32)
    double, returned_double = _float32_reference(program, np.float64)
    eps = float(np.finfo(np.float32).eps)
    if program.form == "total":  # summed in another order: error grows with the terms
        allowed = (4 * abs(returned_single - returned_double) + 8 * eps * max(
            1.0, np.sqrt(program.a.size) * float(np.abs(double).sum())))
        assert abs(returned - returned_single) <= allowed, (returned, returned_single)
        return
    if program.form == "whole":
        assert returned.dtype == np.float32, returned.dtype
        out = returned
    allowed = 4 * np.abs(single - double) + 8 * eps * np.maximum(np.abs(single), 1.0)
    bad = ~(np.abs(out.astype(np.float64) - single) <= allowed)
    assert not bad.any(), (f"{bad.sum()} of {bad.size} differ: xpuc {out[bad][:5]}, "
                           f"NumPy float32 {single[bad][:5]}, float64 {double[bad][:5]}")


# ---- library: NumPy functions offloaded on USM arrays ---------------------------
#
# A program returns one NumPy function of an array ``a`` (and ``b`` of its
# shape): a reduction of the whole array or along an axis (a constant, maybe
# negative; the method forms too), np.argmin / np.argmax, np.where, np.clip,
# ufuncs that meet NaN (np.minimum, np.fmax), or a product. Arrays are 1-D or
# 2-D, maybe empty or of extent 1, with NaNs among floats. The reference is
# Numba on the CPU, or NumPy where Numba has no form of the call (an axis);
# xpuc runs it on dpnp arrays (USM "device" and "shared") and on NumPy arrays
# in a device context. Both may refuse alike (an error of the same class),
# and xpuc may refuse alone with an UnsupportedError naming the line.

_LIBRARY_WHOLE = ("np.sum(a)", "a.sum()", "np.prod(a)", "np.max(a)", "np.min(a)", "a.max()",
                  "np.amin(a)", "np.mean(a)", "a.mean()", "np.argmin(a)", "np.argmax(a)",
                  "a.argmin()", "a.argmax()")
_LIBRARY_AXIS = ("np.sum(a, axis={})", "a.sum(axis={})", "a.sum({})", "np.prod(a, axis={})",
                 "np.max(a, axis={})", "a.min(axis={})", "np.mean(a, axis={})", "a.mean({})")
_LIBRARY_ELEMENTWISE = ("np.where(a > b, a, b)", "np.where(a > 0, a, b)",
                        "np.clip(a, -1, 2)", "np.clip(a, b, 3)", "np.minimum(a, b)",
                        "np.maximum(a, b)", "np.fmin(a, b)", "np.fmax(a, b)", "np.sign(a)",
                        "np.abs(a) + b", "(a > b) & (b < 1)")


@dataclass
class LibraryProgram:
    source: str
    a: np.ndarray
    b: np.ndarray

    def __str__(self) -> str:
        return (f"{self.source}# a: {self.a.dtype} {self.a.shape} "
                f"{np.array2string(self.a, threshold=12)}, b: {self.b.dtype}")


@st.composite
def library_programs(draw: st.DrawFn) -> LibraryProgram:
    dtype = draw(st.sampled_from(("float64", "float32", "int32", "int64", "uint8", "int8")))
    shape = draw(st.tuples(st.integers(0, 9) | st.just(70))
                 | st.tuples(st.integers(0, 5), st.integers(0, 6) | st.just(65)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a, b = (rng.integers(0 if dtype == "uint8" else -4, 5, shape).astype(dtype)
            for _ in range(2))
    if dtype.startswith("float") and a.size and draw(st.booleans()):
        a.flat[draw(st.integers(0, a.size - 1))] = np.nan
    forms = [st.sampled_from(_LIBRARY_WHOLE), st.sampled_from(_LIBRARY_ELEMENTWISE)]
    if a.ndim == 2:
        forms.append(st.tuples(st.sampled_from(_LIBRARY_AXIS), st.sampled_from((0, 1, -1, -2)))
                     .map(lambda t: t[0].format(t[1])))
        forms.append(st.just("a @ b.T"))
    call = draw(st.one_of(forms))
    return LibraryProgram(f"def kernel(a, b):\n    return {call}\n", a, b)


def _outcome(call) -> object:
    """What ``call()`` returned (NumPy arrays for USM ones), or the class of
    the exception it raised."""
    import dpnp

    try:
        result = call()
    except Exception as error:  # compared by class
        return type(error)
    return dpnp.asnumpy(result) if isinstance(result, dpnp.ndarray) else result


def run_library(program: LibraryProgram, directory: Path) -> None:
    """Run ``program`` by Numba (NumPy where Numba has no form of the call)
    and by xpuc on dpnp and NumPy arrays; results agree in value and, for
    arrays, dtype, or both raise alike."""
    import dpnp

    kernel = load(program.source, directory)
    expected = _outcome(lambda: numba.njit(kernel)(program.a.copy(), program.b.copy()))
    # Numba has no form of the call: neither has xpuc on NumPy arrays
    numba_lacks_it = expected is numba.core.errors.TypingError
    if numba_lacks_it:
        with np.errstate(all="ignore"):
            expected = _outcome(lambda: kernel(program.a.copy(), program.b.copy()))
    function = xpuc.jit(kernel)

    def in_context() -> object:
        with environment_variable(HOST_PARFOR_MAX, "0"), xpuc.device_context(DEVICE):
            return function(program.a.copy(), program.b.copy())

    runs = {"numpy in a context": in_context}
    for usm_type in ("device", "shared"):
        runs[usm_type] = functools.partial(
            lambda usm_type: function(*(dpnp.asarray(v, device=DEVICE, usm_type=usm_type)
                                        for v in (program.a, program.b))), usm_type)
    for name, call in runs.items():
        actual = _outcome(call)
        if actual is xpuc.UnsupportedError or (
                numba_lacks_it and actual is numba.core.errors.TypingError):
            continue  # a refusal (rule 9); its message is test_refusals' business
        if isinstance(expected, type) or isinstance(actual, type):
            assert actual is expected, f"{name}: xpuc gives {actual!r}, the reference {expected!r}"
            continue
        if np.ndim(expected):
            assert np.asarray(actual).dtype == np.asarray(expected).dtype, \
                f"{name}: dtype {np.asarray(actual).dtype}, the reference's {expected.dtype}"
        eps = np.finfo(np.float32).eps if "float32" in str(program.a.dtype) else 1e-12
        np.testing.assert_allclose(np.asarray(actual, dtype=np.float64),
                                   np.asarray(expected, dtype=np.float64), equal_nan=True,
                                   rtol=64 * eps, atol=64 * eps * max(1, program.a.size),
                                   err_msg=name)


PROGRAMS = {
    "elementwise": elementwise_programs(),
    "reduction": reduction_programs(),
    "prange": prange_programs(),
    "aliasing": aliasing_programs(),
    "float32": float32_programs(),
    "loops": loop_programs(),
    "library": library_programs(),
}
CHECKS = {"aliasing": run_aliasing, "float32": run_float32, "library": run_library}


def fuzz(kind: str, examples: int, seed: int | None, directory: Path,
         keep_going: bool = False) -> int:
    """Compare ``examples`` programs of ``kind``; raise on the first (shrunk)
    mismatch, or with ``keep_going`` print each mismatch, unshrunk, and
    return how many there were."""
    failures = 0

    @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(PROGRAMS[kind])
    def check(program: Program) -> None:
        nonlocal failures
        print(f"--- {kind}\n{program}", flush=True)
        try:
            CHECKS.get(kind, compare)(program, directory)
        except Exception as error:
            if not keep_going:
                raise
            failures += 1
            print(f"FAILED: {type(error).__name__}: {str(error)[:2000]}", flush=True)

    if seed is not None:
        from hypothesis import seed as with_seed

        check = with_seed(seed)(check)
    check()
    return failures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="programs per kind")
    parser.add_argument("--seed", type=int, default=None,
                        help="random seed (default: derandomized, the same programs each run)")
    parser.add_argument("--kind", choices=sorted(PROGRAMS), action="append")
    parser.add_argument("--keep-going", action="store_true",
                        help="print each mismatch (not shrunk) and go on to the next program")
    options = parser.parse_args(argv)
    # Numba's notes on loops it did not parallelize, once per program: noise here
    warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="xpuc-fuzz-") as directory:
        sys.path.insert(0, directory)
        for kind in options.kind or sorted(PROGRAMS):
            failures += fuzz(kind, options.examples, options.seed, Path(directory),
                             options.keep_going)
    if "aliasing" in (options.kind or PROGRAMS):
        print(f"aliasing calls: {ALIASING_OUTCOMES}")
    if failures:
        sys.exit(f"fuzz: {failures} programs differ")
    print("fuzz: all programs agree")


if __name__ == "__main__":
    main()
