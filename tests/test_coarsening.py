"""Streaming kernels that run several iterations a work-item, the loads of
all of them first (passes/coarsening.py), where the Target asks for it (an
NVIDIA GPU): results against NumPy on the CPU device with its Target asking
as a GPU's does (trip counts no coarsening factor divides, reads after
writes in an iteration, in-place updates), the kernels left as they are,
and the PTX for an H100 (tests/conftest.py validates it with ptxas)."""

import dataclasses
import math
import re

import numpy as np
import pytest
from numba import prange

import xpuc
from xpuc import cli, targets
from xpuc.array_library import tensor as dpt
from xpuc.frontend.host_lowering import compile_to_spirv
from xpuc.passes import Target, coarsening, lower
from xpuc.targets import arch_target

SM90 = arch_target("sm_90")


@pytest.fixture
def coarsened(monkeypatch):
    """The CPU device's Target asking for 16 bytes of loads in flight a
    work-item, as an NVIDIA GPU's does (and streaming as a GPU, without the
    CPU device's aligned vectors), so that the CPU device runs those kernels."""
    target_for = targets.target_for
    monkeypatch.setattr(targets, "target_for", lambda device: dataclasses.replace(
        target_for(device), work_item_bytes_in_flight=16, vectorizes_work_items=False))


def _triad(a, b, c, scalar):
    for i in prange(a.shape[0]):
        a[i] = b[i] + scalar * c[i]


def _row_norms(a, out):
    for i in prange(a.shape[0]):
        total = 0.0
        for j in range(a.shape[1]):
            total += a[i, j] * a[i, j]
        out[i] = math.sqrt(total)


def _read_after_write(a, b, c):
    # an iteration reads back what it stored: the read stays after the store
    for i in prange(a.shape[0]):
        a[i] = b[i] * 2.0
        c[i] = a[i] + b[i]


def _increment(a, b):
    # each element read and written once: iterations past the end store nothing
    for i in prange(a.shape[0]):
        a[i] = a[i] + b[i]


def _fill(a):
    for i in prange(a.shape[0]):
        a[i] = 7.0


def _loads_of(function) -> int:
    """memref.loads before the first memref.store in the gpu stage's kernel."""
    kernel = function.inspect_mlir("gpu").split("gpu.func", 1)[1]
    return kernel.split("memref.store", 1)[0].count("memref.load")


# trip counts of 1, below the factor, and ones it does not divide
SIZES = [1, 2, 3, 5, 8, 9, 1001]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype, loads", [(np.float32, 4), (np.float64, 2)])
def test_triad(coarsened, n, dtype, loads):
    """float32: 2 iterations a work-item (8 bytes of loads each), float64: 1
    (16 bytes: the kernel as it was)."""
    rng = np.random.default_rng(n)
    b, c = rng.random(n).astype(dtype), rng.random(n).astype(dtype)
    a = dpt.zeros(n, dtype=dtype)
    function = xpuc.jit(_triad)
    function(a, dpt.asarray(b), dpt.asarray(c), dtype(2.5))
    np.testing.assert_array_equal(dpt.asnumpy(a), b + dtype(2.5) * c)
    assert _loads_of(function) == loads


@pytest.mark.parametrize("n", SIZES)
def test_row_norms_jam_the_rows_loop(coarsened, n):
    """Each work-item's iterations share one loop over the row (unroll and
    jam), carrying one sum each: 4 of them for float32's 4 bytes a load."""
    rows = np.random.default_rng(n).random((n, 3)).astype(np.float32)
    out = np.zeros(n, np.float32)
    function = xpuc.jit(_row_norms)
    with xpuc.device_context("opencl:cpu"):
        function(rows, out)
    np.testing.assert_allclose(out, np.sqrt((rows.astype(np.float64) ** 2).sum(1)), rtol=1e-6)
    gpu = function.inspect_mlir("gpu")
    assert len(re.findall(r"scf\.for ", gpu)) == 1
    assert re.search(r"scf\.for .*-> \((f64, ){3}f64\)", gpu)


@pytest.mark.parametrize("n", SIZES)
def test_a_read_after_a_write_stays_after_it(coarsened, n):
    b = np.random.default_rng(n).random(n)
    a, c = np.zeros(n), np.zeros(n)
    function = xpuc.jit(_read_after_write)
    with xpuc.device_context("opencl:cpu"):
        function(a, b, c)
    np.testing.assert_array_equal(a, b * 2.0)
    np.testing.assert_array_equal(c, b * 2.0 + b)
    assert _loads_of(function) == 2  # b[i] of its two iterations


@pytest.mark.parametrize("n", SIZES)
def test_iterations_past_the_end_store_nothing(coarsened, n):
    """A work-item past n computes as iteration n - 1 but stores nothing:
    the last element is incremented once."""
    a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    function = xpuc.jit(_increment)
    with xpuc.device_context("opencl:cpu"):
        function(a, b)
    np.testing.assert_array_equal(a, np.arange(n) + 1.0)
    assert _loads_of(function) == 4


def test_the_launch_is_a_range_of_work_items_a_factor_fewer(coarsened):
    """The plan's range is ceil(n / 2), the kernel's last argument n; past
    MAX_WORK_ITEMS the range stays n, which the runtime refuses as before."""
    function = xpuc.jit(_triad)
    a = np.zeros(10, np.float32)
    with xpuc.device_context("opencl:cpu"):
        function(a, a.copy(), a.copy(), np.float32(1.0))
    (lowered,) = function.inspect_lowered()
    (launch,) = lowered.plan.launches
    total_arg = launch.args[-1][0]
    for n, work_items in [(10, 5), (9, 5), (1, 1), (0, 0), (2**31 - 1, 2**30),
                          (2**31, 2**31)]:
        params = [0] * lowered.plan.num_params
        params[-1] = n  # the parfor's trip count, the host function's last argument
        values = lowered.plan.evaluate(params)
        assert (values[launch.grid[0]], values[total_arg]) == (work_items, n)


def test_kernels_that_store_first_are_left_alone(coarsened):
    a = np.zeros(5)
    function = xpuc.jit(_fill)
    with xpuc.device_context("opencl:cpu"):
        function(a)
    np.testing.assert_array_equal(a, 7.0)
    assert "ceildivsi" not in function.inspect_mlir("gpu")


TRIAD = """
module {
  func.func @triad(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %s: f32, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %x = memref.load %b[%i] : memref<?xf32>
      %y = memref.load %c[%i] : memref<?xf32>
      %m = arith.mulf %s, %y : f32
      %r = arith.addf %x, %m : f32
      memref.store %r, %a[%i] : memref<?xf32>
      scf.reduce
    }
    return
  }
}
"""


def test_sycl_kernels_are_unchanged():
    """A SYCL device's Target asks for no coarsening: one iteration a work-item."""
    assert Target().work_item_bytes_in_flight == 0
    assert "ceildiv" not in lower(TRIAD, Target(), "gpu").text("gpu")


@pytest.mark.parametrize("arch", ["sm_75", "sm_90", "sm_120"])
def test_every_nvidia_architecture_asks_for_it(arch):
    assert arch_target(arch).work_item_bytes_in_flight == 16


def test_ptx_loads_both_iterations_before_the_first_store():
    """sm_90: the four loads of two iterations issued before any store, the
    second iteration's store behind its test against n."""
    ptx = compile_to_spirv("triad", TRIAD, SM90).ptx.decode()
    body = ptx.split(".entry", 1)[1]
    before_store = body.split("st.global", 1)[0]
    assert before_store.count("ld.global.b32") == 4
    assert body.count("st.global.b32") == 2
    assert len(re.findall(r"min\.u64", body)) == 1  # iteration 1 clamped to n - 1


def test_at_most_eight_iterations():
    """One byte loaded an iteration would ask for 16 iterations: at most
    MOST_ITERATIONS."""
    text = TRIAD.replace("f32", "i8").replace("arith.mulf %s, %y", "arith.muli %s, %x").replace(
        "arith.addf", "arith.addi")
    gpu = lower(text, SM90, "gpu").text("gpu")
    assert gpu.count("memref.load") == coarsening.MOST_ITERATIONS


def test_compile_shows_the_coarsened_ptx(tmp_path, capsys):
    path = tmp_path / "triad.py"
    path.write_text("import numba\nimport xpuc\n\n"
                    "@xpuc.jit('void(float32[::1], float32[::1], float32[::1], float32)')\n"
                    "def triad(a, b, c, s):\n"
                    "    for i in numba.prange(a.shape[0]):\n"
                    "        a[i] = b[i] + s * c[i]\n")
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "ptx"]) == 0
    body = capsys.readouterr().out.split(".entry", 1)[1]
    assert body.split("st.global", 1)[0].count("ld.global.b32") == 4
