"""``xpuc.jit`` functions on a CUDA device: NumPy arrays under
``device_context("cuda:0")`` copied to the device at each offloaded call, the
parfors launched as PTX through the runtime's CUDA queue; CuPy arrays, PyTorch
CUDA tensors, numba.cuda arrays and DLPack-only arrays used in place, giving
their library's arrays (tests marked ``cuda`` skip where there is no GPU;
scripts/cuda-device-tests.sh runs them there), and the errors where there is
none."""

import gc
import importlib
import re
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import xpuc
import xpuc.dispatcher
import xpuc.runtime
from xpuc import cuda_runtime
from xpuc.errors import DeviceError

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from workloads import four_steps  # noqa: E402  (the suite's four-parfor call)


def _cuda_device_count() -> int:
    try:
        return cuda_runtime.device_count()
    except DeviceError:
        return 0


HAS_CUDA = _cuda_device_count() > 0


def cuda(test):
    """Mark ``test`` as needing a CUDA device, and skip it where there is none."""
    return pytest.mark.cuda(pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")(test))


@xpuc.jit
def _scaled_sum(a, b, out):
    """A prange loop, an array expression and a reduction."""
    for i in numba.prange(a.shape[0]):
        out[i] = a[i] * 2.0 + np.sqrt(b[i])
    c = a * b - 1.0
    total = 0.0
    for i in numba.prange(c.shape[0]):
        total += c[i]
    return total


@cuda
@pytest.mark.parametrize("n", [1, 1000, 1_000_003])
@pytest.mark.parametrize("fastmath", [False, True])
def test_numpy_arrays_in_a_cuda_device_context_are_computed_there(n, fastmath, monkeypatch):
    """With fastmath the kernels' multiply-adds are fused (one rounding each;
    tests/test_cuda_compile.py checks the PTX): results within rounding."""
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")  # every parfor on the device, tiny or not
    function = xpuc.jit(fastmath=True)(_scaled_sum.py_func) if fastmath else _scaled_sum
    rng = np.random.default_rng(0)
    a, b = rng.random(n), rng.random(n)
    out = np.zeros(n)
    before = xpuc.stats()["kernel_launches"]
    with xpuc.device_context("cuda:0"):
        total = function(a, b, out)
    assert xpuc.stats()["kernel_launches"] - before >= 2
    np.testing.assert_allclose(out, a * 2.0 + np.sqrt(b), rtol=1e-14 if fastmath else 1e-15)
    np.testing.assert_allclose(total, (a * b - 1.0).sum(), rtol=1e-12)


@xpuc.kernel
def _block_sizes(out):
    out[xpuc.get_global_id(0)] = xpuc.get_local_size(0)


@cuda
def test_the_runtime_picks_blocks_of_at_most_256_threads():
    """A range the runtime divides into blocks: the occupancy calculator
    would give such a small kernel 1024 threads, which leave SMs idle while
    the last blocks drain; the runtime keeps to 256."""
    out = np.zeros(1 << 20, dtype=np.int64)
    with xpuc.device_context("cuda:0"):
        _block_sizes[out.size](out)
    assert set(np.unique(out)) == {256}


@cuda
def test_a_small_range_gets_smaller_blocks_that_reach_every_sm():
    """4096 work-items in blocks of 256 would run on 16 SMs: the runtime
    gives each block the SMs' share of the range in whole warps (at least
    one), so that the blocks spread over every SM (an H100's 132: 32 threads)."""
    multiprocessors = cuda_runtime.CudaDevice.open(0).multiprocessors
    out = np.zeros(4096, dtype=np.int64)
    with xpuc.device_context("cuda:0"):
        _block_sizes[out.size](out)
    share = -(-out.size // multiprocessors)
    assert set(np.unique(out)) == {max(32, -(-share // 32) * 32)}


@xpuc.kernel
def _local_widths(out):
    out[xpuc.get_global_id(0), xpuc.get_global_id(1)] = xpuc.get_local_size(1)


@cuda
def test_a_kernel_whose_accesses_move_along_x_gets_blocks_a_warp_wide():
    """Its stores move by one element as the innermost id does (the nvvm stage
    marks it, passes/contiguous_x.py): blocks of 32 along x, not 8, so that a
    warp's accesses are 32 neighbouring elements."""
    out = np.zeros((1000, 1000), dtype=np.int64)
    with xpuc.device_context("cuda:0"):
        _local_widths[out.shape](out)
    assert set(np.unique(out)) == {32}


@xpuc.kernel
def _block_shapes(out):
    i, j = xpuc.get_global_id(0), xpuc.get_global_id(1)
    out[i, j, 0] = xpuc.get_local_size(0)
    out[i, j, 1] = xpuc.get_local_size(1)
    out[i, j, 2] = i * xpuc.get_global_size(1) + j


@cuda
@pytest.mark.parametrize("shape, block", [
    ((1000, 1000), (32, 8)), ((37, 1001), (32, 8)), ((5, 40_000), (5, 32)),
    ((1, 1 << 16), (1, 256)), ((1 << 16, 1), (256, 1))])
def test_a_2d_range_gets_blocks_a_quarter_warp_wide(shape, block):
    """A 2-D range's block: 8 work-items along the innermost index (x, whose
    neighbours touch neighbouring memory), the rest of 256 along the rows so
    that a warp's loads touch few rows; x widens where the rows are few.
    Ranges the blocks do not divide are written exactly to their edges."""
    out = np.full((*shape, 3), -1, dtype=np.int64)
    with xpuc.device_context("cuda:0"):
        _block_shapes[shape](out)
    assert set(map(tuple, np.unique(out[..., :2].reshape(-1, 2), axis=0))) == {block}
    np.testing.assert_array_equal(out[..., 2], np.arange(shape[0] * shape[1]).reshape(shape))


@cuda
def test_cuda_names_its_first_device():
    with xpuc.device_context("cuda") as queue:
        assert queue is xpuc.get_current_queue()
    with xpuc.device_context("cuda:0") as first:
        assert first is queue


def test_a_cuda_device_that_is_not_there_is_a_device_error():
    count = _cuda_device_count()
    with pytest.raises(DeviceError, match=rf"no device cuda:{count} |no CUDA driver"):
        with xpuc.device_context(f"cuda:{count}"):
            pass


def test_a_malformed_cuda_name_is_a_device_error():
    with pytest.raises(DeviceError, match=r"'cuda:x' is not a CUDA device name: 'cuda' or "
                                          r"'cuda:N'"):
        xpuc.device_context("cuda:x").__enter__()


# ---- arrays that live on the GPU, used in place ---------------------------------


def _library(name: str):
    """``name`` imported, or the test skipped saying why it cannot be."""
    if not HAS_CUDA:
        pytest.skip("no CUDA device")
    try:
        return importlib.import_module(name)
    except Exception as error:  # a broken install says why (numba-cuda on NumPy 2.4)
        pytest.skip(f"{name} does not import here: {type(error).__name__}: {error}")


@pytest.fixture
def cp():
    return _library("cupy")


@pytest.fixture
def torch():
    return _library("torch")


@xpuc.jit
def _axpy(alpha, x, y):
    return alpha * x + y


@xpuc.jit
def _sum_of_squares(a):
    total = 0.0
    for i in numba.prange(a.shape[0]):
        total += a[i] * a[i]
    return total


@xpuc.jit
def _row_sums(x, out):
    for i in numba.prange(x.shape[0]):
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[i, j]
        out[i] = acc


@xpuc.jit
def _doubled_in_place(a):
    for i in numba.prange(a.shape[0]):
        a[i] = 2.0 * a[i]
    return a


def _moved_bytes() -> int:
    stats = xpuc.stats()
    return stats["h2d_bytes"] + stats["d2h_bytes"]


@cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cupy_arrays_are_computed_in_place_and_give_cupy_arrays(cp, dtype):
    rng = np.random.default_rng(1)
    x, y = rng.random(100_003).astype(dtype), rng.random(100_003).astype(dtype)
    dx, dy = cp.asarray(x), cp.asarray(y)
    moved, launches = _moved_bytes(), xpuc.stats()["kernel_launches"]
    result = _axpy(dtype(2.5), dx, dy)
    assert xpuc.stats()["kernel_launches"] > launches
    assert _moved_bytes() == moved  # nothing copied either way
    assert isinstance(result, cp.ndarray) and result.dtype == dtype
    assert result.device.id == 0
    np.testing.assert_allclose(cp.asnumpy(result), dtype(2.5) * x + y, rtol=1e-6)
    total = _sum_of_squares(dx)
    np.testing.assert_allclose(total, np.sum(x.astype(np.float64) ** 2), rtol=1e-5)


@cuda
def test_prange_with_an_inner_loop_writes_cupy_arrays_in_place(cp):
    x = np.random.default_rng(2).random((513, 77))
    out = cp.zeros(513)
    assert _row_sums(cp.asarray(x), out) is None
    np.testing.assert_allclose(cp.asnumpy(out), x.sum(axis=1), rtol=1e-12)


@xpuc.jit
def _triad(a, b, c, scalar):
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] + scalar * c[i]


@xpuc.jit
def _row_norms(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for j in range(a.shape[1]):
            total += a[i, j] * a[i, j]
        out[i] = np.sqrt(total)


@cuda
@pytest.mark.parametrize("n", [1, 2, 3, 1001, 1_000_003])
def test_streaming_kernels_run_several_iterations_a_thread(cp, n):
    """float32 triad and row norms, two and four iterations a thread
    (passes/coarsening.py), over trip counts neither factor divides."""
    rng = np.random.default_rng(n)
    b, c = rng.random(n).astype(np.float32), rng.random(n).astype(np.float32)
    a = cp.zeros(n, np.float32)
    _triad(a, cp.asarray(b), cp.asarray(c), np.float32(2.5))
    np.testing.assert_array_equal(cp.asnumpy(a), b + np.float32(2.5) * c)
    rows = rng.random((n, 3)).astype(np.float32)
    out = cp.zeros(n, np.float32)
    _row_norms(cp.asarray(rows), out)
    np.testing.assert_allclose(cp.asnumpy(out), np.sqrt((rows.astype(np.float64) ** 2).sum(1)),
                               rtol=1e-6)
    for function in (_triad, _row_norms):
        assert "arith.ceildivui" in function.inspect_mlir("gpu")


@xpuc.jit
def _pairwise(points, out):
    for i in numba.prange(points.shape[0]):
        for j in range(points.shape[0]):
            total = 0.0
            for k in range(points.shape[1]):
                d = points[i, k] - points[j, k]
                total += d * d
            out[i, j] = np.sqrt(total)


@xpuc.jit
def _mandelbrot(out, x0, y0, dx, dy, max_iterations):
    for i in numba.prange(out.shape[0]):
        for j in range(out.shape[1]):
            cx, cy = x0 + j * dx, y0 + i * dy
            x = y = 0.0
            n = 0
            while n < max_iterations and x * x + y * y <= 4.0:
                x, y = x * x - y * y + cx, 2.0 * x * y + cy
                n += 1
            out[i, j] = n


@cuda
@pytest.mark.parametrize("n", [1, 131, 1000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_independent_inner_loop_runs_a_thread_per_pair(cp, n, dtype):
    """Pairwise distances: the inner loop over j a second dimension of the
    launch (frontend/inner_loops.py), its trip count the host's."""
    points = np.random.default_rng(n).random((n, 5)).astype(dtype)
    out = cp.zeros((n, n), dtype)
    _pairwise(cp.asarray(points), out)
    assert re.search(r"gpu\.global_id\s+y", _pairwise.inspect_mlir("gpu"))
    expected = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(cp.asnumpy(out), expected,
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


@cuda
@pytest.mark.parametrize("columns", [16, 15, 17, 3, 1, 0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("offset", [0, 1])
def test_rows_read_sixteen_bytes_at_a_time_sum_in_order(cp, columns, dtype, offset):
    """The ``k`` loop of pairwise distances loads sixteen bytes of each
    aligned row at once (passes/wide_loads.py) and the rest one element at a
    time: rows of 16 columns are all aligned, of 15 and 17 a few, rows that
    start one element into their memory none; each sum is formed in the same
    order as Numba's, hence the same bits."""
    flat = np.random.default_rng(columns).random(70 * columns + offset).astype(dtype)
    points = flat[offset:].reshape(70, columns)
    out = cp.zeros((70, 70), dtype)
    before = xpuc.stats()["kernel_launches"]
    _pairwise(cp.asarray(flat)[offset:].reshape(70, columns), out)
    assert xpuc.stats()["kernel_launches"] > before
    expected = np.zeros((70, 70), dtype)
    numba.njit(_pairwise.py_func)(points, expected)
    np.testing.assert_array_equal(cp.asnumpy(out), expected)


@cuda
@pytest.mark.parametrize("shape", [(1, 1), (33, 47), (120, 181), (1, 300), (300, 1)])
def test_mandelbrot_runs_a_thread_per_pixel(cp, shape):
    rows, cols = shape
    args = (-2.0, -1.0, 3.0 / cols, 2.0 / rows, 60)
    out = cp.zeros(shape, np.int32)
    _mandelbrot(out, *args)
    expected = np.zeros(shape, np.int32)
    _mandelbrot.py_func(expected, *args)  # the same loops, run by Python
    np.testing.assert_array_equal(cp.asnumpy(out), expected)


@cuda
def test_views_and_strided_cupy_arrays(cp):
    base = cp.arange(40, dtype=cp.float64)
    every_other = base[1::2]
    _doubled_in_place(every_other)  # a strided view: the base changes in place
    expected = np.arange(40.0)
    expected[1::2] *= 2.0
    np.testing.assert_array_equal(cp.asnumpy(base), expected)

    x = np.random.default_rng(3).random((64, 48))
    transposed = cp.asarray(x).T  # F order
    out = cp.zeros(48)
    _row_sums(transposed, out)
    np.testing.assert_allclose(cp.asnumpy(out), x.T.sum(axis=1), rtol=1e-12)
    block = cp.asarray(x)[5:37:3, 2:40]
    out = cp.zeros(block.shape[0])
    _row_sums(block, out)
    np.testing.assert_allclose(cp.asnumpy(out), x[5:37:3, 2:40].sum(axis=1), rtol=1e-12)


@cuda
def test_a_whole_argument_returned_is_the_callers_array(cp):
    a = cp.ones(10)
    assert _doubled_in_place(a) is a
    assert _doubled_in_place(a) is a  # planned: its argument, kept, holds it weakly
    assert float(a.sum()) == 40.0


@cuda
def test_a_call_runs_after_the_work_queued_on_the_arrays_stream(cp):
    """CuPy's kernels return before they finish; the call reads what the
    work queued on a non-blocking stream wrote (CAI's ``stream``)."""
    n = 1 << 22
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        a = cp.zeros(n)
        for _ in range(50):
            cp.add(a, 1.0, out=a)
        total = _sum_of_squares(a)
    assert total == 2500.0 * n


# a kernel that keeps its stream busy until the host sets *flag (host memory
# the device reads), or for `cycles` clock ticks
_HOLD = r"""
extern "C" __global__ void hold(volatile int *flag, long long cycles) {
    long long start = clock64();
    while (!*flag && clock64() - start < cycles) {}
}
"""


@cuda
def test_a_call_waits_for_its_stream_and_not_for_the_others(cp):
    """A call on arrays of CuPy's current stream runs there: it neither waits
    for another stream's work (a kernel of another library, held until the
    call has returned) nor runs before the work queued on its own."""
    hold = cp.RawKernel(_HOLD, "hold")
    flag_memory = cp.cuda.alloc_pinned_memory(4)
    flag = np.frombuffer(flag_memory, np.int32, 1)
    busy, ours = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    a = cp.ones(1 << 20)
    with ours:  # compiled, planned and CuPy's kernels built before the other stream is held
        _sum_of_squares(a)
        cp.multiply(a, 1.0, out=a)
    cp.cuda.Device().synchronize()
    flag[0] = 0
    with busy:  # held until released, at most seconds
        hold((1,), (1,), (np.uint64(flag_memory.ptr), np.int64(20_000_000_000)))
    with ours:  # a few ms (the flag is still down), then the call's input
        hold((1,), (1,), (np.uint64(flag_memory.ptr), np.int64(20_000_000)))
        cp.multiply(a, 3.0, out=a)
        total = _sum_of_squares(a)
    held = not busy.done  # the call returned while the other stream was held
    flag[0] = 1
    busy.synchronize()
    assert held
    assert total == 9.0 * (1 << 20)  # read after its own stream's work


@cuda
def test_a_call_on_torch_tensors_runs_on_torchs_current_stream(torch, cp):
    """PyTorch's interface names no stream: a call on its tensors runs on
    torch's current stream (one of its non-blocking side streams here),
    after the work queued there (a kernel held for a while, then torch's)."""
    hold = cp.RawKernel(_HOLD, "hold")
    flag_memory = cp.cuda.alloc_pinned_memory(4)
    np.frombuffer(flag_memory, np.int32, 1)[0] = 0  # never raised: held for its cycles
    x = torch.ones(1 << 20, device="cuda", dtype=torch.float64)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        _sum_of_squares(x)  # compiled and planned before the side stream is held
        torch.cuda.synchronize()
        with cp.cuda.ExternalStream(side.cuda_stream):
            hold((1,), (1,), (np.uint64(flag_memory.ptr), np.int64(200_000_000)))
        x.mul_(3.0)
        total = _sum_of_squares(x)
    assert total == 9.0 * (1 << 20)


@cuda
def test_cupy_arrays_are_read_as_their_interface_says(cp):
    """Call plans read CuPy's arrays by their attributes, not by the dict of
    their interface, and read what the interface says: read again (what
    cannot change of an array is kept), on another stream, and after the
    array's shape changed in place."""
    from xpuc.frontend.cuda_arrays import _keyed_cupy_argument, keyed_argument

    stream = cp.cuda.Stream(non_blocking=True)

    def read_as_the_interface_says(array):
        for where in (cp.cuda.Stream.null, stream, cp.cuda.Stream.null):
            with where:
                cupy_key, cupy_argument = _keyed_cupy_argument(array)
                key, argument = keyed_argument(array)
            assert cupy_key == key
            assert (cupy_argument._pointer, cupy_argument.shape, cupy_argument.strides,
                    cupy_argument.layout, cupy_argument.dtype, cupy_argument.readonly,
                    cupy_argument.source) == (
                argument._pointer, argument.shape, argument.strides, argument.layout,
                argument.dtype, argument.readonly, argument.source)
            assert cupy_argument.source is array

    base = cp.arange(60, dtype=cp.float32).reshape(6, 10)
    for array in (base, base.T, base[::2, 1:7], base[:0], cp.zeros(3, cp.int64), base[2]):
        read_as_the_interface_says(array)
    reshaped = cp.arange(12, dtype=cp.float64)
    read_as_the_interface_says(reshaped)
    reshaped.shape = (3, 4)
    read_as_the_interface_says(reshaped)


@cuda
def test_what_call_plans_keep_of_a_cupy_array_goes_with_it(cp):
    from xpuc.frontend.cuda_arrays import _cupy_arrays, _keyed_cupy_argument

    a = cp.ones(5)
    number = id(a)
    assert _keyed_cupy_argument(a)[1] is _keyed_cupy_argument(a)[1]
    assert number in _cupy_arrays
    del a
    gc.collect()
    assert number not in _cupy_arrays


@cuda
def test_a_loops_calls_on_the_same_cupy_arrays_are_known_again_without_keying(cp, monkeypatch):
    keyed = []
    keyed_arguments = xpuc.dispatcher.keyed_arguments
    monkeypatch.setattr(xpuc.dispatcher, "keyed_arguments",
                        lambda args: keyed.append(args) or keyed_arguments(args))
    row_sums = xpuc.jit(_row_sums.py_func)
    x, y, out = cp.arange(12.0).reshape(3, 4), cp.ones((3, 4)), cp.zeros(3)

    def keyings(*args):
        keyed.clear()
        row_sums(*args)
        return len(keyed)

    for _ in range(3):  # placed, planned, planned and known from then on
        row_sums(x, out)
    assert keyings(x, out) == 0
    np.testing.assert_array_equal(cp.asnumpy(out), [6.0, 22.0, 38.0])
    # taking turns: each known once read twice (an array made for one call is not)
    assert [keyings(y, out), keyings(x, out), keyings(y, out), keyings(x, out),
            keyings(y, out)] == [1, 0, 1, 0, 0]
    np.testing.assert_array_equal(cp.asnumpy(out), [4.0, 4.0, 4.0])
    with cp.cuda.Stream(non_blocking=True):
        assert keyings(x, out) == 1  # on another stream: another plan
    with xpuc.device_context("cuda:0"):
        assert keyings(x, out) == 1
    x.shape = (4, 3)  # the same arrays, one of another shape: keyed again
    out = cp.zeros(4)
    assert keyings(x, out) == 1
    np.testing.assert_array_equal(cp.asnumpy(out), [3.0, 12.0, 21.0, 30.0])


@cuda
def test_a_cupy_array_reshaped_in_place_is_computed_in_its_new_shape(cp):
    x = cp.arange(12.0)
    x.shape = (3, 4)
    out = cp.zeros(3)
    _row_sums(x, out)
    np.testing.assert_array_equal(cp.asnumpy(out), [6.0, 22.0, 38.0])
    x.shape = (4, 3)  # the same plan (rank and layout), another shape
    out = cp.zeros(4)
    _row_sums(x, out)
    np.testing.assert_array_equal(cp.asnumpy(out), [3.0, 12.0, 21.0, 30.0])


@xpuc.jit
def _first_and_host_made(a):
    scale = a[0]  # one element, copied to the host
    made = np.zeros(3)
    made[1] = scale
    return made, a[1:] * scale


@cuda
def test_host_arrays_a_function_makes_come_back_on_the_device(cp):
    a = cp.arange(1.0, 6.0)
    made, scaled = _first_and_host_made(a)
    assert isinstance(made, cp.ndarray) and isinstance(scaled, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(made), [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(cp.asnumpy(scaled), [2.0, 3.0, 4.0, 5.0])


@cuda
def test_torch_cuda_tensors_are_computed_in_place_and_give_tensors(torch):
    x = torch.rand(10_001, device="cuda", dtype=torch.float32)
    y = torch.rand(10_001, device="cuda", dtype=torch.float32)
    moved = _moved_bytes()
    result = _axpy(np.float32(3.0), x, y)
    assert _moved_bytes() == moved
    assert isinstance(result, torch.Tensor) and result.device == x.device
    np.testing.assert_allclose(result.cpu().numpy(), 3.0 * x.cpu().numpy() + y.cpu().numpy(),
                               rtol=1e-6)
    m = torch.rand(300, 20, device="cuda", dtype=torch.float64)
    out = torch.zeros(300, device="cuda", dtype=torch.float64)
    _row_sums(m, out)
    np.testing.assert_allclose(out.cpu().numpy(), m.cpu().numpy().sum(axis=1), rtol=1e-12)


@cuda
def test_numba_cuda_device_arrays():
    numba_cuda = _library("numba.cuda")
    a = numba_cuda.to_device(np.arange(8.0))
    result = _axpy(2.0, a, a)
    np.testing.assert_array_equal(result.copy_to_host(), 3.0 * np.arange(8.0))


class _DLPackOnly:
    """An array that offers DLPack on a CUDA device and nothing else."""

    def __init__(self, tensor) -> None:
        self._tensor = tensor

    def __dlpack__(self, **kwargs):
        return self._tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._tensor.__dlpack_device__()


@cuda
def test_dlpack_alone_on_a_cuda_device_is_used_in_place(torch, cp):
    x = torch.arange(12, device="cuda", dtype=torch.float64)
    result = _axpy(2.0, _DLPackOnly(x), _DLPackOnly(x))
    # no library xpuc knows: an object with both protocols
    assert type(result).__name__ == "CudaArray"
    assert result.__dlpack_device__() == (2, 0)
    assert result.__cuda_array_interface__["shape"] == (12,)
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(result)), 3.0 * np.arange(12.0))
    np.testing.assert_array_equal(torch.from_dlpack(result).cpu().numpy(), 3.0 * np.arange(12.0))


@cuda
def test_offload_to_and_the_default_device_name_cuda(monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")  # every parfor on the device
    a = np.arange(1000.0)
    on_gpu = xpuc.offload_to("cuda:0")(_sum_of_squares)
    before = xpuc.stats()["kernel_launches"]
    assert on_gpu(a) == np.sum(a * a)
    assert xpuc.stats()["kernel_launches"] > before
    xpuc.set_default_device("cuda")
    try:
        assert xpuc.get_current_queue() is on_gpu.placement.queue
        before = xpuc.stats()["kernel_launches"]
        assert _sum_of_squares(a) == np.sum(a * a)
        assert xpuc.stats()["kernel_launches"] > before
    finally:
        xpuc.set_default_device(None)


@cuda
def test_calls_after_the_first_on_cupy_arrays_skip_placement(cp, monkeypatch):
    a = cp.arange(8.0)
    _axpy(np.float64(2.0), a, a)
    monkeypatch.setattr(xpuc.dispatcher, "place", None)  # a placed call fails
    b = cp.ones(16)  # another shape: the same plan
    result = _axpy(np.float64(2.0), b, b)
    assert isinstance(result, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(result), np.full(16, 3.0))


@cuda
def test_a_planned_call_on_cupy_arrays_waits_once_at_its_end(cp):
    # the call runs on the array's stream, after the work queued there: it
    # waits for nothing first; its launches are queued back to back, and its
    # end waits for them (tests/test_call_round_trips.py counts SYCL's waits)
    values = np.random.default_rng(0).random(1000)
    a, expected, jitted = cp.asarray(values), values.copy(), xpuc.jit(four_steps)
    jitted(a)
    xpuc.reset_stats()
    jitted(a)
    counts = xpuc.stats()
    assert counts["kernel_launches"] >= 4, counts
    assert counts["device_waits"] == 1, counts
    assert counts["h2d_bytes"] == counts["d2h_bytes"] == counts["usm_allocs"] == 0, counts
    for _ in range(2):
        numba.njit(parallel=True)(four_steps)(expected)
    np.testing.assert_allclose(cp.asnumpy(a), expected, rtol=1e-15)


@xpuc.jit
def _relaxation_steps(grid, steps):
    """A time loop whose steps each make a temporary (freed the next step) and
    read a reduction of the last step's result on the host."""
    total = 0.0
    for _ in range(steps):
        smoothed = 0.5 * (grid[:-2] + grid[2:])
        grid[1:-1] = smoothed
        total += grid.sum()
    return total


@cuda
def test_a_time_loop_queues_its_steps_and_waits_where_the_host_reads(cp):
    """Each step's kernels are queued behind the last's; the host waits only
    to read each step's sum (a copy of the reduction's result), and the
    temporaries freed between steps are reused behind the kernels that used
    them: the answers are NumPy's."""
    values = np.random.default_rng(1).random(100_000)
    grid, steps = cp.asarray(values), 30
    _relaxation_steps(grid.copy(), 1)
    xpuc.reset_stats()
    total = _relaxation_steps(grid, steps)
    counts = xpuc.stats()
    expected_grid, expected_total = values.copy(), 0.0
    for _ in range(steps):
        expected_grid[1:-1] = 0.5 * (expected_grid[:-2] + expected_grid[2:])
        expected_total += expected_grid.sum()
    np.testing.assert_allclose(cp.asnumpy(grid), expected_grid, rtol=1e-13)
    np.testing.assert_allclose(total, expected_total, rtol=1e-12)
    assert counts["kernel_launches"] >= 2 * steps, counts
    assert counts["device_waits"] <= counts["kernel_launches"] // 2 + 1, counts


_FAULTING_KERNEL = """
import cupy as cp
import xpuc

@xpuc.kernel
def write_far_past_the_end(a):
    a[xpuc.get_global_id(0) + (1 << 40)] = 1.0

try:
    write_far_past_the_end[1](cp.zeros(4))
except xpuc.DeviceError as error:
    print(error)
"""


@cuda
def test_a_queued_kernel_that_faults_is_named_by_the_wait_that_finds_it(cp):
    """The launch returns before the kernel runs; the call's end finds its
    failure, and the message names the kernel, the device and the driver's
    reason. In its own process: the fault ruins the process's CUDA context."""
    result = subprocess.run([sys.executable, "-c", _FAULTING_KERNEL], capture_output=True,
                            text=True, timeout=300)
    message = result.stdout
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in message, (message, result.stderr[-2000:])
    assert "write_far_past_the_end" in message and "cuda:0" in message, message
    assert "not waited for it" in message, message


@xpuc.jit
def _shifted_store(a):
    a[1:] = a[:-1]


@xpuc.jit
def _shifted_update(a):
    a[1:] += a[:-1]


@xpuc.jit
def _shifted_sum_into(a):
    np.add(a[1:], a[:-1], out=a[1:])


@xpuc.jit
def _first_row_subtracted(m):
    m -= m[0]


@xpuc.jit
def _transpose_added(m):
    m += m.T


_SHARED_MEMORY_STORES = [(_shifted_store, (1001,)), (_shifted_update, (1001,)),
                         (_shifted_sum_into, (1001,)), (_first_row_subtracted, (67, 33)),
                         (_transpose_added, (65, 65))]


@cuda
@pytest.mark.parametrize("function, shape", _SHARED_MEMORY_STORES,
                         ids=[f.py_func.__name__ for f, _ in _SHARED_MEMORY_STORES])
@pytest.mark.parametrize("kind", ["cupy", "numpy in cuda:0"])
def test_stores_reading_the_memory_they_write_give_numpys_answer(function, shape, kind,
                                                                 monkeypatch):
    # each operand that shares the target's memory is copied first on the
    # device too (the overlap rule of docs/spec.md), tiny or not
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    data = np.random.default_rng(3).random(shape)
    expected = data.copy()
    function.py_func(expected)
    launches = xpuc.stats()["kernel_launches"]
    if kind == "cupy":
        cp = _library("cupy")
        array = cp.asarray(data)
        function(array)
        got = cp.asnumpy(array)
    else:
        got = data.copy()
        with xpuc.device_context("cuda:0"):
            function(got)
    assert xpuc.stats()["kernel_launches"] > launches  # the store ran on the GPU
    np.testing.assert_array_equal(got, expected)


def _reversed_added(a):
    a += a[::-1]


@cuda
@pytest.mark.parametrize("function, shape, operand", [
    (_shifted_store.py_func, (1001,), lambda a: a[:-1]),
    (_shifted_update.py_func, (1001,), lambda a: a[:-1]),
    (_first_row_subtracted.py_func, (67, 33), lambda m: m[0]),
    (_transpose_added.py_func, (65, 65), lambda m: m.T),
    (_reversed_added, (1001,), lambda a: a[::-1]),
], ids=["a[1:] = a[:-1]", "a[1:] += a[:-1]", "m -= m[0]", "m += m.T", "a += a[::-1]"])
def test_an_operand_sharing_the_targets_memory_is_copied_by_the_driver(function, shape, operand,
                                                                        monkeypatch):
    # the bytes the CuPy operand spans, copied device to device on the call's
    # stream; the store's kernel is the only one compiled
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    cp = _library("cupy")
    data = np.random.default_rng(5).random(shape)
    expected = data.copy()
    function(expected)
    array = cp.asarray(data)
    xpuc.reset_stats()
    xpuc.jit(function)(array)
    stats = xpuc.stats()
    assert stats["kernels_compiled"] == stats["kernel_launches"] == 1, stats
    assert stats["d2d_bytes"] == xpuc.runtime.byte_extent(operand(data))[1], stats
    np.testing.assert_array_equal(cp.asnumpy(array), expected)


@xpuc.jit
def _floyd_warshall(path):
    for k in range(path.shape[0]):
        for i in numba.prange(path.shape[0]):
            path[i, :] = np.minimum(path[i, :], path[i, k] + path[k, :])


@xpuc.jit
def _floyd_warshall_loops(path):
    # widened to a thread per (i, j): row k and column k are each read by all
    for k in range(path.shape[0]):
        for i in numba.prange(path.shape[0]):
            for j in range(path.shape[1]):
                path[i, j] = min(path[i, j], path[i, k] + path[k, j])


@xpuc.jit
def _add_row_k(a, k):
    for i in numba.prange(a.shape[0]):
        a[i, :] = a[i, :] + a[k, :]


@cuda
@pytest.mark.parametrize("fn", [_floyd_warshall, _floyd_warshall_loops],
                         ids=["row expression", "serial loop"])
def test_floyd_warshall_reads_row_k_on_cuda(cp, fn, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    rng = np.random.default_rng(7)
    path = rng.integers(1, 100, (96, 96)).astype(np.int64)
    np.fill_diagonal(path, 0)
    expected = path.copy()
    fn.py_func(expected)
    on_device = cp.asarray(path)
    fn(on_device)
    np.testing.assert_array_equal(cp.asnumpy(on_device), expected)
    in_context = path.copy()
    with xpuc.device_context("cuda:0"):
        fn(in_context)
    np.testing.assert_array_equal(in_context, expected)


@xpuc.jit
def _add_last_row(a):
    for i in numba.prange(a.shape[0] - 1):
        a[i, :] = a[i, :] + a[a.shape[0] - 1, :]


@cuda
def test_a_row_at_an_index_from_the_shape_on_cuda(cp, monkeypatch):
    """The host reads the index's dimension from the CUDA array's shape."""
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    a = np.arange(1.0, 49.0).reshape(6, 8)
    expected = a.copy()
    _add_last_row.py_func(expected)
    on_device = cp.asarray(a)
    _add_last_row(on_device)
    np.testing.assert_array_equal(cp.asnumpy(on_device), expected)


@cuda
def test_a_changed_row_k_raises_on_cuda(cp, monkeypatch):
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", "0")
    with pytest.raises(xpuc.UnsupportedError, match=r"'a\[k, :\]'.*order the iterations"):
        _add_row_k(cp.ones((64, 8)), 5)
