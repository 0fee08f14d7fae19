"""In-place operators and stores whose operands share the target's memory
(``a[1:] += a[:-1]``, ``m += m.T``, ``m -= m[0]``, ``m[:] = m.T * m``, a
ufunc's ``out=``) give NumPy's answer: every operand read as if before any
element is written.
Numba's parfor of them reads elements it has already written (wrong under
its ``parallel=True`` too). Each case runs on NumPy arrays in a device
context and on USM arrays, as Numba's host loop (the cost model keeps these
tiny parfors on the host) and as kernels (``XPUC_HOST_PARFOR_MAX=0``)."""

import inspect

import numba
import numpy as np
import pytest
from device_support import DEVICE

import xpuc
import xpuc.runtime
from xpuc.array_library import tensor as dpt
from xpuc.frontend.slice_assignments import elements_meet

MODEL = "XPUC_HOST_PARFOR_MAX"


def shifted_sum(a):
    a[1:] += a[:-1]


def scaled_then_shifted_sum(a):
    a *= 2.0
    a[1:] += a[:-1]
    a -= 1.0


def shifted_product(a):
    a[1:] *= a[:-1]


def plus_reversed(a):
    a += a[::-1]


def reversed_view_plus_array(a):
    b = a[::-1]
    b += a


def view_plus_shifted_view(a):
    b = a[1:]
    b += a[:-1]


def shifted_expression(a):
    a[1:] += a[:-1] * 2.0 - 1.0


def shifted_ufunc(a):
    a[1:] -= np.negative(a[:-1])


def shifted_target_and_operand(a):
    a[1:] += a[:-1] + a[1:]


def plus_transpose(m):
    m += m.T


def rows_plus_rows_above(m):
    m[1:, :] += m[:-1, :]


def minus_first_row(m):
    m -= m[0]


def transpose_times_matrix(m):
    m[:] = m.T * m


def transpose_plus_zero(m):
    m[:] = m.T + 0.0


def add_with_out_keyword(a):
    np.add(a[1:], a[:-1], out=a[1:])


def add_with_out_argument(a):
    np.add(a[1:], a[:-1], a[1:])


def subtract_first_row_with_out(m):
    np.subtract(m, m[0], out=m)


def negative_of_reversed_with_out(a):
    np.negative(a[::-1], out=a)


def copy_to_shifted(a):
    np.copyto(a[1:], a[:-1])


def plus_one_at_indices(a):
    a[np.array([0, 2, 2, 5])] += 1.0


def plus_one_where_large(a):
    a[a > 3.0] += 1.0


VECTOR, MATRIX = (16,), (4, 4)
CASES = [(shifted_sum, VECTOR), (scaled_then_shifted_sum, VECTOR), (shifted_product, VECTOR),
         (plus_reversed, VECTOR),
         (reversed_view_plus_array, VECTOR), (view_plus_shifted_view, VECTOR),
         (shifted_expression, VECTOR), (shifted_ufunc, VECTOR),
         (shifted_target_and_operand, VECTOR), (plus_transpose, MATRIX),
         (rows_plus_rows_above, MATRIX), (minus_first_row, MATRIX),
         (transpose_times_matrix, MATRIX), (transpose_plus_zero, MATRIX),
         (add_with_out_keyword, VECTOR), (add_with_out_argument, VECTOR),
         (subtract_first_row_with_out, MATRIX), (negative_of_reversed_with_out, VECTOR),
         (copy_to_shifted, VECTOR)]
# host code indexes with the index array or mask: not on device USM
INDEXED = [(plus_one_at_indices, VECTOR), (plus_one_where_large, VECTOR)]
JITTED = {fn: xpuc.jit(fn) for fn, _ in CASES + INDEXED}


@pytest.fixture(params=["host loop", "kernels"])
def path(request, monkeypatch):
    """The cost model's own threshold (these parfors are tiny: the host runs
    them), or none (every parfor launches)."""
    if request.param == "host loop":
        monkeypatch.delenv(MODEL, raising=False)
    else:
        monkeypatch.setenv(MODEL, "0")
    return request.param


@pytest.fixture(params=["in place", "copied"])
def numpy_memory(request):
    """NumPy arrays used where they are (the CPU device reads host memory), or
    copied to the device and back as on a device that cannot (rule 5); host
    code's copy of an operand reads host memory, synced first, either way."""
    if request.param == "copied":
        request.getfixturevalue("copying_host_arrays")
    return request.param


def ran_as(path: str, stats: dict) -> bool:
    if path == "kernels":
        return stats["kernel_launches"] > 0 and stats["host_parfors"] == 0
    return stats["host_parfors"] > 0 and stats["kernel_launches"] == 0


def start(shape) -> np.ndarray:
    return np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)


def expected(fn, shape) -> np.ndarray:
    a = start(shape)
    fn(a)
    return a


@pytest.mark.parametrize(("fn", "shape"), CASES + INDEXED, ids=lambda c: getattr(c, "__name__", ""))
def test_numpy_arrays_in_a_context(fn, shape, path, numpy_memory):
    a = start(shape)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        JITTED[fn](a)
    assert ran_as(path, xpuc.stats()), xpuc.stats()
    assert np.array_equal(a, expected(fn, shape))


@pytest.mark.parametrize("usm_type", ["device", "shared"])
@pytest.mark.parametrize(("fn", "shape"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_usm_arrays(fn, shape, usm_type, path):
    if usm_type == "device" and path == "host loop":
        pytest.skip("the host cannot read device USM: always kernels")
    a = xpuc.asarray(start(shape), queue=DEVICE, usm_type=usm_type)
    xpuc.reset_stats()
    JITTED[fn](a)
    assert ran_as(path, xpuc.stats()), xpuc.stats()
    assert np.array_equal(dpt.asnumpy(a), expected(fn, shape))


@pytest.mark.parametrize(("fn", "shape"), INDEXED, ids=lambda c: getattr(c, "__name__", ""))
def test_updates_through_an_index_array_or_a_mask_on_shared_usm(fn, shape, path):
    """``a[idx] += 1`` updates the copy ``a[idx]`` and stores it back: the
    store is the update (it was dropped, as if ``a[idx]`` were a view)."""
    a = xpuc.asarray(start(shape), queue=DEVICE, usm_type="shared")
    JITTED[fn](a)
    assert np.array_equal(dpt.asnumpy(a), expected(fn, shape))


@xpuc.jit
def add_into(a, b):
    a += b


@pytest.mark.parametrize("usm_type", [None, "device", "shared"])
def test_arguments_the_caller_made_overlap(usm_type, path):
    """Two arguments that are views of one array, which only the call shows."""
    if usm_type == "device" and path == "host loop":
        pytest.skip("the host cannot read device USM: always kernels")
    x = start(VECTOR)
    if usm_type:
        x = xpuc.asarray(x, queue=DEVICE, usm_type=usm_type)
    with xpuc.device_context(DEVICE):
        add_into(x[1:], x[:-1])
        add_into(x[::2], x[::2])  # the very same elements: read where written
    reference = start(VECTOR)
    reference[1:] += reference[:-1]
    reference[::2] += reference[::2]
    assert np.array_equal(dpt.asnumpy(x) if usm_type else x, reference)


def scale(a):
    a *= 2.0


def plus_own_expression(a):
    a += a * 2.0 - 1.0


def plus_expression_of_an_argument(a, b):
    a += b * 2.0


def minus_an_argument_row(m, row):
    m -= row


CHECKED = [(scale, (start(VECTOR),)), (plus_own_expression, (start(VECTOR),)),
           (plus_expression_of_an_argument, (start(VECTOR), start(VECTOR))),
           (minus_an_argument_row, (start(MATRIX), start((4,)))),
           (shifted_sum, (start(VECTOR),)), (minus_first_row, (start(MATRIX),))]


@pytest.mark.parametrize(("fn", "args"), CHECKED, ids=lambda c: getattr(c, "__name__", ""))
@pytest.mark.parametrize("usm_type", [None, "device"])
def test_a_copy_only_where_an_operand_shares_the_targets_memory(fn, args, usm_type, monkeypatch):
    """Operands the function computes, and arguments that share no memory,
    are read by the update's one kernel, as before. A view of the target is
    copied first, with no kernel compiled for the copy that most calls never
    make: by host code for a NumPy array, by the runtime (device to device)
    for USM."""
    monkeypatch.setenv(MODEL, "0")
    expected_args = [a.copy() for a in args]
    fn(*expected_args)
    if usm_type:
        args = [xpuc.asarray(a, queue=DEVICE, usm_type=usm_type) for a in args]
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        xpuc.jit(fn)(*args)
    stats = xpuc.stats()
    assert stats["kernels_compiled"] == stats["kernel_launches"] == 1, stats
    # shifted_sum's operand a[:-1]: 15 of 16 float64; minus_first_row's m[0]: 4
    copied = {shifted_sum: 15 * 8, minus_first_row: 4 * 8}.get(fn, 0) if usm_type else 0
    assert stats["d2d_bytes"] == copied, stats  # a NumPy array's copy is the host's
    assert np.array_equal(dpt.asnumpy(args[0]) if usm_type else args[0], expected_args[0])


def plus_reversed_matrix(m):
    m += m[::-1, ::-1]


def plus_reversed_transpose(m):
    m += m.T[::-1]


def minus_last_row_reversed(m):
    m -= m[-1, ::-1]


def second_half_plus_every_other(a):
    a[8:] += a[::2]


def columns_plus_columns_left(m):
    m[:, 1:] += m[:, :-1]


def plus_cube_transposed(t):
    t += t.transpose(2, 0, 1)


# each store's operand that shares its memory, as a view of the NumPy array
SPAN_COPIES = [(plus_reversed, VECTOR, lambda a: a[::-1]),
               (plus_reversed_matrix, MATRIX, lambda m: m[::-1, ::-1]),
               (plus_transpose, MATRIX, lambda m: m.T),
               (plus_reversed_transpose, MATRIX, lambda m: m.T[::-1]),
               (minus_first_row, MATRIX, lambda m: m[0]),
               (minus_last_row_reversed, MATRIX, lambda m: m[-1, ::-1]),
               (second_half_plus_every_other, VECTOR, lambda a: a[::2]),
               (columns_plus_columns_left, MATRIX, lambda m: m[:, :-1]),
               (plus_cube_transposed, (3, 3, 3), lambda t: t.transpose(2, 0, 1))]


@pytest.mark.parametrize("usm_type", [None, "device", "shared"])
@pytest.mark.parametrize(("fn", "shape", "operand"), SPAN_COPIES,
                         ids=lambda c: getattr(c, "__name__", ""))
def test_an_operand_is_copied_as_the_bytes_it_spans(fn, shape, operand, usm_type, path):
    """Negative strides, transposes, rows broadcast, gaps between elements:
    the runtime copies a USM operand's byte span, lowest to highest byte,
    device to device, and the store reads the copy with the operand's own
    shape and strides (a NumPy array in a context: its span by one memcpy on
    the host); the store's kernel is the one compiled."""
    if usm_type == "device" and path == "host loop":
        pytest.skip("the host cannot read device USM: always kernels")
    a = start(shape)
    if usm_type:
        a = xpuc.asarray(a, queue=DEVICE, usm_type=usm_type)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        xpuc.jit(fn)(a)
    stats = xpuc.stats()
    assert ran_as(path, stats), stats
    span = xpuc.runtime.byte_extent(operand(start(shape)))[1]
    assert stats["d2d_bytes"] == (span if usm_type else 0), stats
    assert stats["kernels_compiled"] == 1, stats  # the store's (the host loop's too)
    assert np.array_equal(dpt.asnumpy(a) if usm_type else a, expected(fn, shape))


def numpy_store_copied_on_the_host(fn, shape, path: str) -> None:
    """``fn`` on a NumPy array in a context ran on ``path``, compiled its
    store's kernel alone (no copy kernel, no device copy) and gave NumPy's
    answer."""
    a = start(shape)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        xpuc.jit(fn)(a)
    stats = xpuc.stats()
    assert ran_as(path, stats), stats
    assert stats["kernels_compiled"] == 1 and stats["d2d_bytes"] == 0, stats
    assert np.array_equal(a, expected(fn, shape))


@pytest.mark.parametrize(("fn", "shape", "operand"), SPAN_COPIES,
                         ids=lambda c: getattr(c, "__name__", ""))
def test_a_numpy_operand_copied_to_the_device_is_copied_on_the_host(fn, shape, operand, path,
                                                                   copying_host_arrays):
    """Where NumPy arrays are copied to the device (rule 5), the operand's
    span is still copied on the host, where the array's elements are outside
    parfors (``test_numpy_arrays_in_a_context`` checks the sync of what an
    earlier kernel wrote, ``scaled_then_shifted_sum``); no copy kernel."""
    numpy_store_copied_on_the_host(fn, shape, path)


def update_twice_after_a_branch(a, b, flag):
    if flag:
        b = b * 1.0
    a += b
    a /= 2.0


def test_two_updates_of_a_vector_after_a_branch(monkeypatch):
    """Numba's array analysis put a bounded slice in place of the 1-tuple
    index of the second update's load, which failed to lower (``Cannot cast
    slice<a:b> to UniTuple``); staging an operand puts a branch before them."""
    monkeypatch.setenv(MODEL, "0")
    a, b = start(VECTOR), start(VECTOR)
    with xpuc.device_context(DEVICE):
        xpuc.jit(update_twice_after_a_branch)(a, b, True)
    assert np.array_equal(a, start(VECTOR))


@xpuc.jit
def double_into(a, out):
    return np.multiply(a, 2.0, out=out)


@pytest.mark.parametrize("usm_type", [None, "device"])
def test_a_ufunc_returns_its_output_argument(usm_type):
    a, out = start(VECTOR), np.zeros(VECTOR)
    if usm_type:
        a, out = (xpuc.asarray(x, queue=DEVICE, usm_type=usm_type) for x in (a, out))
    with xpuc.device_context(DEVICE):
        result = double_into(a, out)
    result, out = (dpt.asnumpy(x) if usm_type else x for x in (result, out))
    assert np.array_equal(out, start(VECTOR) * 2.0)
    assert np.array_equal(result, out)
    if not usm_type:
        assert np.shares_memory(result, out)


@xpuc.jit
def add_where(a):
    np.add(a, 1.0, out=a, where=a > 2.0)


@xpuc.jit
def copy_unsafely(a):
    np.copyto(a[1:], a[:-1], casting="unsafe")


@pytest.mark.parametrize(("fn", "construct", "message"), [
    (add_where, "where=", "np.add(..., where=) is not supported: of a ufunc's keyword "
     "arguments, xpuc compiles out= alone"),
    (copy_unsafely, "casting=", "np.copyto(..., casting=) is not supported: xpuc compiles "
     "np.copyto(dst, src)"),
])
def test_other_keywords_are_refused_naming_the_line(fn, construct, message):
    with pytest.raises(xpuc.UnsupportedError) as refusal:
        with xpuc.device_context(DEVICE):
            fn(start(VECTOR))
    lines, first = inspect.getsourcelines(fn.py_func)
    line = first + next(k for k, text in enumerate(lines) if construct in text)
    assert str(refusal.value) == f"{__file__}:{line}: {message}"


# ---- forms audited for the same race, right before this change: kept right --------------


def odd_into_even(a):
    a[::2] = a[1::2]


def shift_through_index_arrays(a):
    index = np.arange(a.shape[0] - 1)
    a[index + 1] = a[index]


def rows_times_identity_into_rows_below(m):
    m[1:] = m[:-1] @ np.eye(m.shape[1])


def column_sums_into_first_row(m):
    m[0] = m.sum(axis=0)


def negated_shift(a):
    a[1:] = -a[:-1]


@pytest.mark.parametrize(("fn", "shape"), [
    (odd_into_even, VECTOR), (shift_through_index_arrays, VECTOR),
    (rows_times_identity_into_rows_below, MATRIX), (column_sums_into_first_row, MATRIX),
    (negated_shift, VECTOR),
], ids=lambda c: getattr(c, "__name__", ""))
def test_other_stores_reading_their_target(fn, shape, path):
    a = start(shape)
    with xpuc.device_context(DEVICE):
        xpuc.jit(fn)(a)
    assert np.array_equal(a, expected(fn, shape))


# ---- slice stores of a view of the target's own memory ------------------------------


def shift_store(a):
    a[1:] = a[:-1]


def reversed_shift_store(a):
    a[:-1] = a[:0:-1]


def rows_down_store(m):
    m[1:, :] = m[:-1, :]


def transpose_store(m):
    m[:] = m.T


def first_row_broadcast_store(m):
    m[1:] = m[0]


def reversed_columns_store(m):
    m[:, 1:] = m[:, -2::-1]


def cube_transposed_store(t):
    t[:] = t.transpose(2, 0, 1)


def cube_planes_down_reversed_store(t):
    t[1:, ::-1] = t[:-1]


SLICE_STORES = [(shift_store, VECTOR), (reversed_shift_store, VECTOR),
                (rows_down_store, MATRIX), (transpose_store, MATRIX),
                (first_row_broadcast_store, MATRIX), (reversed_columns_store, MATRIX),
                (cube_transposed_store, (3, 3, 3)), (cube_planes_down_reversed_store, (3, 4, 2))]


@pytest.mark.parametrize(("fn", "shape"), SLICE_STORES, ids=lambda c: getattr(c, "__name__", ""))
def test_a_numpy_value_sharing_the_views_memory_is_copied_with_no_kernel(fn, shape, path,
                                                                          numpy_memory):
    """A NumPy value that shares the assigned view's memory is copied as its
    byte span by one memcpy on the host, read with its own shape and strides:
    the store's kernel is the only one compiled (a parallel copy kernel was
    compiled for it, and a second store loop reading the copy)."""
    numpy_store_copied_on_the_host(fn, shape, path)



# ---- two parfors that share memory through different arrays: not fused ----------------
#
# Numba fuses two parfors over equal extents unless the second reads what the
# first writes at another index under the same name. ``x[:] = 0.5`` then
# ``y * 2.0 + x`` (which makes the array analysis equate their extents) with
# ``x`` and ``y`` views the caller took of one array were one loop, reading
# ``y[i]`` (another element of x) before or after writing it. Long enough that
# a kernel's work-items race too.

LONG = (4096,)
HOST_LOOP = {"host loop": "100000000", "kernels": "0"}


def store_then_read_another_argument(x, y):
    x[:] = 0.5
    return y * 2.0 + x


def fill_then_sum_another_argument(x, y):
    x.fill(0.5)
    return np.sum(y * x)


def scaled_copy_then_read_another_argument(x, y):
    t = x * 3.0
    x[:] = t
    return y + x


def views_of_one_array(kind: str, base):
    """Two views of ``base`` that meet at other elements."""
    if kind == "shifted":
        return base[:-1], base[1:]
    return base, (base[::-1] if kind == "reversed" else base.T)


@pytest.mark.parametrize("library", ["numpy", "device", "shared"])
@pytest.mark.parametrize("views", ["shifted", "reversed", "transposed"])
@pytest.mark.parametrize("fn", [store_then_read_another_argument, fill_then_sum_another_argument,
                                scaled_copy_then_read_another_argument],
                         ids=lambda c: c.__name__)
@pytest.mark.parametrize("where", HOST_LOOP)
def test_parfors_sharing_memory_through_two_arguments_stay_apart(fn, views, library, where,
                                                                monkeypatch):
    if library == "device" and where == "host loop":
        pytest.skip("the host cannot read device USM: always kernels")
    monkeypatch.setenv(MODEL, HOST_LOOP[where])
    shape = (64, 64) if views == "transposed" else LONG
    base = start(shape)
    want = fn(*views_of_one_array(views, base))
    got_base = start(shape)
    if library != "numpy":
        got_base = xpuc.asarray(got_base, queue=DEVICE, usm_type=library)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        got = JITTED_APART[fn](*views_of_one_array(views, got_base))
    stats = xpuc.stats()
    assert ran_as(where, stats), stats
    # the store's loop and the read's, one after the other
    assert stats["kernel_launches"] + stats["host_parfors"] == 2, stats
    as_numpy = (lambda v: v) if library == "numpy" else dpt.asnumpy
    np.testing.assert_array_equal(as_numpy(got_base), base)
    np.testing.assert_array_equal(np.asarray(as_numpy(got) if np.ndim(got) else got), want)


JITTED_APART = {fn: xpuc.jit(fn) for fn in (store_then_read_another_argument,
                                            fill_then_sum_another_argument,
                                            scaled_copy_then_read_another_argument)}


def two_expressions_of_one_argument(a):
    return a + 1.0, a * 2.0


def store_then_read_the_same_array(a):
    a[:] = 0.5
    return a * 2.0


@pytest.mark.parametrize("fn", [two_expressions_of_one_argument, store_then_read_the_same_array],
                         ids=lambda c: c.__name__)
def test_parfors_proved_apart_or_at_their_own_index_are_still_fused(fn, monkeypatch):
    """Arrays the function made, read or written beside an argument, and one
    array written and read at each iteration's own element: one loop."""
    monkeypatch.setenv(MODEL, "0")
    a = start(LONG)
    want = fn(a.copy())
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        got = xpuc.jit(fn)(a)
    assert xpuc.stats()["kernels_compiled"] == 1, xpuc.stats()
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)


# ---- slice stores in a prange body between views of two arguments -------------------
#
# ``row[:] = y[i]`` of ``row = x[i]`` in a prange body is a loop over the row
# in the work-item, reading ``y[i]`` as it writes ``x[i]``; NumPy reads all of
# ``y[i]`` first. Where the caller passed views of one array as ``x`` and
# ``y`` (reversed, or shifted along the row) the loop read elements it had
# just written: a wrong answer, shifted right or reversed. The host now
# compares the two arrays before the launch and refuses arrays that meet.


def row_copied_from_another_argument(x, y):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[:] = y[i]


def row_updated_from_another_argument(x, y):
    for i in numba.prange(x.shape[0]):
        x[i, :] += y[i, :] * 2.0


def rows_set_to_another_argument(x, y):
    for i in numba.prange(x.shape[0]):
        x[i, :] = y


BODY_SLICE_STORES = [row_copied_from_another_argument, row_updated_from_another_argument]
JITTED_BODIES = {fn: xpuc.jit(fn) for fn in BODY_SLICE_STORES + [rows_set_to_another_argument]}
MEETING_VIEWS = {"reversed": lambda s: (s[:, :33], s[:, 32::-1]),
                 "shifted right": lambda s: (s[:, 1:], s[:, :-1]),
                 "shifted left": lambda s: (s[:, :-1], s[:, 1:])}
APART_VIEWS = {"the same array": lambda s: (s, s),
               "interleaved": lambda s: (s[:, ::2], s[:, 1::2]),
               "apart": lambda s: (s[:, :17], s[:, 17:])}


def body_base(library: str, where: str, monkeypatch):
    """The (3, 34) array ``start`` makes, on ``library`` (NumPy or USM of a
    kind), with the cost model set for ``where``."""
    if library == "device" and where == "host loop":
        pytest.skip("the host cannot read device USM: always kernels")
    monkeypatch.setenv(MODEL, HOST_LOOP[where])
    base = start((3, 34))
    return base if library == "numpy" else xpuc.asarray(base, queue=DEVICE, usm_type=library)


def as_numpy(array) -> np.ndarray:
    return array if isinstance(array, np.ndarray) else dpt.asnumpy(array)


def store_line(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if "= " in line and "prange" not in
                        line and "row = x" not in line)


@pytest.mark.parametrize("library", ["numpy", "device", "shared"])
@pytest.mark.parametrize("views", MEETING_VIEWS)
@pytest.mark.parametrize("fn", BODY_SLICE_STORES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("where", HOST_LOOP)
def test_a_body_slice_store_between_arguments_that_meet_is_refused(fn, views, library, where,
                                                                  monkeypatch):
    """Refused naming the store's line, before anything runs: the array is
    as it was."""
    base = body_base(library, where, monkeypatch)
    xpuc.reset_stats()
    with pytest.raises(xpuc.UnsupportedError,
                       match=rf"^{__file__}:{store_line(fn)}: 'x' and 'y' share memory in this "
                             r"call, and this store into a view of 'x' reads 'y' .*such as "
                             r"'y\.copy\(\)' made before the call$"):
        with xpuc.device_context(DEVICE):
            JITTED_BODIES[fn](*MEETING_VIEWS[views](base))
    stats = xpuc.stats()
    assert stats["kernel_launches"] == stats["host_parfors"] == 0, stats
    np.testing.assert_array_equal(as_numpy(base), start((3, 34)))


@pytest.mark.parametrize("library", ["numpy", "device", "shared"])
@pytest.mark.parametrize("views", APART_VIEWS)
@pytest.mark.parametrize("fn", BODY_SLICE_STORES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("where", HOST_LOOP)
def test_a_body_slice_store_between_arguments_apart_or_alike_runs(fn, views, library, where,
                                                                 monkeypatch):
    """Arrays apart, interleaved (their spans meet, their elements never), or
    the very same array read through a view made as the stored one: NumPy's
    answer, from the loop."""
    base = body_base(library, where, monkeypatch)
    want = start((3, 34))
    fn(*APART_VIEWS[views](want))
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        JITTED_BODIES[fn](*APART_VIEWS[views](base))
    assert ran_as(where, xpuc.stats()), xpuc.stats()
    np.testing.assert_array_equal(as_numpy(base), want)


@numba.njit
def elements_meet_of(a, b):
    return elements_meet(a.ctypes.data, a.shape, a.strides, a.itemsize,
                         b.ctypes.data, b.shape, b.strides, b.itemsize)


def test_arrays_whose_elements_meet_are_never_taken_apart():
    """The host's test against NumPy's exact one on random views of one
    array (slices with steps, reversed, transposed, a plane taken): it may
    say two arrays meet where they do not, never the other way; halves of
    rows and interleaved columns, whose spans meet, are apart."""
    rng = np.random.default_rng(7)
    base = np.zeros((6, 7, 8), dtype=np.float32)

    def view():
        index = []
        for n in base.shape:
            low, high = sorted(int(k) for k in rng.integers(0, n + 1, 2))
            step = int(rng.choice([1, 2, 3, -1, -2]))
            index.append(slice(low, high, step) if step > 0 else
                         slice(high - 1 if high else None, low - 1 if low else None, step))
        made = base[tuple(index)]
        if rng.random() < 0.3:
            made = made.transpose(rng.permutation(3))
        if rng.random() < 0.3 and made.shape[0]:
            made = made[rng.integers(0, made.shape[0])]
        return made

    for _ in range(3000):
        a, b = view(), view()
        assert elements_meet_of(a, b) or not np.shares_memory(a, b), (a.strides, b.strides)
    m = np.zeros((5, 12))
    for apart in ((m[:, :6], m[:, 6:]), (m[:, ::2], m[:, 1::2]), (m[::-1, :6], m[::-1, 6:])):
        assert not elements_meet_of(*apart)


def test_a_row_of_the_stored_array_read_whole_is_refused_and_one_apart_is_not():
    """``x[i, :] = y`` with ``y`` a row of ``x``: the iteration that stores
    that row reads it as it writes; a row outside ``x`` is apart."""
    base = start((4, 34))
    with pytest.raises(xpuc.UnsupportedError,
                       match=rf"^{__file__}:{store_line(rows_set_to_another_argument)}: 'x' and "
                             "'y' share memory"):
        with xpuc.device_context(DEVICE):
            JITTED_BODIES[rows_set_to_another_argument](base, base[1])
    np.testing.assert_array_equal(base, start((4, 34)))
    with xpuc.device_context(DEVICE):
        JITTED_BODIES[rows_set_to_another_argument](base[:3], base[3])
    np.testing.assert_array_equal(base, np.tile(start((4, 34))[3], (4, 1)))


# ---- masked stores: a[m] = v[m] -----------------------------------------------------------
#
# Numba's parfor pass makes ``a[m] = v[m]`` a loop storing ``v[i]`` into
# ``a[i]`` where ``m[i]``; NumPy reads ``v[m]`` (a copy) first. A ``v`` (or
# ``m``) that shares ``a``'s memory at other elements read elements already
# written.


def masked_store_of_own_reversed(a, b):
    m = b > 0.0
    a[m] = a[::-1][m]


def masked_store_of_another_argument(x, y, m):
    x[m] = y[m]


def masked_store_of_a_scalar(a, m):
    a[m] = -1.0


def masked_store_of_own_transpose(a, b):
    m = b > 0.0
    a[m] = a.T[m]


def masked_store_into_own_transpose(a, b):
    m = b > 0.0
    a.T[m] = a[m]


def signs(shape) -> np.ndarray:
    return np.where(np.arange(np.prod(shape)).reshape(shape) % 3 == 0, -1.0, 1.0)


def masked_arguments(fn, base, shape):
    """``fn``'s arguments over ``base`` (its target's memory)."""
    if fn is masked_store_of_another_argument:
        return base[1:], base[:-1], signs(shape)[1:] > 0.0
    if fn is masked_store_of_a_scalar:
        return base, signs(shape) > 0.0
    return base, signs(shape)


@pytest.mark.parametrize("library", ["numpy", "device", "shared"])
@pytest.mark.parametrize(("fn", "shape"), [
    (masked_store_of_own_reversed, LONG), (masked_store_of_another_argument, LONG),
    (masked_store_of_a_scalar, LONG), (masked_store_of_own_transpose, (64, 64)),
    (masked_store_into_own_transpose, (64, 64)),
], ids=lambda c: getattr(c, "__name__", ""))
@pytest.mark.parametrize("where", HOST_LOOP)
def test_masked_stores_read_their_values_before_storing(fn, shape, library, where, monkeypatch):
    """Each masked store's array and mask that may share the target's memory
    are copied first where they do (a scalar's store failed to compile for
    the host loop: its mask read had no type). A target Python makes after
    the value (``a.T[m] = a[m]``) was not checked."""
    if library == "device" and where == "host loop":
        pytest.skip("the host cannot read device USM: always kernels")
    monkeypatch.setenv(MODEL, HOST_LOOP[where])
    base = start(shape)
    fn(*masked_arguments(fn, base, shape))
    got = start(shape)
    if library != "numpy":
        got = xpuc.asarray(got, queue=DEVICE, usm_type=library)
    arguments = masked_arguments(fn, got, shape)
    if library != "numpy":  # the mask and b of the device's library, as the call needs
        arguments = [xpuc.asarray(a, queue=DEVICE, usm_type=library)
                     if isinstance(a, np.ndarray) else a for a in arguments]
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        xpuc.jit(fn)(*arguments)
    assert ran_as(where, xpuc.stats()), xpuc.stats()
    np.testing.assert_array_equal(got if library == "numpy" else dpt.asnumpy(got), base)


def test_a_masked_store_of_an_array_apart_copies_nothing(monkeypatch):
    monkeypatch.setenv(MODEL, "0")
    x, y = start(LONG), start(LONG)[::-1].copy()
    m = signs(LONG) > 0.0
    want = x.copy()
    want[m] = y[m]
    x, y, m = (xpuc.asarray(v, queue=DEVICE, usm_type="device") for v in (x, y, m))
    xpuc.reset_stats()
    xpuc.jit(masked_store_of_another_argument)(x, y, m)
    assert xpuc.stats()["d2d_bytes"] == 0, xpuc.stats()
    np.testing.assert_array_equal(dpt.asnumpy(x), want)


@xpuc.jit
def masked_store_into_a_reshape(a, b):
    m = b > 0.0
    a.reshape((a.shape[1], a.shape[0]))[m] = a[m]


def test_a_masked_store_into_a_call_made_after_its_value_is_refused_naming_the_line():
    """Its value would be read by the store's loop where the call has run:
    only views may be made between them."""
    with pytest.raises(xpuc.UnsupportedError) as refusal:
        with xpuc.device_context(DEVICE):
            masked_store_into_a_reshape(start((4, 4)), signs((4, 4)))
    lines, first = inspect.getsourcelines(masked_store_into_a_reshape.py_func)
    line = first + next(k for k, text in enumerate(lines) if "[m] = a[m]" in text)
    assert str(refusal.value) == (
        f"{__file__}:{line}: a masked store whose target is made by more than views of "
        "arrays after its value is not supported")
