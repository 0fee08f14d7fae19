"""Calls through the runtime on a CUDA queue, as compiled host code makes
them (xpuc_call_begin, xpuc_buffer_acquire, xpuc_launch, xpuc_buffer_release,
xpuc_call_end), spelled in Python with ctypes: the triad ``a = b + s * c`` of
xpuc's PTX on CuPy arrays (device memory, used in place) and on NumPy arrays
(copied in and out at each call), next to CuPy's array expression and its
device-to-device copy (the roof a memory-bound kernel can reach), and the
time of one call of a 1-element triad. Medians of ``--repeat`` calls, each
waited for. Needs a CUDA GPU and CuPy; run from the repository's root as
scripts/cuda-device-tests.sh sets up (``xpuc`` importable).

    python benchmarks/bench_cuda_calls.py [--size N] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import time

import cupy as cp
import numpy as np

from xpuc import cuda_runtime, runtime
from xpuc.passes import lower
from xpuc.targets import arch_target

TRIAD = """
module {{
  func.func @triad(%a: memref<?x{t}>, %b: memref<?x{t}>, %c: memref<?x{t}>, %s: {t},
                   %n: index) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {{
      %x = memref.load %b[%i] : memref<?x{t}>
      %y = memref.load %c[%i] : memref<?x{t}>
      %m = arith.mulf %s, %y : {t}
      %r = arith.addf %x, %m : {t}
      memref.store %r, %a[%i] : memref<?x{t}>
      scf.reduce
    }}
    return
  }}
}}
"""


def median_seconds(run, repeat: int) -> float:
    run()  # loads the module, warms the caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        cp.cuda.runtime.deviceSynchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def triad_call(queue, ptx: bytes, plan, arrays, scale: float, n: int, copies: bool):
    """One offloaded call of the triad, as host code makes it."""
    (a, a_bytes), (b, b_bytes), (c, c_bytes) = arrays

    def run() -> None:
        runtime.call_begin(queue)
        try:
            da = runtime.buffer_acquire(a, a_bytes, copy_in=False)
            db = runtime.buffer_acquire(b, b_bytes, copy_in=copies)
            dc = runtime.buffer_acquire(c, c_bytes, copy_in=copies)
            values = plan.evaluate([da, db, dc, scale, n])
            for kernel in plan.launches:
                runtime.launch(ptx, kernel.kernel_name,
                               [(kind, values[number]) for number, kind in kernel.args],
                               [values[number] for number in kernel.grid])
            runtime.buffer_release(a, a_bytes, copy_out=copies)
            runtime.buffer_release(b, b_bytes, copy_out=False)
            runtime.buffer_release(c, c_bytes, copy_out=False)
        finally:
            runtime.call_end()
    return run


def bench(device, queue, dtype, mlir_type: str, n: int, repeat: int) -> None:
    lowered = lower(TRIAD.format(t=mlir_type), arch_target(device.sm_arch))
    ptx, plan = lowered.ptx, lowered.plan
    nbytes = 3 * n * np.dtype(dtype).itemsize

    def report(what: str, seconds: float, moved: int = nbytes) -> None:
        print(f"| {np.dtype(dtype).name} | {what} | {seconds * 1e6:.1f} | "
              f"{moved / seconds / 1e9:.0f} |")

    b, c = (cp.random.rand(n).astype(dtype) for _ in range(2))
    a = cp.empty_like(b)
    on_device = [(x.data.ptr, x.nbytes) for x in (a, b, c)]
    report("xpuc, CuPy arrays in place",
           median_seconds(triad_call(queue, ptx, plan, on_device, 2.0, n, False), repeat))
    cp.testing.assert_allclose(a, b + 2.0 * c)
    report("CuPy, b + s * c", median_seconds(lambda: cp.add(b, 2.0 * c, out=a), repeat))
    report("CuPy, device-to-device copy of a (the roof)",
           median_seconds(lambda: cp.copyto(a, b), repeat), 2 * a.nbytes)
    hb, hc = cp.asnumpy(b), cp.asnumpy(c)
    ha = np.empty_like(hb)
    on_host = [(x.ctypes.data, x.nbytes) for x in (ha, hb, hc)]
    report("xpuc, NumPy arrays copied in and out",
           median_seconds(triad_call(queue, ptx, plan, on_host, 2.0, n, True),
                          max(3, repeat // 10)))
    np.testing.assert_allclose(ha, hb + 2.0 * hc)
    tiny = [(x.data.ptr, x.itemsize) for x in (a, b, c)]
    report("xpuc, one call of a 1-element triad",
           median_seconds(triad_call(queue, ptx, plan, tiny, 2.0, 1, False), repeat),
           3 * a.itemsize)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1 << 25)
    parser.add_argument("--repeat", type=int, default=30)
    options = parser.parse_args()
    device = cuda_runtime.CudaDevice.open(0)
    queue = runtime.CudaQueue(0)
    print(f"{device.name} ({device.sm_arch}), n = {options.size}, medians of "
          f"{options.repeat} calls")
    print("| dtype | what | time (us) | GB/s |")
    print("| --- | --- | --- | --- |")
    for dtype, mlir_type in ((np.float32, "f32"), (np.float64, "f64")):
        bench(device, queue, dtype, mlir_type, options.size, options.repeat)


if __name__ == "__main__":
    main()
