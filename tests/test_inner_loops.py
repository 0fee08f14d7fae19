"""An independent inner loop of a prange body as a second parallel dimension
(frontend/inner_loops.py), where the Target asks for it (a GPU): results
against NumPy on the CPU device with its decision pinned to a GPU's, the
shapes that must stay one work-item per row (each independence condition
broken), the CPU device's own decision, and the PTX for an H100 (which
tests/conftest.py validates with ptxas)."""

import dataclasses
import math
import re

import dpctl
import numpy as np
import pytest
from numba import prange

import xpuc
from xpuc import cli, targets
from xpuc.array_library import tensor as dpt
from xpuc.targets import arch_target


@pytest.fixture
def widened(monkeypatch):
    """The CPU device's Target deciding as a GPU's: independent inner loops
    become a parallel dimension, so that the CPU device runs those kernels."""
    target_for = targets.target_for
    monkeypatch.setattr(targets, "target_for", lambda device: dataclasses.replace(
        target_for(device), parallel_inner_loops=True))


def _two_dimensional(function) -> bool:
    """Whether ``function``'s (one) kernel runs over a 2-D range of work-items."""
    return re.search(r"gpu\.global_id\s+y", function.inspect_mlir("gpu")) is not None


def _pairwise(points, out):
    for i in prange(points.shape[0]):
        for j in range(points.shape[0]):
            total = 0.0
            for k in range(points.shape[1]):
                d = points[i, k] - points[j, k]
                total += d * d
            out[i, j] = math.sqrt(total)


def _mandelbrot(out, x0, y0, dx, dy, max_iterations):
    for i in prange(out.shape[0]):
        for j in range(out.shape[1]):
            cx, cy = x0 + j * dx, y0 + i * dy
            x = y = 0.0
            n = 0
            while n < max_iterations and x * x + y * y <= 4.0:
                x, y = x * x - y * y + cx, 2.0 * x * y + cy
                n += 1
            out[i, j] = n


def _jacobi_rows(grid, other):
    # a prefix of the parfor index (i), bounds the host computes (shape - 1)
    for r in prange(grid.shape[0] - 2):
        i = r + 1
        for j in range(1, grid.shape[1] - 1):
            other[i, j] = 0.25 * (grid[i - 1, j] + grid[i + 1, j]
                                  + grid[i, j - 1] + grid[i, j + 1])


def _mandelbrot_reference(shape, x0, y0, dx, dy, max_iterations):
    out = np.zeros(shape, np.int32)
    for i in range(shape[0]):
        for j in range(shape[1]):
            c = complex(x0 + j * dx, y0 + i * dy)
            z, n = 0j, 0
            while n < max_iterations and abs(z) ** 2 <= 4.0:
                z, n = z * z + c, n + 1
            out[i, j] = n
    return out


def _run(function, args: tuple, usm: bool) -> list[np.ndarray]:
    """``function`` called on ``args`` as USM arrays or as NumPy arrays in a
    device context; the arrays after the call."""
    if usm:
        arrays = [dpt.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        function(*arrays)
        return [dpt.asnumpy(a) for a in arrays if isinstance(a, dpt.usm_ndarray)]
    with xpuc.device_context("opencl:cpu"):
        function(*args)
    return [a for a in args if isinstance(a, np.ndarray)]


# trip counts of 1, odd ones and ones no work-group size divides
@pytest.mark.parametrize("usm", [True, False], ids=["usm", "numpy"])
@pytest.mark.parametrize("n, dims, dtype", [(1, 3, np.float64), (7, 16, np.float64),
                                            (131, 5, np.float32)])
def test_pairwise_distances(widened, n, dims, dtype, usm):
    points = np.random.default_rng(n).random((n, dims)).astype(dtype)
    function = xpuc.jit(_pairwise)
    _, out = _run(function, (points, np.zeros((n, n), dtype)), usm)
    assert _two_dimensional(function)
    expected = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(out, expected, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-6)


@pytest.mark.parametrize("usm", [True, False], ids=["usm", "numpy"])
@pytest.mark.parametrize("shape", [(1, 1), (5, 1), (1, 9), (33, 47)])
def test_mandelbrot(widened, shape, usm):
    rows, cols = shape
    args = (-2.0, -1.0, 3.0 / cols, 2.0 / rows, 60)
    function = xpuc.jit(_mandelbrot)
    (out,) = _run(function, (np.zeros(shape, np.int32), *args), usm)
    assert _two_dimensional(function)
    np.testing.assert_array_equal(out, _mandelbrot_reference(shape, *args))


@pytest.mark.parametrize("usm", [True, False], ids=["usm", "numpy"])
@pytest.mark.parametrize("shape", [(3, 3), (9, 4), (34, 67)])
def test_jacobi_rows(widened, shape, usm):
    grid = np.random.default_rng(3).random(shape)
    function = xpuc.jit(_jacobi_rows)
    _, other = _run(function, (grid, grid.copy()), usm)
    assert _two_dimensional(function)
    expected = grid.copy()
    expected[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                   + grid[1:-1, :-2] + grid[1:-1, 2:])
    np.testing.assert_allclose(other, expected, rtol=1e-13)


def test_the_host_branch_of_a_widened_parfor(widened, monkeypatch):
    """A tiny parfor runs Numba's loop on the host (the cost model), after the
    bounds the widened kernel would take are computed there."""
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "1000000")
    grid = np.random.default_rng(7).random((6, 5))
    function = xpuc.jit(_jacobi_rows)
    launches = xpuc.stats()["kernel_launches"]
    (_, other) = _run(function, (grid, grid.copy()), usm=False)
    assert xpuc.stats()["kernel_launches"] == launches and _two_dimensional(function)
    expected = grid.copy()
    expected[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                   + grid[1:-1, :-2] + grid[1:-1, 2:])
    np.testing.assert_allclose(other, expected, rtol=1e-13)


# Each breaks one condition of independence: the loop stays in each work-item.

def _carried_scalar(a, out):
    for i in prange(a.shape[0]):
        running = 0.0
        for j in range(a.shape[1]):
            running = running * 0.5 + a[i, j]
            out[i, j] = running


def _write_not_indexed_by_j(a, out):
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, 0] = a[i, j]


def _reads_another_j(a, out):
    for i in prange(a.shape[0]):
        for j in range(1, a.shape[1]):
            out[i, j] = out[i, j - 1] + a[i, j]


def _trip_count_of_i(a, out):
    for i in prange(a.shape[0]):
        for j in range(i + 1):
            out[i, j] = 2.0 * a[i, j]


def _leaves_early(a, out):
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > 0.9:
                break
            out[i, j] = a[i, j]


def _row_norms(a, out):  # a reduction: rows stay work-items
    for i in prange(a.shape[0]):
        total = 0.0
        for j in range(a.shape[1]):
            total += a[i, j] * a[i, j]
        out[i, 0] = math.sqrt(total)


def _nearest_column(a, out):  # k-means assignment's shape: a carried minimum
    for i in prange(a.shape[0]):
        best, best_value = 0, np.inf
        for j in range(a.shape[1]):
            if a[i, j] < best_value:
                best, best_value = j, a[i, j]
        out[i, 0] = best


def _reference(function, a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``function``'s result run as plain Python (prange a range)."""
    expected = out.copy()
    function.__globals__["prange"], saved = range, function.__globals__["prange"]
    try:
        function(a, expected)
    finally:
        function.__globals__["prange"] = saved
    return expected


@pytest.mark.parametrize("usm", [True, False], ids=["usm", "numpy"])
@pytest.mark.parametrize("function", [_carried_scalar, _write_not_indexed_by_j, _reads_another_j,
                                      _trip_count_of_i, _leaves_early, _row_norms,
                                      _nearest_column])
def test_dependent_inner_loops_stay_in_each_work_item(widened, function, usm):
    a = np.random.default_rng(4).random((37, 37))
    out = np.zeros_like(a)
    out[:, 0] = a[:, 0]
    expected = _reference(function, a, out)
    jitted = xpuc.jit(function)
    _, result = _run(jitted, (a, out), usm)
    assert not _two_dimensional(jitted)
    np.testing.assert_allclose(result, expected, rtol=1e-13)


def _last_value(a, out):
    last = -1.0
    for i in prange(a.shape[0]):
        last = i * 1.0
        for j in range(a.shape[1]):
            last = a[i, j]
            out[i, j] = a[i, j]
    return last


@pytest.mark.parametrize("columns", [0, 5])
def test_a_variable_read_after_the_loop_keeps_its_last_value(widened, columns):
    """Numba's races: the value of the last iteration that assigned it, the
    prefix's where the inner loop is empty (the widened nest, with no
    work-item, would assign it nowhere)."""
    a = np.random.default_rng(6).random((9, columns))
    function = xpuc.jit(_last_value)
    with xpuc.device_context("opencl:cpu"):
        assert function(a, np.zeros_like(a)) == (a[8, 4] if columns else 8.0)


def test_the_cpu_device_keeps_rows_as_work_items():
    """Its decision (Target.parallel_inner_loops): at the suite's sizes a
    work-item per (i, j) was no faster there, and slower on Jacobi over rows
    (docs/performance.md)."""
    function = xpuc.jit(_pairwise)
    _run(function, (np.random.default_rng(5).random((9, 3)), np.zeros((9, 9))), usm=True)
    assert not _two_dimensional(function)
    assert not targets.target_for(dpctl.SyclDevice("opencl:cpu")).parallel_inner_loops


@pytest.mark.parametrize("arch", ["sm_90", "sm_75", "pvc", "dg2"])
def test_gpus_make_inner_loops_a_dimension(arch):
    assert arch_target(arch).parallel_inner_loops


WORKLOADS_SOURCE = '''
import math
from numba import prange
import xpuc


@xpuc.jit("void(float32[:, ::1], float32[:, ::1])")
def pairwise(points, out):
    for i in prange(points.shape[0]):
        for j in range(points.shape[0]):
            total = 0.0
            for k in range(points.shape[1]):
                d = points[i, k] - points[j, k]
                total += d * d
            out[i, j] = math.sqrt(total)


@xpuc.jit("void(int32[:, ::1], float64, float64, float64, float64, int64)")
def mandelbrot(out, x0, y0, dx, dy, max_iterations):
    for i in prange(out.shape[0]):
        for j in range(out.shape[1]):
            cx, cy = x0 + j * dx, y0 + i * dy
            x = y = 0.0
            n = 0
            while n < max_iterations and x * x + y * y <= 4.0:
                x, y = x * x - y * y + cx, 2.0 * x * y + cy
                n += 1
            out[i, j] = n


@xpuc.jit("void(float64[:, ::1], float64[:, ::1])")
def row_norms(a, out):
    for i in prange(a.shape[0]):
        total = 0.0
        for j in range(a.shape[1]):
            total += a[i, j] * a[i, j]
        out[i, 0] = math.sqrt(total)
'''


def test_the_h100s_kernels_run_a_thread_per_pair(tmp_path, capsys):
    """PTX for sm_90 (ptxas checks it): pairwise distances and Mandelbrot
    index rows by the grid's y, a reduction's rows stay on x alone."""
    path = tmp_path / "workloads.py"
    path.write_text(WORKLOADS_SOURCE)
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "ptx"]) == 0
    ptx = capsys.readouterr().out
    pairwise, rest = ptx.split("// xpuc: function mandelbrot", 1)
    mandelbrot, row_norms = rest.split("// xpuc: function row_norms", 1)
    assert "%ctaid.y" in pairwise and "%ctaid.y" in mandelbrot
    assert "%ctaid.y" not in row_norms and "%ctaid.x" in row_norms
