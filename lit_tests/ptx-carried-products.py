# Mandelbrot's loop on an NVIDIA GPU squares x and y once an iteration: the
# test's squares of the new values are carried into the next body
# (passes/carried_products.py), 8 float64 operations an iteration, not 10.
# The gpu stage, which SYCL devices share, still squares them twice.
# RUN: %xpuc compile %s --arch sm_90 --emit gpu | filecheck %s --check-prefix=GPU
# RUN: %xpuc compile %s --arch sm_90 --emit ptx | filecheck %s

import numba

import xpuc


@xpuc.jit("void(int32[:, ::1], float64, float64, float64, float64, int64)")
def mandelbrot(out, x0, y0, dx, dy, max_iterations):
    for i in numba.prange(out.shape[0]):
        for j in range(out.shape[1]):
            cx, cy = x0 + j * dx, y0 + i * dy
            x = y = 0.0
            n = 0
            while n < max_iterations and x * x + y * y <= 4.0:
                x, y = x * x - y * y + cx, 2.0 * x * y + cy
                n += 1
            out[i, j] = n

# GPU: scf.while (%[[X:[a-z0-9]+]] = %{{.*}}, %[[Y:[a-z0-9]+]] = %{{.*}}, %{{.*}} = %{{.*}}) : (f64, f64, i64)
# GPU: arith.mulf %[[X]], %[[X]] : f64
# GPU: arith.mulf %[[Y]], %[[Y]] : f64
# GPU: scf.if
# GPU: arith.mulf
# GPU: arith.mulf

# CHECK: $L__BB0_[[LOOP:[0-9]+]]:
# CHECK-NEXT: sub.rn.f64
# CHECK-NEXT: add.rn.f64
# CHECK-NEXT: add.rn.f64
# CHECK-NEXT: mul.rn.f64
# CHECK-NEXT: add.rn.f64
# CHECK-NEXT: add.s64
# CHECK-NEXT: setp.lt.s64
# CHECK-NEXT: mul.rn.f64
# CHECK-NEXT: mul.rn.f64
# CHECK-NEXT: add.rn.f64
# CHECK-NEXT: setp.le.f64
# CHECK-NEXT: and.pred
# CHECK-NEXT: mov.b64
# CHECK-NEXT: bra $L__BB0_[[LOOP]];
