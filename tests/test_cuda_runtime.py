"""The CUDA runtime (runtime/cuda/, xpuc.cuda_runtime): without a GPU, how it
fails where there is no driver; on a CUDA GPU (tests marked ``cuda``, which
skip elsewhere; scripts/cuda-device-tests.sh runs them there), devices,
memory, and the PTX xpuc compiles launched and checked against NumPy."""

import ctypes
import math
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from xpuc import cuda_runtime, runtime
from xpuc.errors import DeviceError

DATA = Path(__file__).parent / "data" / "passes"


def _device_or_none():
    try:
        return cuda_runtime.CudaDevice.open(0) if cuda_runtime.device_count() else None
    except DeviceError:
        return None


DEVICE = _device_or_none()


def cuda(test):
    """Mark ``test`` as needing a CUDA device, and skip it where there is none."""
    return pytest.mark.cuda(pytest.mark.skipif(DEVICE is None, reason="no CUDA device")(test))


def _count_devices_with_driver(driver: str,
                               call: str = "cuda_runtime.device_count()"
                               ) -> subprocess.CompletedProcess:
    """``call`` (``device_count()``) in a fresh process (the driver is loaded
    once per process) that loads ``driver`` instead of libcuda.so.1."""
    code = textwrap.dedent(f"""
        from xpuc import cuda_runtime, runtime
        from xpuc.errors import DeviceError
        try:
            {call}
        except DeviceError as error:
            print(error)
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "XPUC_CUDA_DRIVER": driver}, timeout=300)


def test_no_driver_is_an_error_naming_it():
    result = _count_devices_with_driver("/nonexistent/libcuda.so.1")
    assert result.stdout.startswith("xpuc: no CUDA driver: cannot load "
                                    "/nonexistent/libcuda.so.1 (")
    assert "an NVIDIA GPU needs its driver installed" in result.stdout


def test_a_cuda_queue_without_a_driver_is_the_runtime_error_naming_it():
    """The runtime's CUDA queue reports the CUDA runtime's message as its own."""
    result = _count_devices_with_driver("/nonexistent/libcuda.so.1", "runtime.CudaQueue(0)")
    assert result.stdout.startswith("xpuc: no CUDA driver: cannot load "
                                    "/nonexistent/libcuda.so.1 ("), result.stderr


def test_a_library_that_is_no_driver_is_an_error_naming_what_it_lacks():
    result = _count_devices_with_driver("libm.so.6")
    assert result.stdout.strip() == ("xpuc: the CUDA driver libm.so.6 has no cuInit: it is "
                                     "older than xpuc needs")


def test_a_launch_plan_evaluates_as_host_code_computes():
    """LaunchPlan.evaluate, which launches from Python use: signed division
    truncates, ceildiv rounds up, unsigned comparisons see -1 as 2^64-1."""
    from xpuc.passes.launch_plan import HostOp, LaunchPlan

    ops = (HostOp("div", (0, 1)), HostOp("rem", (0, 1)), HostOp("ceildiv", (2, 1)),
           HostOp("floordiv", (0, 1)), HostOp("cmp", (0, 2), "ult"),
           HostOp("cmp", (0, 2), "slt"), HostOp("select", (8, 2, 1)), HostOp("const", attr=9))
    assert LaunchPlan(3, ops, ()).evaluate([-7, 2, 5]) == [-7, 2, 5, -3, -1, 3, -4, 0, 1, 5, 9]


# ---- on a CUDA GPU --------------------------------------------------------------------


def _ptx(module_text: str, name: str = "kernel") -> tuple[bytes, object]:
    """``module_text`` (a linalg-stage module) lowered for the device: its PTX
    and launch plan."""
    from xpuc.passes import lower
    from xpuc.targets import arch_target

    lowered = lower(module_text, arch_target(DEVICE.sm_arch))
    return lowered.ptx, lowered.plan


class _Buffers:
    """NumPy arrays copied to device memory, and back."""

    def __init__(self, *arrays: np.ndarray) -> None:
        self.arrays = arrays
        self.pointers = [DEVICE.alloc(array.nbytes) for array in arrays]
        for pointer, array in zip(self.pointers, arrays):
            DEVICE.copy_to_device(pointer, array.ctypes.data, array.nbytes)

    def back(self) -> list[np.ndarray]:
        found = []
        for pointer, array in zip(self.pointers, self.arrays):
            copy = np.empty_like(array)
            DEVICE.copy_to_host(copy.ctypes.data, pointer, array.nbytes)
            DEVICE.free(pointer)
            found.append(copy)
        return found


ELEMENTWISE = """
module {
  func.func @scale(%x: memref<?xf32>, %out: memref<?xf32>, %a: f32, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %v = memref.load %x[%i] : memref<?xf32>
      %s = arith.mulf %v, %a : f32
      memref.store %s, %out[%i] : memref<?xf32>
      scf.reduce
    }
    return
  }
}
"""


@cuda
def test_device_is_described():
    from xpuc.nvidia_gpus import ARCHITECTURES

    assert DEVICE.name.startswith("NVIDIA")
    assert DEVICE.sm_arch in ARCHITECTURES
    assert cuda_runtime.CudaDevice.open(0).handle == DEVICE.handle  # opened once


@cuda
def test_no_such_device():
    count = cuda_runtime.device_count()
    with pytest.raises(DeviceError, match=rf"no device cuda:{count} \(this machine has "
                                          rf"{count} CUDA device"):
        cuda_runtime.CudaDevice.open(count)


@cuda
@pytest.mark.parametrize("n", [1, 1000, 1_000_003])
def test_parfor_kernel_runs_its_range_and_no_further(n):
    """The runtime's block does not divide n: the kernel's guard keeps the
    last block's extra threads from writing past the range (the canary)."""
    ptx, plan = _ptx(ELEMENTWISE)
    x = np.arange(n, dtype=np.float32)
    out = np.full(n + 64, -1.0, dtype=np.float32)
    buffers = _Buffers(x, out)
    _run_plan(ptx, plan, [*buffers.pointers, 2.5, n])
    _, result = buffers.back()
    np.testing.assert_array_equal(result[:n], x * np.float32(2.5))
    assert (result[n:] == -1.0).all()


def _run_plan(ptx: bytes, plan, params: list, launch=None) -> None:
    """Evaluate ``plan`` on ``params`` (the host function's arguments, arrays
    as device addresses) and launch each kernel over its range, with
    ``launch`` (``runtime.launch``: on the current call's queue), else on
    DEVICE through the CUDA runtime."""
    values = plan.evaluate(params)
    for kernel in plan.launches:
        (launch or DEVICE.launch)(ptx, kernel.kernel_name,
                                  [(kind, values[number]) for number, kind in kernel.args],
                                  [values[number] for number in kernel.grid])


# ---- the runtime's entries on a CUDA queue, as compiled host code calls them ----------


@pytest.fixture(scope="module")
def cuda_queue():
    return runtime.CudaQueue(0)


def _stats_delta(before: dict) -> dict:
    return {name: value - before[name] for name, value in runtime.stats().items()
            if value != before[name]}


@cuda
def test_a_call_on_a_cuda_queue_copies_numpy_arrays_around_its_launch(cuda_queue):
    """xpuc_call_begin, xpuc_buffer_acquire (copied in), xpuc_launch (the
    PTX), xpuc_buffer_release (copied out), xpuc_call_end: the host code of a
    parfor on NumPy arrays, on cuda:0."""
    ptx, plan = _ptx(ELEMENTWISE)
    n = 100_003
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    before = runtime.stats()
    runtime.call_begin(cuda_queue)
    try:
        dx = runtime.buffer_acquire(x.ctypes.data, x.nbytes, copy_in=True)
        dout = runtime.buffer_acquire(out.ctypes.data, out.nbytes, copy_in=False)
        assert dx != x.ctypes.data and dout != out.ctypes.data
        _run_plan(ptx, plan, [dx, dout, 2.5, n], runtime.launch)
        runtime.buffer_release(out.ctypes.data, out.nbytes, copy_out=True)
        runtime.buffer_release(x.ctypes.data, x.nbytes, copy_out=False)
    finally:
        runtime.call_end()
    np.testing.assert_array_equal(out, x * np.float32(2.5))
    # waited for: the copy in, and the copy out, which waits for the queued
    # launch, so that the call's end has nothing left to wait for
    assert _stats_delta(before) == {"kernel_launches": 1, "h2d_bytes": x.nbytes,
                                    "d2h_bytes": out.nbytes, "usm_allocs": 2, "usm_frees": 2,
                                    "device_waits": 2}


@cuda
def test_device_copies_reuse_the_blocks_an_earlier_call_freed(cuda_queue):
    """The core's block cache serves CUDA queues too: a loop of calls on the
    same NumPy arrays allocates device memory once."""
    host = np.zeros(3000, np.float64)
    addresses = []
    for _ in range(2):
        runtime.call_begin(cuda_queue)
        try:
            addresses.append(runtime.buffer_acquire(host.ctypes.data, host.nbytes, True))
            runtime.buffer_release(host.ctypes.data, host.nbytes, copy_out=False)
        finally:
            runtime.call_end()
    assert addresses[0] == addresses[1]
    assert cuda_runtime.pointer_device(addresses[0]) == 0


@cuda
def test_a_resident_region_is_copied_back_when_the_call_ends(cuda_queue):
    ptx, plan = _ptx(ELEMENTWISE)
    n = 4096
    x = np.arange(n, dtype=np.float32)
    runtime.call_begin(cuda_queue)
    try:
        runtime.call_register(x.ctypes.data, x.nbytes)
        dx = runtime.buffer_acquire(x.ctypes.data, x.nbytes, copy_in=True)
        _run_plan(ptx, plan, [dx, dx, 3.0, n], runtime.launch)
        runtime.buffer_release(x.ctypes.data, x.nbytes, copy_out=True)
        assert x[1] == 1.0  # still on the device
    finally:
        runtime.call_end()
    np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32) * 3)


@cuda
def test_device_memory_is_used_in_place(cuda_queue):
    """Memory of the device (CuPy's, torch's: here the CUDA runtime's) is
    neither copied nor registered: kernels take its address."""
    ptx, plan = _ptx(ELEMENTWISE)
    n = 1000
    buffers = _Buffers(np.arange(n, dtype=np.float32), np.zeros(n, np.float32))
    before = runtime.stats()
    runtime.call_begin(cuda_queue)
    try:
        pointers = [runtime.buffer_acquire(p, n * 4, copy_in=True) for p in buffers.pointers]
        assert pointers == buffers.pointers
        _run_plan(ptx, plan, [*pointers, -1.0, n], runtime.launch)
        for p in pointers:
            runtime.buffer_release(p, n * 4, copy_out=True)
    finally:
        runtime.call_end()
    assert _stats_delta(before) == {"kernel_launches": 1, "device_waits": 1}  # the end's
    x, out = buffers.back()
    np.testing.assert_array_equal(out, -x)


@cuda
def test_launches_in_a_call_are_queued_and_waited_for_at_its_end(cuda_queue):
    """Each launch returns once queued; the kernels run in order on the
    stream, and the call's end waits for them all, once."""
    ptx, plan = _ptx(ELEMENTWISE)
    n, steps = 1 << 20, 20
    buffers = _Buffers(np.ones(n, np.float32), np.zeros(n, np.float32))
    x, out = buffers.pointers
    before = runtime.stats()
    runtime.call_begin(cuda_queue)
    try:
        for _ in range(steps):  # x *= 2 then out = x * -1, each reading the last's result
            _run_plan(ptx, plan, [x, x, 2.0, n], runtime.launch)
        _run_plan(ptx, plan, [x, out, -1.0, n], runtime.launch)
    finally:
        runtime.call_end()
    assert _stats_delta(before) == {"kernel_launches": steps + 1, "device_waits": 1}
    np.testing.assert_array_equal(buffers.back()[1], np.full(n, -(2.0 ** steps), np.float32))


@cuda
def test_memory_freed_while_kernels_are_in_flight_is_reused_only_by_their_call(cuda_queue):
    """A block freed while the call's queued kernels may still use it is not
    the cache's for another thread (another stream) until the call waits; the
    call's own allocations, queued behind those kernels, reuse it."""
    ptx, plan = _ptx(ELEMENTWISE)
    n = 1 << 16
    elsewhere = []

    def allocate_on_another_thread():
        block = runtime.usm_alloc(cuda_queue, 4 * n)
        elsewhere.append(block)
        runtime.usm_free(cuda_queue, block, 4 * n)

    runtime.call_begin(cuda_queue)
    try:
        block = runtime.usm_alloc(cuda_queue, 4 * n)
        _run_plan(ptx, plan, [block, block, 2.0, n], runtime.launch)
        runtime.usm_free(cuda_queue, block, 4 * n)
        thread = threading.Thread(target=allocate_on_another_thread)
        thread.start()
        thread.join()
        assert elsewhere[0] != block  # held for the call
        assert runtime.usm_alloc(cuda_queue, 4 * n) == block  # the call's own reuse
        runtime.usm_free(cuda_queue, block, 4 * n)
    finally:
        runtime.call_end()
    allocate_on_another_thread()  # the call waited: the block is the cache's
    assert block in elsewhere[1:]


@cuda
def test_a_failed_launch_on_a_cuda_queue_is_the_runtime_error(cuda_queue):
    ptx, _ = _ptx(ELEMENTWISE)
    runtime.call_begin(cuda_queue)
    try:
        with pytest.raises(DeviceError, match=rf"kernel 'nothing' is not in its PTX module on "
                                              rf"cuda:0 \({DEVICE.name}\): CUDA_ERROR_NOT_FOUND"):
            runtime.launch(ptx, "nothing", [], [1])
    finally:
        runtime.call_end()


@cuda
def test_2d_range_with_an_offset_row():
    """tests/data/passes/grid2d.mlir: out[i*n1 + j] = a[i*n1 + j] * s + j + 1000 * i for
    lb0 <= i < n0, 0 <= j < n1; blocks span rows, so both dimensions are guarded."""
    ptx, plan = _ptx((DATA / "grid2d.mlir").read_text())
    lb0, n0, n1, s = 3, 37, 1001, 0.5
    a = np.random.default_rng(1).random(n0 * n1).astype(np.float32)
    out = np.full(n0 * n1 + 64, -1.0, np.float32)
    buffers = _Buffers(a, out)
    _run_plan(ptx, plan, [*buffers.pointers, lb0, n0, n1, s])
    _, result = buffers.back()
    i, j = np.meshgrid(np.arange(n0), np.arange(n1), indexing="ij")
    expected = (a.reshape(n0, n1) * np.float32(s) + (j + 1000 * i).astype(np.float32))
    np.testing.assert_array_equal(result[lb0 * n1:n0 * n1], expected[lb0:].ravel())
    assert (result[:lb0 * n1] == -1.0).all() and (result[n0 * n1:] == -1.0).all()


@cuda
def test_3d_range():
    """tests/data/passes/grid3d.mlir: out[(i*n1 + j)*n2 + k] = a[...] + k + 100*j + 10000*i
    for 0 <= i < n0, lb1 <= j < n1, 0 <= k < n2."""
    ptx, plan = _ptx((DATA / "grid3d.mlir").read_text())
    n0, lb1, n1, n2 = 5, 2, 9, 300
    a = np.arange(n0 * n1 * n2, dtype=np.int64)
    out = np.full(n0 * n1 * n2, -1, np.int64)
    buffers = _Buffers(a, out)
    _run_plan(ptx, plan, [*buffers.pointers, n0, lb1, n1, n2])
    _, result = buffers.back()
    i, j, k = np.meshgrid(np.arange(n0), np.arange(n1), np.arange(n2), indexing="ij")
    expected = np.where(j >= lb1, a.reshape(n0, n1, n2) + k + 100 * j + 10000 * i, -1)
    np.testing.assert_array_equal(result.reshape(n0, n1, n2), expected)


@cuda
def test_a_missing_kernel_names_kernel_device_and_driver_message():
    ptx, _ = _ptx(ELEMENTWISE)
    with pytest.raises(DeviceError, match=rf"kernel 'nothing' is not in its PTX module on cuda:0 "
                                          rf"\({DEVICE.name}\): CUDA_ERROR_NOT_FOUND"):
        DEVICE.launch(ptx, "nothing", [], [1])


@cuda
def test_bad_ptx_is_an_error_with_the_jit_log():
    with pytest.raises(DeviceError, match=r"the PTX module did not load on cuda:0 .*"
                                          r"CUDA_ERROR_INVALID_PTX"):
        DEVICE.launch(b".version 8.0\n.target sm_90\n.address_size 64\nnonsense", "k", [], [1])


# math op -> (NumPy's function, inputs' range)
_MATH = {
    "exp": (np.exp, (-20, 20)), "exp2": (np.exp2, (-20, 20)), "expm1": (np.expm1, (-1, 1)),
    "log": (np.log, (1e-3, 1e3)), "log2": (np.log2, (1e-3, 1e3)),
    "log10": (np.log10, (1e-3, 1e3)), "log1p": (np.log1p, (-0.5, 10)),
    "sin": (np.sin, (-10, 10)), "cos": (np.cos, (-10, 10)), "tan": (np.tan, (-1.5, 1.5)),
    "sinh": (np.sinh, (-5, 5)), "cosh": (np.cosh, (-5, 5)), "tanh": (np.tanh, (-5, 5)),
    "asin": (np.arcsin, (-1, 1)), "acos": (np.arccos, (-1, 1)), "atan": (np.arctan, (-10, 10)),
    "erf": (np.vectorize(math.erf, otypes=[np.float64]), (-3, 3)),
    "sqrt": (np.sqrt, (0, 1e3)), "cbrt": (np.cbrt, (-1e3, 1e3)),
}
# libdevice's documented error bounds are 1 to 4 ulp (CUDA's programming
# guide, "Mathematical Functions"); the float64 approximations LLVM uses
# without it were off by millions (ex2.approx.f32 for exp)
_ULPS = 4


@cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(_MATH))
def test_math_matches_numpy(op, dtype):
    """Each math function against NumPy's in float64 (for float32, rounded)."""
    reference, (low, high) = _MATH[op]
    mlir_type = {np.float32: "f32", np.float64: "f64"}[dtype]
    text = f"""
module {{
  func.func @apply(%x: memref<?x{mlir_type}>, %out: memref<?x{mlir_type}>, %n: index) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {{
      %v = memref.load %x[%i] : memref<?x{mlir_type}>
      %r = math.{op} %v : {mlir_type}
      memref.store %r, %out[%i] : memref<?x{mlir_type}>
      scf.reduce
    }}
    return
  }}
}}
"""
    ptx, plan = _ptx(text)
    n = 100_000
    x = np.random.default_rng(0).uniform(low, high, n).astype(dtype)
    buffers = _Buffers(x, np.zeros(n, dtype))
    _run_plan(ptx, plan, [*buffers.pointers, n])
    _, result = buffers.back()
    expected = reference(x.astype(np.float64))
    ulps = np.abs(result - expected) / np.spacing(np.abs(expected).astype(dtype))
    assert ulps.max() <= _ULPS, f"{op} {mlir_type}: {ulps.max():.1f} ulp at x={x[ulps.argmax()]!r}"


class _NrtApi(ctypes.Structure):
    """Numba's NRT_api_functions (numba/core/runtime/nrt_external.h)."""

    _fields_ = [(name, ctypes.c_void_p) for name in (
        "allocate", "allocate_external", "manage_memory", "acquire", "release", "get_data")]


@cuda
def test_an_array_compiled_code_makes_is_device_memory_freed_with_its_meminfo(cuda_queue):
    """xpuc_usm_array_alloc on a CUDA queue: a MemInfo over device memory,
    which Numba's release frees."""
    from numba.core.runtime import _nrt_python

    api_address = ctypes.CFUNCTYPE(ctypes.c_void_p)(_nrt_python.c_helpers["get_api"])()
    runtime.set_nrt_api(api_address)
    api = _NrtApi.from_address(api_address)
    get_data = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(api.get_data)
    release = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(api.release)
    before = runtime.stats()
    meminfo = ctypes.c_void_p()
    runtime.call_begin(cuda_queue)
    try:
        runtime.check(runtime._lib.xpuc_usm_array_alloc(4096, runtime.USM_DEVICE,
                                                       ctypes.byref(meminfo)))
    finally:
        runtime.call_end()
    data = get_data(meminfo)
    assert cuda_runtime.pointer_device(data) == 0
    values = np.arange(1024, dtype=np.float32)
    DEVICE.copy_to_device(data, values.ctypes.data, values.nbytes)
    back = np.empty_like(values)
    DEVICE.copy_to_host(back.ctypes.data, data, back.nbytes)
    np.testing.assert_array_equal(back, values)
    release(meminfo)
    assert _stats_delta(before) == {"usm_allocs": 1, "usm_frees": 1}


@cuda
def test_the_device_of_memory_is_found_from_its_address():
    assert cuda_runtime.pointer_device(np.zeros(4).ctypes.data) is None
    buffers = _Buffers(np.zeros(4))
    assert cuda_runtime.pointer_device(buffers.pointers[0]) == 0
    assert cuda_runtime.pointer_device(buffers.pointers[0] + 8) == 0  # inside the block
    buffers.back()
