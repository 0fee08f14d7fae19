"""A prange body that reads elements other iterations write (a loop-carried
dependence) is refused naming the line and the array; one whose accesses are
each the iteration's own (a row, an element at the loop's index) runs, as do
stores to an array the body does not read. A row that every iteration reads
and one owns (Floyd–Warshall's ``path[k, :]``) is compared before and after
the loop: the answer is the sequential loop's, or an error where it changed."""

import inspect

import numba as nb
import numpy as np
import pytest
from device_support import offload
from numba import prange
from numba.core.runtime import _nrt_python, rtsys

import xpuc


@xpuc.jit
def cholesky(A):
    for i in range(1, A.shape[0]):
        for j in nb.prange(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return A


@xpuc.jit
def smooth_in_place(a):
    for i in prange(1, a.shape[0] - 1):
        a[i] = a[i - 1] + a[i + 1]


@xpuc.jit
def sum_of_all(a):
    for i in prange(a.shape[0]):
        a[i] = np.sum(a)


@xpuc.jit
def transposed_2d(a):
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            a[i, j] = a[j, i] + 1.0


def _line_of(fn, text: str) -> str:
    lines, first = inspect.getsourcelines(fn.py_func)
    return f"test_loop_carried.py:{first + next(k for k, line in enumerate(lines) if text in line)}"


@pytest.mark.parametrize("fn, shape, line", [
    (cholesky, (40, 40), "A[i, j] -= np.dot"),
    (smooth_in_place, (64,), "a[i] = a[i - 1] + a[i + 1]"),
    (sum_of_all, (64,), "a[i] = np.sum(a)"),
    (transposed_2d, (8, 8), "a[i, j] = a[j, i]"),
], ids=["cholesky", "smoothing in place", "whole array read", "nested prange transposed"])
def test_read_of_what_other_iterations_write_is_refused(fn, shape, line):
    with pytest.raises(xpuc.UnsupportedError) as error:
        with xpuc.device_context("opencl:cpu"):
            fn(np.ones(shape))
    message = str(error.value)
    name = "'A'" if fn is cholesky else "'a'"
    assert _line_of(fn, line) in message and name in message
    assert "loop-carried dependence" in message
    assert "$" not in message and "numba" not in message and "xpuc/" not in message


@xpuc.jit
def double(a):
    for i in prange(a.shape[0]):
        a[i] *= 2


@xpuc.jit
def scale_rows(A, s):
    for i in prange(A.shape[0]):
        A[i, :] = A[i, 0] * s[i]


@xpuc.jit
def prefix_sums_of_rows(A):
    for i in prange(A.shape[0]):
        for k in range(A.shape[1] - 1):
            A[i, k + 1] += A[i, k]


@xpuc.jit
def normalize_rows(A):
    for i in prange(A.shape[0]):
        row = A[i]
        total = np.sum(row)
        for k in range(row.shape[0]):
            row[k] = row[k] / total


@xpuc.jit
def blocks_in_place(a):
    # each iteration owns the block of elements its serial loop covers
    for b in prange((a.shape[0] + 3) // 4):
        for j in range(b * 4, min(b * 4 + 4, a.shape[0])):
            a[j] = a[j] * 2 + 1


@xpuc.jit
def add_one_2d(a):
    for i in prange(a.shape[0]):
        for j in prange(a.shape[1]):
            a[i, j] = a[i, j] + 1.0


@xpuc.jit
def stencil(a, b):
    for i in prange(1, a.shape[0] - 1):
        b[i] = a[i - 1] + a[i + 1]


@pytest.mark.parametrize("fn, make, want", [
    (double, lambda: np.arange(64.0), lambda a: a * 2),
    (prefix_sums_of_rows, lambda: np.arange(48.0).reshape(6, 8),
     lambda a: np.cumsum(a, axis=1)),
    (normalize_rows, lambda: np.arange(1.0, 49.0).reshape(6, 8),
     lambda a: a / a.sum(axis=1, keepdims=True)),
    (blocks_in_place, lambda: np.arange(30.0), lambda a: a * 2 + 1),
    (add_one_2d, lambda: np.arange(48.0).reshape(6, 8), lambda a: a + 1),
], ids=["a[i] *= 2", "serial loop over a row", "row view", "blocks of a serial loop",
        "nested prange own element"])
def test_accesses_the_iteration_owns_run(fn, make, want):
    a = make()
    expected = want(a.copy())
    offload(fn, a)
    np.testing.assert_allclose(a, expected)


def test_row_update_runs():
    A, s = np.arange(48.0).reshape(6, 8), np.arange(6.0)
    expected = np.repeat(A[:, :1] * s[:, None], 8, axis=1)
    offload(scale_rows, A, s)
    np.testing.assert_allclose(A, expected)


def test_stencil_into_another_array_runs():
    a, b = np.arange(64.0) ** 2, np.zeros(64)
    offload(stencil, a, b)
    np.testing.assert_allclose(b[1:-1], a[:-2] + a[2:])


@xpuc.jit
def scatter(idx, x, out):
    for i in prange(idx.shape[0]):
        out[idx[i]] = x[i]


def test_scatter_without_reads_runs():
    idx = np.random.default_rng(5).permutation(100)
    x, out = np.arange(100.0), np.zeros(100)
    offload(scatter, idx, x, out)
    np.testing.assert_allclose(out[idx], x)


# ---- a hyperplane one iteration owns, read by all (parfor_dependences.py) ----------

@xpuc.jit
def floyd_warshall(path):
    # dpbench's floyd_warshall_numba_dpex_p, as written
    for k in range(path.shape[0]):
        for i in nb.prange(path.shape[0]):
            path[i, :] = np.minimum(path[i, :], path[i, k] + path[k, :])


@xpuc.jit
def floyd_warshall_loops(path):
    for k in range(path.shape[0]):
        for i in nb.prange(path.shape[0]):
            for j in range(path.shape[1]):
                path[i, j] = min(path[i, j], path[i, k] + path[k, j])


@xpuc.jit
def eliminate_below(A):
    # Gaussian elimination's row update: row k is read by all, written by none
    n = A.shape[0]
    for k in range(n - 1):
        for i in nb.prange(k + 1, n):
            f = A[i, k] / A[k, k]
            A[i, :] = A[i, :] - f * A[k, :]


@xpuc.jit
def eliminate_below_in_place(A):
    n = A.shape[0]
    for k in range(n - 1):
        for i in nb.prange(k + 1, n):
            f = A[i, k] / A[k, k]
            A[i, :] -= f * A[k, :]


@xpuc.jit
def add_row_k(a, k):
    for i in prange(a.shape[0]):
        a[i, :] = a[i, :] + a[k, :]


@xpuc.jit
def row_stored_twice(a, k):
    for i in prange(a.shape[0]):
        a[i, :] = a[i, :] * 2.0
        a[i, :] = a[i, :] * 0.5 + a[k, :]


def _distances(n: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    path = rng.integers(1, 100, (n, n)).astype(np.int64)
    path[rng.random((n, n)) < 0.5] = 999  # no edge
    np.fill_diagonal(path, 0)
    return path


def _on_dpnp(fn, a: np.ndarray, *args) -> np.ndarray:
    import dpnp

    xpuc.reset_stats()
    on_device = dpnp.asarray(a)
    fn(on_device, *args)
    assert xpuc.stats()["kernel_launches"] > 0
    return dpnp.asnumpy(on_device)


@pytest.mark.parametrize("fn", [floyd_warshall, floyd_warshall_loops],
                         ids=["row expression", "serial loop"])
@pytest.mark.parametrize("arrays", ["numpy in context", "dpnp"])
def test_floyd_warshall_gives_the_sequential_answer(fn, arrays, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")  # every parfor on the device
    path = _distances(48)
    expected = path.copy()
    fn.py_func(expected)
    if arrays == "dpnp":
        got = _on_dpnp(fn, path)
    else:
        got = path.copy()
        offload(fn, got)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("fn", [eliminate_below, eliminate_below_in_place],
                         ids=["A[i, :] = A[i, :] - f * A[k, :]", "A[i, :] -= f * A[k, :]"])
@pytest.mark.parametrize("arrays", ["numpy in context", "dpnp"])
def test_gaussian_elimination_row_update_gives_the_sequential_answer(fn, arrays, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    A = np.random.default_rng(3).random((24, 24)) + 24 * np.eye(24)
    expected = A.copy()
    fn.py_func(expected)
    if arrays == "dpnp":
        got = _on_dpnp(fn, A)
    else:
        got = A.copy()
        offload(fn, got)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    np.testing.assert_allclose(np.tril(got, -1), 0, atol=1e-12)


def test_the_row_read_is_copied_twice_per_loop_and_only_there(monkeypatch):
    """The check costs two copies of the row read (d2h of a dpnp array) per
    prange loop; a loop reading only its own rows copies nothing."""
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    n = 32
    path = _distances(n)
    _on_dpnp(floyd_warshall, path)  # compiled
    _on_dpnp(floyd_warshall, path)
    assert xpuc.stats()["d2h_bytes"] == n * 2 * n * path.itemsize
    _on_dpnp(double, np.arange(64.0))  # compiled
    _on_dpnp(double, np.arange(64.0))
    assert xpuc.stats()["d2h_bytes"] == 0


@pytest.mark.parametrize("arrays", ["numpy in context", "dpnp"])
def test_an_iteration_changing_the_row_the_others_read_raises(arrays, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    a = np.ones((16, 8))
    with pytest.raises(xpuc.UnsupportedError) as error:
        if arrays == "dpnp":
            _on_dpnp(add_row_k, a, 3)
        else:
            offload(add_row_k, a, 3)
    message = str(error.value)
    assert f"{_line_of(add_row_k, 'a[i, :] = a[i, :] + a[k, :]')}: " in message
    assert "'a[k, :]'" in message and "order the iterations run in" in message
    assert "$" not in message and "xpuc/" not in message


def test_the_row_unchanged_by_its_iteration_is_no_error(monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    a = np.arange(128.0).reshape(16, 8)
    a[3] = 0.0  # iteration 3 adds zeros to its row: it stores the bits it read
    expected = a + a[3]
    offload(add_row_k, a, 3)
    np.testing.assert_array_equal(a, expected)


def test_a_row_an_iteration_stores_twice_is_refused():
    """Stored twice, a row could change and change back: the other
    iterations could read the value between, which no comparison after the
    loop sees."""
    with pytest.raises(xpuc.UnsupportedError) as error:
        offload(row_stored_twice, np.ones((8, 8)), 2)
    assert "loop-carried dependence" in str(error.value)


@xpuc.jit
def subtract_column_k(a, k):
    # column k, which iteration k owns, read by all
    for j in prange(a.shape[1]):
        a[:, j] = a[:, j] - a[:, k] * a[0, j]


@xpuc.jit
def add_element_k(a, k):
    for i in prange(a.shape[0]):
        a[i] = a[i] + a[k]


@pytest.mark.parametrize("fn, make, k", [
    (subtract_column_k, lambda: np.arange(1.0, 43.0).reshape(6, 7) * (np.arange(7) != 2), 2),
    (add_element_k, lambda: np.arange(10.0), 0),
], ids=["column k", "element k"])
def test_other_hyperplanes_unchanged_give_the_sequential_answer(fn, make, k, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    a = make()
    expected = a.copy()
    fn.py_func(expected, k)
    offload(fn, a, k)
    np.testing.assert_array_equal(a, expected)
    with pytest.raises(xpuc.UnsupportedError, match=r"'a\[(:, )?k\]'.*order the iterations"):
        offload(fn, make() + 1.0, k)


# ---- a hyperplane at an index the same in every iteration, computed in the body ----

@xpuc.jit
def eliminate_below_previous_pivot(A):
    # pivot row k - 1, as a loop counted from 1 writes it
    n = A.shape[0]
    for k in range(1, n):
        for i in nb.prange(k, n):
            f = A[i, k - 1] / A[k - 1, k - 1]
            A[i, :] -= f * A[k - 1, :]


@xpuc.jit
def eliminate_above_last_pivots(A):
    # Gauss–Jordan's upward sweep: pivot row n - 1 - k, from the last
    n = A.shape[0]
    for k in range(n - 1):
        for i in nb.prange(n - 1 - k):
            f = A[i, n - 1 - k] / A[n - 1 - k, n - 1 - k]
            A[i, :] = A[i, :] - f * A[n - 1 - k, :]


@xpuc.jit
def add_first_row(A):
    for i in nb.prange(1, A.shape[0]):
        A[i, :] = A[i, :] + A[0, :]


@xpuc.jit
def add_row_after_k(a, k):
    for i in prange(a.shape[0]):
        a[i, :] = a[i, :] + a[k + 1, :]


@xpuc.jit
def add_previous_row(a):
    for i in prange(1, a.shape[0]):
        a[i, :] = a[i, :] + a[i - 1, :]


@xpuc.jit
def add_row_chosen_by_array(a, rows):
    for i in prange(a.shape[0]):
        a[i, :] = a[i, :] + a[rows[0], :]


@xpuc.jit
def add_rows_of_a_serial_loop(a):
    for i in prange(a.shape[0]):
        for j in range(2):
            a[i, :] = a[i, :] + a[j + 1, :]


def _run(fn, arrays: str, a: np.ndarray, *args) -> np.ndarray:
    if arrays == "dpnp":
        return _on_dpnp(fn, a, *args)
    a = a.copy()
    offload(fn, a, *args)
    return a


@pytest.mark.parametrize("fn, tri", [(eliminate_below_previous_pivot, np.tril),
                                     (eliminate_above_last_pivots, np.triu)],
                         ids=["A[k - 1, :]", "A[n - 1 - k, :]"])
@pytest.mark.parametrize("arrays", ["numpy in context", "dpnp"])
def test_elimination_with_a_pivot_row_computed_in_the_body(fn, tri, arrays, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    A = np.random.default_rng(11).random((24, 24)) + 24 * np.eye(24)
    expected = A.copy()
    fn.py_func(expected)
    got = _run(fn, arrays, A)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    np.testing.assert_allclose(tri(got, -1 if tri is np.tril else 1), 0, atol=1e-12)


@pytest.mark.parametrize("arrays", ["numpy in context", "dpnp"])
def test_a_constant_row_read_by_all_iterations(arrays, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    A = np.arange(48.0).reshape(6, 8)
    got = _run(add_first_row, arrays, A)
    np.testing.assert_array_equal(got, np.vstack([A[:1], A[1:] + A[0]]))


@pytest.mark.parametrize("arrays", ["numpy in context", "dpnp"])
def test_a_changed_row_at_a_computed_index_raises_naming_the_line(arrays, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    a = np.arange(128.0).reshape(16, 8)
    a[4] = 0.0  # iteration 4 adds zeros to row k + 1: unchanged, no error
    np.testing.assert_array_equal(_run(add_row_after_k, arrays, a, 3), a + a[4])
    with pytest.raises(xpuc.UnsupportedError) as error:
        _run(add_row_after_k, arrays, np.ones((16, 8)), 3)
    message = str(error.value)
    assert f"{_line_of(add_row_after_k, 'a[i, :] = a[i, :] + a[k + 1, :]')}: " in message
    assert "'a[k + 1, :]'" in message and "order the iterations run in" in message
    assert "$" not in message and "xpuc/" not in message


@xpuc.jit
def add_last_row(A):
    for i in nb.prange(A.shape[0] - 1):
        A[i, :] = A[i, :] + A[A.shape[0] - 1, :]


@xpuc.jit
def scale_by_last_column(A):
    for j in nb.prange(A.shape[1] - 1):
        A[:, j] = A[:, j] * A[:, A.shape[-1] - 1]


@xpuc.jit
def add_row_before_last(A):
    for i in nb.prange(A.shape[0] - 2):
        n = A.shape[0]  # read in the body
        A[i, :] = A[i, :] + A[n - 2, :]


@xpuc.jit
def add_last_row_to_all(A):
    for i in nb.prange(A.shape[0]):
        A[i, :] = A[i, :] + A[A.shape[0] - 1, :]


@pytest.mark.parametrize("fn", [add_last_row, scale_by_last_column, add_row_before_last],
                         ids=["A[A.shape[0] - 1, :]", "A[:, A.shape[-1] - 1]",
                              "n = A.shape[0] in the body, A[n - 2, :]"])
@pytest.mark.parametrize("arrays", ["numpy in context", "dpnp"])
def test_a_hyperplane_at_an_index_computed_from_the_shape(fn, arrays, monkeypatch):
    """The array's dimensions are the same in every iteration (the loop
    does not assign the array): the host computes the index from them."""
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    A = np.arange(1.0, 49.0).reshape(6, 8)
    expected = A.copy()
    fn.py_func(expected)
    np.testing.assert_array_equal(_run(fn, arrays, A), expected)


@pytest.mark.parametrize("arrays", ["numpy in context", "dpnp"])
def test_a_changed_hyperplane_at_an_index_from_the_shape_is_named_so(arrays, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    with pytest.raises(xpuc.UnsupportedError) as error:
        _run(add_last_row_to_all, arrays, np.ones((6, 8)))
    message = str(error.value)
    assert _line_of(add_last_row_to_all, "A[i, :] = A[i, :] + A[A.shape[0] - 1, :]") in message
    assert "'A[A.shape[0] - 1, :]'" in message and "order the iterations run in" in message


@xpuc.jit
def add_row_k_and_vector(a, k, v):
    for i in prange(a.shape[0]):
        a[i, :] = a[i, :] + a[k, :] + v


def _raw_allocations_held() -> int:
    """NRT's allocations not freed yet, but for meminfos' (arrays')."""
    stats = rtsys.get_allocation_stats()
    return (stats.alloc - stats.mi_alloc) - (stats.free - stats.mi_free)


@pytest.mark.parametrize("arrays", ["numpy in context", "dpnp"])
def test_a_raise_between_a_rows_copy_and_its_comparison_frees_the_copy(arrays, monkeypatch):
    """The size check of ``v`` raises after the host copied 'a[k, :]' and
    before it compares it: the copy is freed all the same."""
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    a = np.ones((8, 4))
    a[3] = 0.0  # iteration 3 adds zeros to its row: unchanged

    def call(v: np.ndarray) -> None:
        if arrays == "dpnp":
            import dpnp

            add_row_k_and_vector(dpnp.asarray(a), 3, dpnp.asarray(v))
        else:
            offload(add_row_k_and_vector, a.copy(), 3, v)

    call(np.zeros(4))  # compiled first: compiling allocates too
    _nrt_python.memsys_enable_stats()
    try:
        before = _raw_allocations_held()
        for _ in range(3):
            with pytest.raises(AssertionError, match="do not match"):
                call(np.zeros(5))
        held = _raw_allocations_held() - before
    finally:
        _nrt_python.memsys_disable_stats()
    assert held == 0


@pytest.mark.parametrize("fn, args, line", [
    (add_previous_row, (), "a[i - 1, :]"),
    (add_row_chosen_by_array, (np.array([2]),), "a[rows[0], :]"),
    (add_rows_of_a_serial_loop, (), "a[j + 1, :]"),
], ids=["depends on i", "depends on an element", "depends on a serial loop"])
def test_a_row_index_not_the_same_in_every_iteration_is_refused(fn, args, line):
    with pytest.raises(xpuc.UnsupportedError) as error:
        offload(fn, np.ones((8, 8)), *args)
    message = str(error.value)
    assert _line_of(fn, line) in message and "'a'" in message
    assert "loop-carried dependence" in message
    assert "$" not in message and "xpuc/" not in message


# ---- a loop-carried dependence through two arguments that share memory -------------
#
# ``x[i] = y[i] + 1.0`` called with ``x = a[1:]`` and ``y = a[:-1]`` reads in
# iteration i the element iteration i - 1 writes: no name shows it, so the
# host compares the arrays before the launch, on the host as in kernels.


@xpuc.jit
def plus_one_from(x, y):
    for i in prange(x.shape[0]):
        x[i] = y[i] + 1.0


@xpuc.jit
def doubled_rows_from(x, y):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            x[i, j] = y[i, j] * 2.0


def sequential(fn, *args):
    """``fn``'s loop run in order by Python: the answer a program without a
    loop-carried dependence gives whatever the order."""
    fn.py_func(*args)


@pytest.mark.parametrize("fn, views, line", [
    (plus_one_from, lambda a: (a[1:], a[:-1]), "x[i] = y[i] + 1.0"),
    (plus_one_from, lambda a: (a[:-1], a[1:]), "x[i] = y[i] + 1.0"),
    (plus_one_from, lambda a: (a, a[::-1]), "x[i] = y[i] + 1.0"),
    (stencil, lambda a: (a, a), "b[i] = a[i - 1] + a[i + 1]"),
    (doubled_rows_from, lambda a: (a.reshape(8, 8)[1:], a.reshape(8, 8)[:-1]),
     "x[i, j] = y[i, j] * 2.0"),
], ids=["shifted right", "shifted left", "reversed", "stencil in place", "rows shifted down"])
@pytest.mark.parametrize("where", ["0", "100000000"], ids=["kernels", "host loop"])
def test_arguments_sharing_what_other_iterations_touch_are_refused(fn, views, line, where,
                                                                   monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", where)
    a = np.arange(64.0)
    xpuc.reset_stats()
    with pytest.raises(xpuc.UnsupportedError) as error:
        with xpuc.device_context("opencl:cpu"):
            fn(*views(a))
    message = str(error.value)
    assert f"/{_line_of(fn, line)}: " in message
    assert "share memory in this call" in message and "loop-carried dependence" in message
    stats = xpuc.stats()
    assert stats["kernel_launches"] == stats["host_parfors"] == 0, stats
    np.testing.assert_array_equal(a, np.arange(64.0))


@pytest.mark.parametrize("fn, views", [
    (plus_one_from, lambda a: (a, a)),
    (plus_one_from, lambda a: (a[:32], a[32:])),
    (plus_one_from, lambda a: (a[::2], a[1::2])),
    (doubled_rows_from, lambda a: (a.reshape(8, 8)[:, :6], a.reshape(8, 8)[:, 2:])),
    (doubled_rows_from, lambda a: (a.reshape(8, 8)[:, 2:], a.reshape(8, 8)[:, :6])),
], ids=["the same array", "halves", "interleaved", "rows shifted left within each row",
        "rows shifted right within each row"])
@pytest.mark.parametrize("where", ["0", "100000000"], ids=["kernels", "host loop"])
def test_arguments_meeting_only_where_one_iteration_owns_both_run(fn, views, where,
                                                                  monkeypatch):
    """Elements met only by the iteration that owns them in both (the same
    element, a row's own elements in its serial loop), or never: the
    sequential loop's answer."""
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", where)
    want = np.arange(64.0)
    sequential(fn, *views(want))
    a = np.arange(64.0)
    xpuc.reset_stats()
    with xpuc.device_context("opencl:cpu"):
        fn(*views(a))
    stats = xpuc.stats()
    assert stats["kernel_launches" if where == "0" else "host_parfors"] > 0, stats
    np.testing.assert_array_equal(a, want)
