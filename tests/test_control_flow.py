"""Control flow inside parfor bodies: branches, inner serial loops, while loops,
break and continue, local variables carried across them. Each result is
compared with Numba on the CPU (the same function outside a device context)."""

import re

import numba
import numpy as np
import pytest

import xpuc

DEVICE = "opencl:cpu"


def on_device_and_cpu(fn, make_args, launches=True):
    """Run ``fn`` under the device context and on the CPU on equal arguments;
    return both sets of arguments (outputs are written in place). Kernels ran
    unless ``launches`` is False (parfors over empty ranges launch nothing)."""
    device_args, cpu_args = make_args(), make_args()
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        fn(*device_args)
    assert (xpuc.stats()["kernel_launches"] > 0) == launches, "kernels ran, or did not"
    fn(*cpu_args)
    return device_args, cpu_args


def inputs(n=257, seed=1):
    def make():
        rng = np.random.default_rng(seed)
        return rng.uniform(-3, 3, n), np.zeros(n)

    return make


@xpuc.jit
def if_elif_else(a, out):
    for i in numba.prange(a.shape[0]):
        if a[i] > 1.0:
            out[i] = a[i] * 2.0
        elif a[i] < -1.0:
            out[i] = -a[i]
        else:
            out[i] = 0.0


@xpuc.jit
def local_variable_through_branches(a, out):
    for i in numba.prange(a.shape[0]):
        x = a[i]
        if x < 0:
            x = -x
            if x > 2:
                x = 2.0
        out[i] = x + 1.0


@xpuc.jit
def inner_range_loop(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for k in range(1, 8, 2):
            total += a[i] * k
        out[i] = total


@xpuc.jit
def break_and_continue(a, out):
    for i in numba.prange(a.shape[0]):
        count = 0.0
        for k in range(20):
            if k % 3 == 0:
                continue
            if count > a[i] * 4:
                break
            count += 1.0
        out[i] = count


@xpuc.jit
def while_loop(a, out):
    for i in numba.prange(a.shape[0]):
        x = abs(a[i]) + 1.0
        steps = 0
        while x > 0.01:
            x = x * 0.5
            steps += 1
        out[i] = steps


@xpuc.jit
def loop_over_row(m, out):
    for i in numba.prange(m.shape[0]):
        best = m[i, 0]
        for j in range(1, m.shape[1]):
            best = max(best, m[i, j])
        out[i] = best


@pytest.mark.parametrize("fn", [if_elif_else, local_variable_through_branches,
                                inner_range_loop, break_and_continue, while_loop],
                         ids=lambda fn: fn.__name__)
def test_against_numba_cpu(fn):
    (_, device_out), (_, cpu_out) = on_device_and_cpu(fn, inputs())
    np.testing.assert_allclose(device_out, cpu_out, rtol=1e-12)


def test_loop_over_a_row_of_a_matrix():
    def make():
        return np.random.default_rng(2).uniform(-5, 5, (40, 13)), np.zeros(40)

    (m, device_out), (_, cpu_out) = on_device_and_cpu(loop_over_row, make)
    np.testing.assert_array_equal(device_out, m.max(axis=1))
    np.testing.assert_array_equal(device_out, cpu_out)


@xpuc.jit
def row_sums(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for j in range(a.shape[1]):
            total += a[i, j]
        out[i] = total


@xpuc.jit
def rows_scaled_by_their_norm(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for j in range(a.shape[1]):
            total += a[i, j] * a[i, j]
        scale = 1.0 / (1.0 + np.sqrt(total))  # 1 + : an empty row divides by 1
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * scale


@xpuc.jit
def stencil_along_rows(a, out):
    for i in numba.prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


@pytest.mark.parametrize("shape", [(1001, 3), (17, 1000), (1, 1), (3, 0), (0, 4)])
@pytest.mark.parametrize("fn, out_shape", [(row_sums, lambda s: s[:1]),
                                           (rows_scaled_by_their_norm, lambda s: s),
                                           (stencil_along_rows, lambda s: s)],
                         ids=lambda x: getattr(x, "__name__", ""))
def test_kernels_whose_work_items_walk_rows(fn, out_shape, shape):
    # run unvectorized across work-items on the CPU device (lane_strides):
    # every row, and every element of it, is still computed once
    def make():
        return (np.random.default_rng(3).uniform(1, 2, shape), np.zeros(out_shape(shape)))

    rows = shape[0] - 2 if fn is stencil_along_rows else shape[0]  # the prange's range
    (_, device_out), (_, cpu_out) = on_device_and_cpu(fn, make, launches=rows > 0)
    np.testing.assert_allclose(device_out, cpu_out, rtol=1e-12)
    assert '"VecTypeHint"' in fn.inspect_mlir("spirv")


@xpuc.jit
def row_products(a, out):
    for i in numba.prange(a.shape[0]):
        product = 1.0
        for j in range(a.shape[1]):
            product *= a[i, j]
        out[i] = product


@xpuc.jit
def row_differences(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for j in range(a.shape[1]):
            total -= a[i, j]
        out[i] = total


@xpuc.jit
def sums_in_a_while_loop(a, out):
    for i in numba.prange(a.shape[0]):
        total, j = 0.0, 0
        while j < a.shape[1]:
            total = total + 2.0 * a[i, j]
            j += 1
        out[i] = total


def rows_that_reordering_changes(shape):
    """Rows whose sum, and product, depend on the order of the operations:
    values of all magnitudes and signs, and each row led by a huge one that
    absorbs the small ones added to it one after another."""
    rng = np.random.default_rng(7)
    a = rng.uniform(0.5, 2.0, shape) * 10.0 ** rng.integers(-8, 9, shape)
    a *= rng.choice([-1.0, 1.0], shape)
    a[:, 0], a[:, -1] = 1e16, -1e16
    return a


@pytest.mark.parametrize("fn", [row_sums, row_products, row_differences,
                                sums_in_a_while_loop], ids=lambda fn: fn.py_func.__name__)
@pytest.mark.parametrize("shape", [(37, 1001), (300, 64)])
def test_sums_and_products_in_a_loop_keep_their_order(fn, shape):
    # the CPU device's compiler vectorizes such a loop by reordering it (it
    # summed a row of 1e16, 999 ones and -1e16 to 868): bit for bit as Numba
    def make():
        return rows_that_reordering_changes(shape), np.zeros(shape[0])

    rows = shape[0] - 2 if fn is stencil_along_rows else shape[0]  # the prange's range
    (_, device_out), (_, cpu_out) = on_device_and_cpu(fn, make, launches=rows > 0)
    np.testing.assert_array_equal(device_out, cpu_out)


def test_fastmath_lets_the_device_reorder_sums_in_a_loop():
    # Numba's fastmath ('reassoc' among its flags) allows what the test above
    # forbids: the sum is left to the device's compiler, which reorders it
    fast_row_sums = xpuc.jit(fastmath=True)(row_sums.py_func)
    rows = np.random.default_rng(3).random((37, 1001))
    out, exact = np.zeros(37), np.zeros(37)
    with xpuc.device_context(DEVICE):
        xpuc.reset_stats()
        fast_row_sums(rows, out)
        assert xpuc.stats()["kernel_launches"] > 0
        row_sums(rows, exact)
    np.testing.assert_allclose(out, rows.sum(axis=1), rtol=1e-12)
    assert "spirv.CL.fma" not in fast_row_sums.inspect_mlir("spirv")
    assert "spirv.CL.fma" in row_sums.inspect_mlir("spirv")


def test_mandelbrot():
    @xpuc.jit
    def mandelbrot(xs, ys, iterations, out):
        for p in numba.prange(xs.shape[0]):
            c_re, c_im = xs[p], ys[p]
            z_re, z_im = 0.0, 0.0
            n = 0
            while n < iterations and z_re * z_re + z_im * z_im <= 4.0:
                z_re, z_im = z_re * z_re - z_im * z_im + c_re, 2.0 * z_re * z_im + c_im
                n += 1
            out[p] = n

    def make():
        grid = np.mgrid[-2:1:60j, -1.2:1.2:40j]
        return grid[0].ravel(), grid[1].ravel(), 50, np.zeros(2400, np.int64)

    (_, _, _, device_out), (_, _, _, cpu_out) = on_device_and_cpu(mandelbrot, make)
    np.testing.assert_array_equal(device_out, cpu_out)
    assert device_out.min() < 50 and device_out.max() == 50


def test_control_flow_is_structured_at_the_linalg_stage():
    (_, _), _ = on_device_and_cpu(break_and_continue, inputs(16))
    text = break_and_continue.inspect_mlir("linalg")
    assert "scf.while" in text and "scf.if" in text
    assert "cf.br" not in text and "memref.alloca" not in text


def test_jacobi_time_loop_builds_its_kernels_once():
    @xpuc.jit
    def jacobi(grid, steps):
        new = grid.copy()
        for _ in range(steps):
            for i in numba.prange(1, grid.shape[0] - 1):
                for j in range(1, grid.shape[1] - 1):
                    new[i, j] = 0.25 * (grid[i - 1, j] + grid[i + 1, j]
                                        + grid[i, j - 1] + grid[i, j + 1])
            grid, new = new, grid
        return grid

    def make():
        grid = np.zeros((40, 30))
        grid[0, :] = 1.0
        return grid, 25

    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        result = jacobi(*make())
    counters = xpuc.stats()
    np.testing.assert_allclose(result, jacobi.py_func(*make()), rtol=1e-12)
    assert counters["kernel_launches"] >= 25
    assert counters["kernel_builds"] <= 2  # per kernel, not per step


def test_nested_prange_runs_the_inner_loop_in_each_work_item():
    @xpuc.jit
    def outer_product(x, y, out):
        for i in numba.prange(x.shape[0]):
            for j in numba.prange(y.shape[0]):
                out[i, j] = x[i] * y[j] + i - j

    def make():
        rng = np.random.default_rng(4)
        return rng.normal(size=33), rng.normal(size=17), np.zeros((33, 17))

    (x, y, device_out), (_, _, cpu_out) = on_device_and_cpu(outer_product, make)
    np.testing.assert_allclose(device_out, cpu_out, rtol=1e-12)
    np.testing.assert_allclose(
        device_out, np.outer(x, y) + np.arange(33)[:, None] - np.arange(17), rtol=1e-12)


def test_reduction_over_a_nested_prange():
    @xpuc.jit
    def total(m):
        s = 0.0
        for i in numba.prange(m.shape[0]):
            for j in numba.prange(m.shape[1]):
                s += m[i, j]
        return s

    m = np.random.default_rng(5).normal(size=(30, 20))
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        result = total(m)
    assert xpuc.stats()["kernel_launches"] > 0
    np.testing.assert_allclose(result, m.sum(), rtol=1e-12)


@xpuc.jit
def optional_write(out, value=None):
    for i in numba.prange(out.shape[0]):
        if value is not None:
            out[i] = value


def test_a_loop_whose_body_numba_prunes_away():
    out = np.ones(5)
    with xpuc.device_context(DEVICE):
        optional_write(out)
        assert (out == 1).all()
        optional_write(out, 2.0)
    assert (out == 2).all()


def test_arrays_made_in_the_body_belong_to_the_work_item():
    @xpuc.jit
    def windows(a, out):
        width = 4
        for i in numba.prange(out.shape[0]):
            window = np.zeros((width,))     # a literal shape
            grid = np.ones((2, 3), np.int32)  # a constant tuple
            for k in range(width):
                window[k] = a[i + k] * (k + 1)
            grid[1, 2] = i
            out[i] = window.sum() + window[-1] + grid.sum()

    def make():
        return np.random.default_rng(4).uniform(-1, 1, 104), np.zeros(100)

    (_, device_out), (_, cpu_out) = on_device_and_cpu(windows, make)
    np.testing.assert_allclose(device_out, cpu_out, rtol=1e-12)


def test_array_of_a_variable_shape_made_in_the_body_is_refused_where_written():
    """Read only, ``np.zeros(n)`` is an array no memory holds (its elements
    computed where read, rules/computed_arrays.py); written, it would need
    memory of a size known only when running."""
    @xpuc.jit
    def read_rows(a, out):
        for i in numba.prange(out.shape[0]):
            row = np.ones(a.shape[1])
            out[i] = row.sum() + a[i, 0]
        return out

    @xpuc.jit
    def rows(a, out):
        for i in numba.prange(out.shape[0]):
            row = np.zeros(a.shape[1])
            row[0] = a[i, 0]
            out[i] = row.sum()

    with xpuc.device_context(DEVICE):
        np.testing.assert_allclose(read_rows(np.ones((3, 4)), np.zeros(3)), [5.0] * 3)
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as info:
        rows(np.ones((3, 4)), np.zeros(3))
    assert "an array made in a parfor body or kernel with a shape that is not a constant" \
        in str(info.value)


BLOCK = 16


@xpuc.jit
def suffix_sums(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for j in range(i, a.shape[0]):  # the last work-item's loop runs once
            total += a[j]
        out[i] = total


@xpuc.jit
def after_each(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for j in range(i + 1, a.shape[0]):  # the last work-item's loop never runs
            total += a[j] * a[i]
        out[i] = total


@xpuc.jit
def blocks_of_rows(a, out):
    n = a.shape[0]
    for block in numba.prange((n + BLOCK - 1) // BLOCK):
        for i in range(block * BLOCK, min(block * BLOCK + BLOCK, n)):
            out[i] = 2.0 * a[i] + 1.0


@xpuc.jit
def trailing_window(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for j in range(i - 3, i + 1):  # from -3: a[-3] is a[n - 3]
            total += a[j]
        out[i] = total


@xpuc.jit
def last_index_after_the_loop(a, out):
    for i in numba.prange(a.shape[0]):
        j = -1
        for j in range(i % 5):
            out[i] += a[j]
        out[i] += j  # Python keeps the loop's last index (-1 if it never ran)


@xpuc.jit
def sum_until_large(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for j in range(i, a.shape[0]):
            if a[j] > 2.5:
                break  # a loop with two exits: not a counted one
            total += a[j]
        out[i] = total


# Numba's wraparound of a negative subscript: ``j < 0 ? j + n : j``
WRAPAROUND = re.compile(r"arith\.cmpi slt, %\w+, %c0 : index")


@pytest.mark.parametrize("fn, counted, wraps", [
    (suffix_sums, True, False), (after_each, True, False), (blocks_of_rows, True, False),
    (trailing_window, True, True), (last_index_after_the_loop, True, False),
    (sum_until_large, False, True),
])
def test_loops_counting_from_a_work_item_index(fn, counted, wraps):
    """An inner loop becomes an scf.for (counted_loops.py), whose index has a
    range: from a start that cannot be negative its subscripts keep no
    wraparound, from one that may be they keep it. A loop that may break
    stays an scf.while, its subscripts wrapping around."""
    device, cpu = on_device_and_cpu(fn, inputs(n=203))
    np.testing.assert_allclose(device[1], cpu[1], rtol=1e-12)
    gpu = fn.inspect_mlir("gpu")
    assert ("scf.while" not in gpu) == counted
    assert bool(WRAPAROUND.search(gpu)) == wraps


@xpuc.jit
def kmeans_step(points, centroids, chunk):
    """One k-means step as users write it for threads: a prange over chunks of
    points, each summing its points into its own row (constants 1e300 and 1e-12
    have no decimal point in Python's repr, which broke the linalg stage)."""
    n, d = points.shape
    k = centroids.shape[0]
    chunks = (n + chunk - 1) // chunk
    sums = np.zeros((chunks, k, d))
    counts = np.zeros((chunks, k))
    for c in numba.prange(chunks):
        for i in range(c * chunk, min((c + 1) * chunk, n)):
            best, best_distance = 0, 1e300
            for j in range(k):
                distance = 0.0
                for m in range(d):
                    diff = points[i, m] - centroids[j, m]
                    distance += diff * diff
                if distance < best_distance:
                    best, best_distance = j, distance
            counts[c, best] += 1.0
            for m in range(d):
                sums[c, best, m] += points[i, m]
    return sums.sum(axis=0) / np.maximum(counts.sum(axis=0), 1e-12).reshape(k, 1)


def test_kmeans_step_over_chunks_of_points():
    rng = np.random.default_rng(3)
    points, centroids = rng.random((5000, 4)), rng.random((6, 4))
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        device = kmeans_step(points, centroids, 256)
    assert xpuc.stats()["kernel_launches"] > 0, "nothing ran on the device"
    np.testing.assert_allclose(device, kmeans_step(points, centroids, 256), rtol=1e-13)
