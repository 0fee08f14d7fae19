"""NumPy functions that Numba runs as host loops, offloaded instead when their
arrays are USM arrays (whose elements host code may not reach): in an
offloaded function they become ``prange`` loops, which Numba's parfor pass
makes parfors, as Numba's own parallel ``np.sum(a)`` and ``np.dot`` are.

- ``np.sum``, ``np.prod``, ``np.min``, ``np.max``, ``np.mean`` with a constant
  ``axis``, of a C-contiguous array, and the methods of those names: one
  work-item per element of the result. In a prange body ``np.sum`` and
  ``np.prod`` stay NumPy's calls, the body's own (rules/computed_arrays.py);
- ``np.where(condition, x, y)`` and ``np.clip(a, a_min, a_max)`` of C-contiguous
  arrays of one shape and scalars;
- ``np.dot`` of two vectors, a reduction (Numba's own types it only with SciPy,
  whose BLAS would cost every process's first compile 0.3 s);
- ``a @ b`` and ``np.dot(a, b)`` of two matrices (mlp's ``x @ w``): one
  work-item per element of the product. Products with a vector in a parfor
  body are the body's own (rules/products.py), computed where used;
- in host code, ``a.copy()`` and ``np.copy(a)`` of any layout (stockham_fft's
  copy of a transposed view), ``np.zeros_like``, ``np.ones_like`` and
  ``np.full_like`` (a USM array of the argument's kind, as ``np.empty_like``
  makes, filled in a parfor as dpnp's functions of those names are) and
  ``np.histogram(a, bins)`` with an integer ``bins`` (azimint_hist's).

Each is a CPU-target overload, which Numba tries before its own (generic)
ones, inlined into the caller before the parfor pass; for anything but USM
arrays it declines, and Numba's implementation stands. One exception is kept
for NumPy arrays: the parallel loop that Numba's parfor pass puts in place of
``np.dot``, which checks no shapes, is replaced in offload builds by
``checked_dot_parallel_impl`` (see ``pipeline.PARALLEL_REPLACEMENTS``).
"""

from __future__ import annotations

import functools
import operator

import numba
import numpy as np
from numba.core import ir, types
from numba.core.cgutils import is_nonelike
from numba.core.compiler_machinery import register_pass
from numba.core.extending import overload, overload_method, register_jitable
from numba.core.typed_passes import InlineOverloads
from numba.core.typing.npydecl import parse_dtype
from numba.np import numpy_support
from numba.parfors import parfor as parfor_module
from numba.parfors.array_analysis import ArrayAnalysis

from .inplace_operators import prange_body_labels
from .usm import USMArray, coerced_class, empty_usm

# ---- where the overloads are inlined -------------------------------------------------

# The overloads below that a prange body computes otherwise: inlined in host
# code only, where their implementation is a parallel loop making an array.
# In a body the call stays the NumPy function's, which the body's rules
# compute where it is read (rules/computed_arrays.py). Numba's inline cost
# model cannot say so: typing an overload that has one drops its keyword and
# literal arguments (the axis).
HOST_CODE_ONLY: set = set()


def host_code_only(func_type: types.Type, signature) -> bool:
    """Whether a call of ``func_type`` typed ``signature`` resolved to one of
    ``HOST_CODE_ONLY``'s overloads (left a call in a prange body, it has no
    implementation Numba can lower)."""
    return any(getattr(template, "_overload_func", None) in HOST_CODE_ONLY
               and signature.args in template._inline_overloads
               for template in getattr(func_type, "templates", ()))


@register_pass(mutates_CFG=True, analysis_only=False)
class InlineOverloadsOutsideBodies(InlineOverloads):
    """Numba's inlining of overloads, less ``HOST_CODE_ONLY``'s in prange bodies."""

    _name = "xpuc_inline_overloads"

    def run_pass(self, state) -> bool:
        in_prange = prange_body_labels(state.func_ir, state.typemap)
        self._in_bodies = {id(stmt.value) for label in in_prange
                           for stmt in state.func_ir.blocks[label].find_insts(ir.Assign)}
        return super().run_pass(state)

    def _do_work_expr(self, state, work_list, block, i, expr, inline_worker) -> bool:
        if id(expr) in self._in_bodies and expr.op == "call" and host_code_only(
                state.typemap[expr.func.name], state.calltypes[expr]):
            return False
        return super()._do_work_expr(state, work_list, block, i, expr, inline_worker)


# ---- reductions along an axis --------------------------------------------------

# Each reduction: the value it starts from (before the axis's first element),
# how it takes in element ``x``, how it ends (``n``: the axis's length).
# NaN propagates through min and max, as NumPy's.
_REDUCTIONS = {
    "sum": ("zero", "s + x", "s"),
    "prod": ("one", "s * x", "s"),
    "min": ("column[0]", "x if x < s or x != x else s", "s"),
    "max": ("column[0]", "x if x > s or x != x else s", "s"),
    "mean": ("zero", "s + x", "s / n"),
}
# those a prange body computes along an axis (rules/computed_arrays.py)
_COMPUTED_IN_BODIES = ("sum", "prod")

# One function per reduction, array rank and axis, written from this text:
# Numba inlines an overload's implementation as one function's IR (what it
# reads from outside are constants of its closure), so the combining step
# cannot be a call, and the result's shape is spelled out. ``flat`` views the array as
# (before the axis, along it, after it).
_AXIS_REDUCTION = '''
def along_axis(result_dtype, zero, one, empty_raises):
    def reduce_{name}(a, axis=None, dtype=None):
        numba.parfors.parfor.init_prange()
        shape = a.shape
        before = 1
        for d in range({position}):
            before *= shape[d]
        n = shape[{position}]
        after = 1
        for d in range({position} + 1, {ndim}):
            after *= shape[d]
        if n == 0 and empty_raises:
            raise ValueError("zero-size array to reduction operation {name} which has no "
                             "identity")
        flat = a.reshape((before, n, after))
        out = np.empty_like(flat[:, 0, :], dtype=result_dtype)
        for p in numba.parfors.parfor.internal_prange(before * after):
            o, i = p // after, p % after
            column = flat[o, :, i]
            s = {start}
            for k in range(n):
                x = column[k]
                s = {step}
            out[o, i] = {finish}
        return out.reshape(({result_shape},))
    return reduce_{name}
'''


@functools.cache
def _along_axis(name: str, ndim: int, position: int):
    """The factory of ``np.<name>(a, axis=position)``'s implementation for
    arrays of ``ndim`` dimensions."""
    start, step, finish = _REDUCTIONS[name]
    result_shape = ", ".join(f"shape[{d}]" for d in range(ndim) if d != position)
    namespace = {"numba": numba, "np": np}
    # compiled under this file's name: Numba's locations in it are library code's
    exec(compile(_AXIS_REDUCTION.format(name=name, ndim=ndim, position=position, start=start,
                                        step=step, finish=finish, result_shape=result_shape),
                 __file__, "exec"), namespace)
    return namespace["along_axis"]


def _axis_of(array: types.Type, axis: types.Type | None) -> int | None:
    """The axis a reduction of USM ``array`` goes along, when known when compiling."""
    if not (isinstance(array, USMArray) and isinstance(axis, types.IntegerLiteral)):
        return None
    position = axis.literal_value + array.ndim if axis.literal_value < 0 else axis.literal_value
    return position if 0 <= position < array.ndim else None


def _result_dtype(name: str, dtype: types.Type) -> types.Type:
    """NumPy's: a mean of integers is a float64, a sum or product a 64-bit integer."""
    if name == "mean":
        return dtype if isinstance(dtype, types.Float) else types.float64
    if name in ("sum", "prod") and isinstance(dtype, (types.Integer, types.Boolean)):
        return types.uint64 if isinstance(dtype, types.Integer) and not dtype.signed \
            else types.int64
    return dtype


def _axis_reduction(name: str, array: types.Type, axis: types.Type | None,
                    dtype: types.Type | None):
    """The implementation of ``np.<name>(array, axis=axis)`` on a USM array:
    a prange over the result's elements, or for a vector the whole reduction
    (which Numba's parfor pass makes parallel); None where this does not
    apply."""
    position = _axis_of(array, axis)
    if position is None or not is_nonelike(dtype):
        return None
    if array.ndim == 1:
        function = getattr(np, name)
        return lambda a, axis=None, dtype=None: function(a)
    if array.layout != "C":
        return None
    result = numpy_support.as_dtype(_result_dtype(name, array.dtype))
    return _along_axis(name, array.ndim, position)(result, result.type(0), result.type(1),
                                                   name in ("min", "max"))


def _register_axis_reduction(name: str) -> None:
    function = getattr(np, name)

    @overload(function, target="cpu", inline="always", prefer_literal=True)
    def reduce_along_axis(a, axis=None, dtype=None):
        return _axis_reduction(name, a, axis, dtype)

    if name in _COMPUTED_IN_BODIES:
        HOST_CODE_ONLY.add(reduce_along_axis)

    # The method on USM arrays, inlined when typed. Left to Numba's method,
    # ``a.sum(axis=0)`` would become ``np.sum(a, axis=0)`` after the inlining
    # pass (canonicalize_array_math), a call that lowering cannot make of an
    # overload that only inlines. A method is resolved by its first template,
    # with no second choice: where no axis is reduced here, it calls the
    # NumPy function, as Numba's method would.
    @overload_method(USMArray, name, target="cpu", inline="always", prefer_literal=True)
    def reduce_method(a, axis=None, dtype=None):
        reduction = _axis_reduction(name, a, axis, dtype)
        if reduction is not None:
            return reduction
        if is_nonelike(axis) and is_nonelike(dtype):
            return lambda a, axis=None, dtype=None: function(a)
        if is_nonelike(dtype):
            return lambda a, axis=None, dtype=None: function(a, axis)
        return lambda a, axis=None, dtype=None: function(a, axis=axis, dtype=dtype)


for _name in _REDUCTIONS:
    _register_axis_reduction(_name)


def _in_host_code(expr: ir.Expr, caller_info, callee_info) -> bool:
    """Numba's inline cost model of what is offloaded as a loop of its own:
    inlined in host code, not in a prange body (where the body's rules take
    the call as written)."""
    in_prange = prange_body_labels(caller_info.func_ir, caller_info.typemap)
    return not any(stmt.value is expr for label in in_prange
                   for stmt in caller_info.func_ir.blocks[label].find_insts(ir.Assign))


# ---- copies ---------------------------------------------------------------------------

def _copy(array: types.Type):
    """``np.copy(a)`` / ``a.copy()`` of a USM array of any layout: a C-contiguous
    array of its USM kind, one work-item per element; None for others (Numba's
    copy stands, host code)."""
    if not (isinstance(array, USMArray) and array.ndim > 0):
        return None
    copy_type = array.copy(layout="C", readonly=False)

    def copy(a):
        numba.parfors.parfor.init_prange()
        out = empty_usm(a.shape, copy_type)
        for index in numba.pndindex(a.shape):
            out[index] = a[index]
        return out

    return copy


@overload(np.copy, target="cpu", inline=_in_host_code)
def _np_copy(a):
    return _copy(a)


# the method too: Numba's would copy on the host (a method resolves by its
# first template, so a USM array always takes this one)
@overload_method(USMArray, "copy", target="cpu", inline=_in_host_code)
def _copy_method(a):
    copy = _copy(a)
    return copy if copy is not None else (lambda a: np.copy(a))


# ---- arrays like a USM array ------------------------------------------------------------

def _like_type(array: types.Type, dtype: types.Type | None) -> USMArray | None:
    """The C-contiguous USM array of ``array``'s kind that ``np.zeros_like``
    and the others make of it, or None where ``array`` is no USM array (Numba's
    stand, filling on the host) or ``dtype`` no constant."""
    if not isinstance(array, USMArray):
        return None
    element = array.dtype if is_nonelike(dtype) else parse_dtype(dtype)
    return None if element is None else array.copy(dtype=element, layout="C", readonly=False)


# Inlined in host code only (HOST_CODE_ONLY: a cost model would drop their dtype=);
# in a body the call stays NumPy's, refused there as an array function
def _register_filled_like(function, value: int) -> None:
    @overload(function, target="cpu", inline="always")
    def filled_like(a, dtype=None):
        like_type = _like_type(a, dtype)
        if like_type is None:
            return None

        def fill(a, dtype=None):
            out = empty_usm(a.shape, like_type)
            out.reshape(out.size)[:] = value
            return out

        return fill

    HOST_CODE_ONLY.add(filled_like)


_register_filled_like(np.zeros_like, 0)
_register_filled_like(np.ones_like, 1)


@overload(np.full_like, target="cpu", inline="always")
def _full_like(a, fill_value, dtype=None):
    like_type = _like_type(a, dtype)
    if like_type is None:
        return None

    def fill(a, fill_value, dtype=None):
        out = empty_usm(a.shape, like_type)
        out.reshape(out.size)[:] = fill_value
        return out

    return fill


HOST_CODE_ONLY.add(_full_like)


# ---- histograms of equal bins ----------------------------------------------------------
# ``np.histogram(a, bins)`` with an integer ``bins``, as NumPy computes it:
# the outer edges the range given, else a's minimum and maximum (reductions,
# NumPy's ValueError where either is not finite, a NaN among them), widened
# by 0.5 where equal; the edges np.linspace's, in its computing type
# (``compute``: for a float a, a's without a range, the range's where both are
# one float type; else float64) then in the
# edges' (a's float type, else float64); an element's bin estimated from its
# offset in the edges' type (as NumPy 2 computes it: float32 for float32 data,
# which a GPU without fp64 can run), then moved to the edges' side it lies on,
# the last bin closed; one work-item per element, the counts updated atomically
# (SPEC rule 12).
_HISTOGRAM = '''
def histogram_factory(counts_type, edges_type, compute, edge):
    half = compute(0.5)

    def histogram(a, bins=10, range=None):
        if bins <= 0:
            raise ValueError("`bins` must be positive, when an integer")
{outer_edges}
        if first == last:
            first = first - half
            last = last + half
        numba.parfors.parfor.init_prange()
        edges = empty_usm((bins + 1,), edges_type)
        delta = last - first
        step = delta / compute(bins)
        for i in numba.parfors.parfor.internal_prange(bins + 1):
            if i == bins:
                edges[i] = edge(last)
            elif step == compute(0):
                edges[i] = edge(compute(i) / compute(bins) * delta + first)
            else:
                edges[i] = edge(compute(i) * step + first)
        counts = empty_usm((bins,), counts_type)
        for i in numba.parfors.parfor.internal_prange(bins):
            counts[i] = 0
        low = edge(first)
        high = edge(last)
        for index in numba.pndindex(a.shape):
            x = edge(a[index])
            if x >= low and x <= high:
                b = min(int((x - low) / (high - low) * edge(bins)), bins - 1)
                if x < edges[b]:
                    b -= 1
                elif x >= edges[b + 1] and b != bins - 1:
                    b += 1
                counts[b] += 1
        return counts, edges

    return histogram
'''
_AUTODETECTED_EDGES = '''
        if a.size == 0:
            first = compute(0)
            last = compute(1)
        else:
            first = compute(a.min())
            last = compute(a.max())
            if not (np.isfinite(first) and np.isfinite(last)):
                raise ValueError("autodetected range of np.histogram is not finite")'''
_GIVEN_EDGES = '''
        low, high = range
        if low > high:
            raise ValueError("max must be larger than min in range parameter.")
        first = compute(low)
        last = compute(high)
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError("supplied range of np.histogram is not finite")'''


@functools.cache
def _histogram_factory(range_given: bool):
    namespace = {"numba": numba, "np": np, "empty_usm": empty_usm}
    # compiled under this file's name: Numba's locations in it are library code's
    exec(compile(_HISTOGRAM.format(outer_edges=_GIVEN_EDGES if range_given
                                   else _AUTODETECTED_EDGES), __file__, "exec"), namespace)
    return namespace["histogram_factory"]


@overload(np.histogram, target="cpu", inline="always")
def _histogram(a, bins=10, range=None):
    """On a USM array of numbers with an integer ``bins`` (or none: the default,
    typed as 10, inlined as ``Omitted(10)``), and no ``range`` or one of two
    numbers; None for others (Numba's host loop stands)."""
    range_given = not is_nonelike(range)
    if not (isinstance(a, USMArray) and isinstance(a.dtype, (types.Integer, types.Float))
            and isinstance(getattr(bins, "value", bins), (int, types.Integer))
            and (not range_given or (isinstance(range, types.BaseTuple) and len(range) == 2
                                     and all(isinstance(v, types.Number) for v in range)))):
        return None
    edge = a.dtype if isinstance(a.dtype, types.Float) else types.float64
    # np.linspace's: the range's float type (float32 where Python floats are,
    # on a device without fp64), else float64 (ints, mixed)
    compute = (a.dtype if not range_given
               else range[0] if range[0] == range[1] and isinstance(range[0], types.Float)
               else types.float64) if isinstance(a.dtype, types.Float) else types.float64
    array_class = type(a)
    edge_dtype, compute_dtype = (numpy_support.as_dtype(t).type for t in (edge, compute))
    return _histogram_factory(range_given)(array_class(types.intp, 1, "C"),
                                           array_class(edge, 1, "C"), compute_dtype, edge_dtype)


# ---- np.transpose's shape ---------------------------------------------------------------
# Numba's array analysis reads np.transpose's ``axes`` only when positional:
# ``np.transpose(a, axes=(1, 0, 2))`` was given the reversed shape, so that a
# parfor over the view (its copy) ran over the wrong extents. Passed on as
# positional, the keyword is read.

_numba_transpose_shape = ArrayAnalysis._analyze_op_call_numpy_transpose


def _transpose_shape(self, scope, equiv_set, loc, args, kws):
    axes = kws.get("axes")
    if axes is not None and len(args) == 1:
        args = [*args, axes]
    return _numba_transpose_shape(self, scope, equiv_set, loc, args, kws)


ArrayAnalysis._analyze_op_call_numpy_transpose = _transpose_shape


# ---- element-wise selections -------------------------------------------------------

# An element-wise function of arrays of one shape and scalars, written from
# this text for which of its parameters are arrays (read at ``[k]`` of their
# 1-D views) and which scalars: one work-item per element of the result.
_ELEMENTWISE = '''
def elementwise(dtype):
    def {name}({parameters}):
        numba.parfors.parfor.init_prange()
        shape = {first}.shape
        size = {first}.size
{views}
        out = np.empty_like({first}, dtype=dtype)
        flat_out = out.reshape(size)
        for k in numba.parfors.parfor.internal_prange(size):
            flat_out[k] = {expression}
        return out
    return {name}
'''
_VIEW = '''
        if {p}.shape != shape:
            raise ValueError("operands could not be broadcast together: xpuc offloads "
                             "{name} of arrays of one shape and scalars")
        {p}_flat = {p}.reshape(size)'''

# Each function: its parameters and its value at one element (NaN propagates
# through np.clip, as through np.minimum / np.maximum)
_ELEMENTWISE_FUNCTIONS = {
    "where": (("condition", "x", "y"), "{x} if {condition} else {y}"),
    "clip": (("a", "a_min", "a_max"), "np.minimum(np.maximum({a}, {a_min}), {a_max})"),
}


@functools.cache
def _elementwise_factory(name: str, arrays: tuple[bool, ...]):
    """The factory of ``np.<name>``'s implementation where ``arrays`` says
    which parameters are arrays."""
    parameters, expression = _ELEMENTWISE_FUNCTIONS[name]
    first = next(p for p, is_array in zip(parameters, arrays) if is_array)
    element = {p: f"{p}_flat[k]" if is_array else p for p, is_array in zip(parameters, arrays)}
    views = "".join(_VIEW.format(p=p, name=f"np.{name}")
                    for p, is_array in zip(parameters, arrays) if is_array)
    namespace = {"numba": numba, "np": np}
    exec(compile(_ELEMENTWISE.format(name=name, parameters=", ".join(parameters), first=first,
                                     views=views, expression=expression.format(**element)),
                 __file__, "exec"), namespace)
    return namespace["elementwise"]


def _elementwise_impl(name: str, values: tuple[types.Type, ...], result: types.Type):
    """The prange implementation of ``np.<name>(*values)`` giving elements of
    type ``result``, or None unless its arrays are USM arrays of one rank."""
    arrays = [v for v in values if isinstance(v, types.Array)]
    if not (any(isinstance(v, USMArray) for v in arrays)
            and all(v.layout == "C" and v.ndim == arrays[0].ndim for v in arrays)
            and all(isinstance(v, (types.Array, types.Number, types.Boolean)) for v in values)):
        return None
    arrays_at = tuple(isinstance(v, types.Array) for v in values)
    return _elementwise_factory(name, arrays_at)(numpy_support.as_dtype(result))


def _element_type(value: types.Type) -> types.Type:
    return value.dtype if isinstance(value, types.Array) else value


@overload(np.where, target="cpu", inline="always")
def _where(condition, x, y):
    result = np.result_type(*(numpy_support.as_dtype(_element_type(v)) for v in (x, y)))
    return _elementwise_impl("where", (condition, x, y), numpy_support.from_dtype(result))


@overload(np.clip, target="cpu", inline="always")
def _clip(a, a_min, a_max):
    return _elementwise_impl("clip", (a, a_min, a_max), _element_type(a))


# ---- dot product of vectors ----------------------------------------------------------

# The shape checks are jitted functions: a raise in a function that the parfor
# pass inlines (checked_dot_parallel_impl) is not typed, a call is.
@register_jitable
def check_vector_sizes(a_size, b_size):
    if a_size != b_size:
        raise ValueError("incompatible array sizes for np.dot(a, b) (vector * vector)")


@register_jitable
def _check_matrix_vector_sizes(a_columns, b_size):
    if a_columns != b_size:
        raise ValueError("incompatible array sizes for np.dot(a, b) (matrix * vector)")


def _vector_dot(zero):
    """The dot product of two vectors as a parallel reduction from ``zero``
    (the checker a closure variable: the parfor pass inlines this with the
    caller's globals)."""
    check_vectors = check_vector_sizes

    def dot_vectors(a, b):
        check_vectors(a.shape[0], b.shape[0])
        numba.parfors.parfor.init_prange()
        total = zero
        for i in numba.parfors.parfor.internal_prange(a.shape[0]):
            total += a[i] * b[i]
        return total

    return dot_vectors


@register_jitable
def check_matrix_sizes(a_columns, b_rows):
    if a_columns != b_rows:
        raise ValueError("incompatible array sizes for np.dot(a, b) (matrix * matrix)")


def _matrix_product(product_type: types.Array, zero):
    """The product of two matrices into a new USM array of ``product_type``:
    a parallel loop over its elements, each a serial sum from ``zero``."""
    check_matrices = check_matrix_sizes

    def multiply_matrices(a, b):
        check_matrices(a.shape[1], b.shape[0])
        numba.parfors.parfor.init_prange()
        rows, inner = a.shape
        columns = b.shape[1]
        product = empty_usm((rows, columns), product_type)
        flat = product.reshape(rows * columns)
        for p in numba.parfors.parfor.internal_prange(rows * columns):
            i, j = p // columns, p % columns
            total = zero
            for k in range(inner):
                total += a[i, k] * b[k, j]
            flat[p] = total
        return product

    return multiply_matrices


def _usm_product(a: types.Type, b: types.Type, ranks: tuple[int, int]):
    """``a @ b`` of arrays of these ranks and number elements, one a USM
    array (the other may be a NumPy array of a device context): the
    implementation, else None (Numba's stands)."""
    arrays = (a, b)
    if not (all(isinstance(v, types.Array) and isinstance(v.dtype, types.Number)
                for v in arrays) and any(isinstance(v, USMArray) for v in arrays)
            and (a.ndim, b.ndim) == ranks):
        return None
    zero = np.zeros(1, np.result_type(numpy_support.as_dtype(a.dtype),
                                      numpy_support.as_dtype(b.dtype)))[0]
    if ranks == (1, 1):
        return _vector_dot(zero)
    dtype = numpy_support.from_dtype(zero.dtype)
    return _matrix_product(coerced_class((a, b))(dtype, 2, "C"), zero)


def _inlined_here(expr: ir.Expr, caller_info, callee_info) -> bool:
    """Numba's inline cost model of the products: a dot of vectors is inlined
    anywhere; a product of matrices in host code only, for in a prange body
    it stays ``a @ b``, whose elements rules/products.py computes where read
    (inlined, it would make an array of the body's own)."""
    operands = [expr.lhs, expr.rhs] if expr.op == "binop" else expr.args
    if all(caller_info.typemap[v.name].ndim == 1 for v in operands):
        return True
    return _in_host_code(expr, caller_info, callee_info)


@overload(np.dot, target="cpu", inline=_inlined_here)
def _dot(a, b):
    return _usm_product(a, b, (1, 1)) or _usm_product(a, b, (2, 2))


@overload(operator.matmul, target="cpu", inline=_inlined_here)
def _matmul(a, b):
    return _usm_product(a, b, (2, 2))


# ---- Numba's parallel np.dot, with its shape checks ------------------------------------
# With SciPy installed, Numba types np.dot of NumPy arrays, and its parfor
# pass replaces a vector-vector or matrix-vector product with a prange loop
# (parfors.parfor.dot_parallel_impl) that never compares the shapes: vectors
# of different lengths give a wrong number. Offload builds use this instead.

def checked_dot_parallel_impl(return_type, a, b):
    """The parallel implementation of ``np.dot(a, b)`` the parfor pass inlines
    (as Numba's ``dot_parallel_impl`` chooses one), or None to keep the call."""
    if not (isinstance(a, types.Array) and isinstance(b, types.Array) and b.ndim == 1):
        return None
    if a.ndim == 1:
        return _vector_dot(return_type(0))
    if a.ndim == 2:
        dtype = numpy_support.as_dtype(return_type.dtype)
        zero = return_type.dtype(0)
        check_matrix_vector = _check_matrix_vector_sizes

        def dot_matrix_vector(a, b):
            check_matrix_vector(a.shape[1], b.shape[0])
            numba.parfors.parfor.init_prange()
            rows, columns = a.shape
            product = np.empty(rows, dtype)
            for i in numba.parfors.parfor.internal_prange(rows):
                total = zero
                for j in range(columns):
                    total += a[i, j] * b[j]
                product[i] = total
            return product

        return dot_matrix_vector
    return None


# ---- Numba's parallel np.min / np.max, with NumPy's NaN ------------------------------
# Numba's parfor pass replaces np.min(a) (np.max, np.amin, np.amax, the
# methods) with a prange loop of Python's ``min(value, a[i])``, which a NaN
# never wins: the minimum of an array holding a NaN came out a number, where
# NumPy's (and Numba's serial np.min) is NaN. Offload builds count the NaNs
# in the same loop and return NaN where there is one.

def _nan_propagating(numba_impl, sign: float):
    """The parallel implementation of an array's min (``sign`` 1) or max
    (``sign`` -1: the minimum of the negated elements, negated) that the
    parfor pass inlines: for a float array, NaN where an element is NaN;
    for integers and bools ``_integer_extreme``; Numba's ``numba_impl`` for
    others.
    (What the loop calls it reaches through globals: the parfor pass's
    diagnostics fail on a call of a closure variable.)"""
    def implementation(return_type, arg):
        if arg.ndim == 0:
            return numba_impl(return_type, arg)
        if isinstance(arg.dtype, (types.Integer, types.Boolean)):
            return _integer_extreme(arg, sign)
        if not isinstance(arg.dtype, types.Float):
            return numba_impl(return_type, arg)
        nan, largest, direction = np.array([np.nan, np.inf, sign],
                                           numpy_support.as_dtype(arg.dtype))

        def extreme(in_arr):
            if direction > 0:  # NumPy's error for an empty array, naming the operation
                numba.parfors.parfor.min_checker(in_arr.size)
            else:
                numba.parfors.parfor.max_checker(in_arr.size)
            numba.parfors.parfor.init_prange()
            value = largest
            nans = 0
            for i in numba.pndindex(in_arr.shape):
                x = direction * in_arr[i]
                value = min(value, x)
                nans += x != x
            return nan if nans else direction * value

        return extreme

    return implementation


def _limits(dtype: np.dtype) -> tuple[object, object]:
    """The smallest and largest values of an integer, bool or float ``dtype``
    (the infinities of a float)."""
    if dtype.kind == "f":
        return dtype.type(-np.inf), dtype.type(np.inf)
    if dtype.kind == "b":
        return dtype.type(False), dtype.type(True)
    limits = np.iinfo(dtype)
    return dtype.type(limits.min), dtype.type(limits.max)


def _integer_extreme(arg: types.Array, sign: float):
    """The minimum (``sign`` 1) or maximum of an array of integers or bools,
    NumPy's error where it has no element (Numba's checks the length of the
    first axis only: of an array of shape (3, 0) it returned the type's
    largest or smallest value; of bools, it failed to compile)."""
    smallest, largest = _limits(numpy_support.as_dtype(arg.dtype))
    if sign > 0:
        def minimum(in_arr):
            numba.parfors.parfor.min_checker(in_arr.size)
            numba.parfors.parfor.init_prange()
            value = largest
            for i in numba.pndindex(in_arr.shape):
                value = min(value, in_arr[i])
            return value

        return minimum

    def maximum(in_arr):
        numba.parfors.parfor.max_checker(in_arr.size)
        numba.parfors.parfor.init_prange()
        value = smallest
        for i in numba.pndindex(in_arr.shape):
            value = max(value, in_arr[i])
        return value

    return maximum


min_parallel_impl = _nan_propagating(numba.parfors.parfor.min_parallel_impl, 1.0)
max_parallel_impl = _nan_propagating(numba.parfors.parfor.max_parallel_impl, -1.0)


# ---- Numba's parallel np.argmin / np.argmax and np.mean of empty arrays --------------
# Numba's parallel np.argmin checks the length of the first axis only: of an
# array of shape (3, 0) it returned 0, where NumPy raises; its np.mean divides
# by the size as Python does, raising ZeroDivisionError where NumPy (and
# Numba's serial np.mean) return NaN.

def _arg_extreme(smallest: bool):
    """The parallel implementation of ``np.argmin`` (``smallest``) or
    ``np.argmax`` of numbers and bools, raising NumPy's error for an array of no
    element; Numba's for others."""
    numba_impl = parfor_module.swap_functions_map["argmin" if smallest else "argmax", "numpy"]

    def implementation(return_type, arg):
        if not isinstance(arg.dtype, (types.Integer, types.Float, types.Boolean)):
            return numba_impl(return_type, arg)
        start = _limits(numpy_support.as_dtype(arg.dtype))[1 if smallest else 0]
        if smallest:
            def argmin(in_arr):
                numba.parfors.parfor.argmin_checker(in_arr.size)
                numba.parfors.parfor.init_prange()
                flat = in_arr.ravel()
                ival = numba.core.typing.builtins.IndexValue(0, start)
                for i in numba.parfors.parfor.internal_prange(len(flat)):
                    ival = min(ival, numba.core.typing.builtins.IndexValue(i, flat[i]))
                return ival.index

            return argmin

        def argmax(in_arr):
            numba.parfors.parfor.argmax_checker(in_arr.size)
            numba.parfors.parfor.init_prange()
            flat = in_arr.ravel()
            ival = numba.core.typing.builtins.IndexValue(0, start)
            for i in numba.parfors.parfor.internal_prange(len(flat)):
                ival = max(ival, numba.core.typing.builtins.IndexValue(i, flat[i]))
            return ival.index

        return argmax

    return implementation


argmin_parallel_impl = _arg_extreme(True)
argmax_parallel_impl = _arg_extreme(False)


def mean_parallel_impl(return_type, arg):
    """Numba's parallel ``np.mean``, NaN for an array of no element (NaN in
    both parts for complex numbers, as NumPy's 0 / 0)."""
    if arg.ndim == 0:
        return parfor_module.mean_parallel_impl(return_type, arg)
    zero = return_type(0)
    nan = return_type(complex(np.nan, np.nan) if isinstance(return_type, types.Complex)
                      else np.nan)

    def mean(in_arr):
        numba.parfors.parfor.init_prange()
        total = zero
        for i in numba.pndindex(in_arr.shape):
            total += in_arr[i]
        return total / in_arr.size if in_arr.size else nan

    return mean
