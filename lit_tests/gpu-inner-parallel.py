# An independent inner loop of a prange body is a second parallel dimension
# where the target decides so (frontend/inner_loops.py): on an NVIDIA GPU the
# rows on y and the columns on x, a thread per pixel, the columns' trip count
# an argument the host computes; on the CPU device (the default device here)
# each row stays one work-item walking its columns.
# RUN: %xpuc compile %s --arch sm_90 --emit linalg | filecheck %s --check-prefix=LINALG
# RUN: %xpuc compile %s --arch sm_90 --emit gpu | filecheck %s --check-prefix=GPU
# RUN: %xpuc compile %s --emit gpu | filecheck %s --check-prefix=CPU

from numba import prange

import xpuc


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

# LINALG: scf.parallel (%[[J:arg[0-9]+]], %[[I:arg[0-9]+]]) = (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) to (%{{arg[0-9]+}}, %{{arg[0-9]+}})
# LINALG-DAG: arith.index_castui %[[I]] : index to i64
# LINALG-DAG: arith.index_cast %[[J]] : index to i64

# GPU: func.func @mandelbrot_parfor0(
# GPU: %[[X:[0-9]+]] = arith.maxsi %{{arg[0-9]+}}, %c0 : index
# GPU-NEXT: %[[Y:[0-9]+]] = arith.maxsi %{{arg[0-9]+}}, %c0 : index
# GPU-NEXT: gpu.launch_func @mandelbrot_parfor0_kernel::@mandelbrot_parfor0_kernel blocks in (%[[X]], %[[Y]], %c1)
# GPU: gpu.func @mandelbrot_parfor0_kernel(
# GPU: gpu.global_id x
# GPU-NEXT: gpu.global_id y
# GPU-NOT: scf.for
# GPU: scf.while

# CPU: %[[ROWS:[0-9]+]] = arith.maxsi %{{arg[0-9]+}}, %c0 : index
# CPU-NEXT: gpu.launch_func @mandelbrot_parfor0_kernel::@mandelbrot_parfor0_kernel blocks in (%[[ROWS]], %c1, %c1)
# CPU: gpu.func @mandelbrot_parfor0_kernel(
# CPU: gpu.global_id x
# CPU-NOT: gpu.global_id y
# CPU: scf.for
# CPU: scf.while
