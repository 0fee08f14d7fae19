"""A slice assignment of an array expression runs as one kernel that computes
each element and stores it into the view (issues 30 and 32: Jacobi's step was
two kernels, the expression into a temporary and the store). An array the
expression reads that may share the view's memory at another element is
copied first where it does (its byte span: by one memcpy on the host for a
NumPy array, by the runtime for USM, no kernel compiled for it:
shared_operands.py), as NumPy reads every
operand first. Checked
against NumPy on NumPy arrays in a device context and on device USM arrays,
with the cost model off (kernels) and on (tiny parfors on the host), counting
the parfors each call runs."""

import numba
import numpy as np
import pytest
from mlir import ir
from test_locations import file_locations, source_lines

import xpuc
from xpuc.array_library import tensor as dpt

DEVICE = "opencl:cpu"


@pytest.fixture(params=["kernels", "cost model"])
def cost_model(request, monkeypatch):
    if request.param == "cost model":
        monkeypatch.delenv("XPUC_HOST_PARFOR_MAX", raising=False)  # the device's threshold
    return request.param


def run(function, path: str, *args):
    """``function`` jitted and called on copies of ``args`` (``path``: NumPy
    arrays in a device context, or device USM arrays): its result as a NumPy
    array, the parfors it ran (kernels and host parfors) and the kernels
    compiled for it."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if path == "usm":
        copies = [dpt.asarray(a, usm_type="device") if isinstance(a, np.ndarray) else a
                  for a in copies]
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        result = xpuc.jit(function)(*copies)
    counters = xpuc.stats()
    as_numpy = dpt.asnumpy if path == "usm" else np.asarray
    return (as_numpy(result), counters["kernel_launches"] + counters["host_parfors"],
            counters["kernels_compiled"])


def jacobi(grid, steps):
    other = grid * 1.0
    for _ in range(steps):
        other[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                    + grid[1:-1, :-2] + grid[1:-1, 2:])
        grid, other = other, grid
    return grid


def jacobi_of_one_array(grid, steps):
    other = grid[:, :]  # the same memory: the swapped pair is not two arrays
    for _ in range(steps):
        other[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                    + grid[1:-1, :-2] + grid[1:-1, 2:])
        grid, other = other, grid
    return grid


def stencil_into(other, grid):
    other[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                + grid[1:-1, :-2] + grid[1:-1, 2:])
    return other


def smooth_rows(a):
    a[1:-1, 1:-1] = 0.5 * (a[:-2, 1:-1] + a[2:, 1:-1])  # the rows above and below
    return a


def shift(a):
    a[1:] = a[:-1] * 2.0
    return a


def scale_in_place(a, b):
    a[:] = a * 2.0 + np.sin(b)  # a read at the element written
    return a


def add_row(m, v):
    m[:, 1:] = m[:, 1:] * 0.5 - v  # a vector under each row of the view
    return m


PATHS = ["context", "usm"]
GRID = np.random.default_rng(7).random((12, 9))


@pytest.mark.parametrize("path", PATHS)
def test_jacobi_runs_one_parfor_a_step(path, cost_model):
    result, parfors, compiled = run(jacobi, path, GRID, 5)
    np.testing.assert_allclose(result, jacobi(GRID.copy(), 5), rtol=1e-13)
    assert parfors == 1 + 5  # the copy, then one a step
    # the swapped pair made by the function is proved apart: no staged form
    assert compiled == 2


@pytest.mark.parametrize("path", PATHS)
def test_a_swapped_pair_of_one_array_reads_the_old_values(path, cost_model):
    result, parfors, compiled = run(jacobi_of_one_array, path, GRID, 3)
    np.testing.assert_allclose(result, jacobi_of_one_array(GRID.copy(), 3), rtol=1e-13)
    # each step the fused store, after copies of the four views of grid (USM's by the
    # runtime, device to device)
    assert parfors == 3
    assert compiled == 1


@pytest.mark.parametrize("path", PATHS)
def test_a_stencil_into_another_argument_is_one_parfor(path, cost_model):
    other = np.zeros_like(GRID)
    result, parfors, _ = run(stencil_into, path, other, GRID)
    np.testing.assert_allclose(result, stencil_into(other.copy(), GRID), rtol=1e-13)
    assert parfors == 1


def test_a_stencil_into_its_own_argument_reads_the_old_values(cost_model):
    a = GRID.copy()
    with xpuc.device_context(DEVICE):
        xpuc.reset_stats()
        result = xpuc.jit(stencil_into)(a, a)
        counters = xpuc.stats()
    b = GRID.copy()
    np.testing.assert_allclose(result, stencil_into(b, b), rtol=1e-13)
    assert counters["kernel_launches"] + counters["host_parfors"] == 1  # copies by host code


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("function, args", [
    (smooth_rows, (GRID,)),
    (shift, (np.arange(50.0),)),
    (scale_in_place, (np.arange(50.0), np.linspace(0, 1, 50))),
    (add_row, (GRID, np.arange(8.0))),
], ids=["rows of itself", "1-D shift", "its own elements", "a vector under each row"])
def test_stores_into_a_view_of_what_the_expression_reads(path, cost_model, function, args):
    result, ran, compiled = run(function, path, *args)
    np.testing.assert_allclose(result, function(*(a.copy() for a in args)), rtol=1e-13)
    assert ran == compiled == 1  # the store, after the copies (none a parfor)


def test_an_operand_of_another_shape_is_a_value_error():
    with xpuc.device_context(DEVICE):
        with pytest.raises(ValueError, match="could not broadcast an operand of the array "
                                             "expression into the shape of the slice") as error:
            xpuc.jit(stencil_into)(np.zeros((5, 5)), np.zeros((6, 6)))
    assert "fused_store" not in str(error.value) and "$" not in str(error.value)


def store_under_an_integer(m, v):
    m[2, 1:4] = v * 2.0
    return m


@pytest.mark.parametrize("value_shape, parfors", [((3,), 1), ((1,), 2)],
                         ids=["the view's extent", "one element, broadcast"])
def test_a_store_under_an_integer_broadcasts_a_value_of_one_element(value_shape, parfors):
    m, v = np.zeros((4, 5)), np.arange(1.0, 1.0 + value_shape[0])
    result, ran, _ = run(store_under_an_integer, "context", m, v)
    np.testing.assert_array_equal(result, store_under_an_integer(m.copy(), v))
    assert ran == parfors


def jacobi_with_copies(grid, steps):
    other = grid.copy()
    for _ in range(steps):
        other[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                    + grid[1:-1, :-2] + grid[1:-1, 2:])
        grid, other = other, grid
    return grid


@pytest.mark.parametrize("path", PATHS)
def test_a_copy_and_its_argument_swapped_are_proved_apart(path):
    result, parfors, compiled = run(jacobi_with_copies, path, GRID, 4)
    np.testing.assert_allclose(result, jacobi_with_copies(GRID.copy(), 4), rtol=1e-13)
    copies = 1 if path == "usm" else 0  # a NumPy array's copy is Numba's host code
    assert parfors == copies + 4 and compiled == copies + 1


def test_every_op_of_the_fused_store_carries_the_users_line():
    function = xpuc.jit(jacobi)
    with xpuc.device_context(DEVICE):
        function(GRID.copy(), 1)
    lowered = function.inspect_lowered()
    assert len(lowered) == 2  # the copy, and the store
    lines = source_lines(jacobi)
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(lowered[1].source)
        places = []
        module.operation.walk(lambda op: places.append((op.name, file_locations(op.location)))
                              or ir.WalkResult.ADVANCE)
    unlocated = [name for name, at in places if name != "builtin.module" and not any(
        place.filename == __file__ and place.start_line in lines for place in at)]
    assert unlocated == []
    store_line = lines.start + 3  # other[1:-1, 1:-1] = ...
    assert any(place.start_line == store_line for _, at in places for place in at)


def add_shifted(a):
    a[1:] += a[:-1]
    return a


def subtract_first_row(m):
    m -= m[0]  # the row is updated too: NumPy reads it first
    return m


def add_transpose(m):
    m += m.T
    return m


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("function, make", [
    (add_shifted, lambda: np.arange(40.0)),
    (subtract_first_row, lambda: np.arange(36.0).reshape(6, 6)),
    (add_transpose, lambda: np.arange(36.0).reshape(6, 6)),
], ids=["a[1:] += a[:-1]", "m -= m[0]", "m += m.T"])
def test_in_place_operators_read_their_operands_first(path, cost_model, function, make):
    result, parfors, _ = run(function, path, make())
    np.testing.assert_array_equal(result, function(make()))
    # the operand that overlaps the target copied first (no parfor: host code, or the
    # runtime's device copy)
    assert parfors == 1


def store_through_a_one_tuple(a, b):
    a[1:,] = b[:-1] * 2.0  # Numba's array analysis makes the view's index the slice alone
    return a


def test_a_store_through_a_one_tuple_index():
    a, b = np.zeros(10), np.arange(10.0)
    result, parfors, _ = run(store_through_a_one_tuple, "context", a, b)
    np.testing.assert_array_equal(result, store_through_a_one_tuple(a.copy(), b))
    assert parfors == 1


def product_into_wider(a, b, out):
    out[::-1] = b * a
    return out


def product_compared(a, b, out):
    out[1:] = (a[1:] * b[1:]) // (b[1:] | 1) - a[1:]
    return out


@pytest.mark.parametrize("function", [product_into_wider, product_compared])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32"])
def test_a_narrow_expression_wraps_before_a_store_into_a_wider_view(function, dtype, cost_model):
    """Numba's array expression of int8 arrays is int8: computed on int64
    scalars, then wrapped, before the store makes it int64 (the fused loop
    stored the unwrapped int64 value: 234 for NumPy's -22)."""
    rng = np.random.default_rng(13)
    a, b = (rng.integers(0, 120, (5, 40)).astype(dtype) * 37 for _ in range(2))
    out = np.zeros((5, 40), np.int64)
    expected = numba.njit(function)(a, b, out.copy())
    result, parfors, _ = run(function, "context", a, b, out)
    np.testing.assert_array_equal(result, expected)
    assert parfors >= 1
