# A float sum or product carried by a loop in a kernel: on the CPU device,
# whose compiler would vectorize it by reordering it, the spirv stage writes
# each of its steps as an fma that computes the same value (x + s is
# fma(x, 1, s), s - x is fma(x, -1, s), s * x is fma(s, x, -0)). The gpu stage
# keeps the plain ops, and a loop-carried value that is no sum or product
# (Mandelbrot's z, squared at each step) keeps its adds and multiplies.
# RUN: %xpuc compile %s --emit gpu | filecheck %s --check-prefix=GPU
# RUN: %xpuc compile %s --emit spirv | filecheck %s --check-prefix=SPIRV
from numba import prange

import xpuc


@xpuc.jit("void(float64[:, ::1], float64[::1], float64[::1], float64[::1])")
def rows(a, sums, differences, products):
    for i in prange(a.shape[0]):
        total, difference, product = 0.0, 0.0, 1.0
        for j in range(a.shape[1]):
            total += a[i, j]
            difference -= a[i, j]
            product *= a[i, j]
        sums[i], differences[i], products[i] = total, difference, product


@xpuc.jit("void(float64[::1], float64[::1])")
def orbit(c, out):
    for i in prange(c.shape[0]):
        z = 0.0
        for _ in range(10):
            z = z * z + c[i]
        out[i] = z

# GPU-LABEL: gpu.func @rows_parfor0_kernel(
# GPU: scf.for
# GPU-DAG: arith.addf
# GPU-DAG: arith.subf
# GPU-DAG: arith.mulf
# GPU-NOT: math.fma
# GPU: scf.yield

# SPIRV-LABEL: spirv.func @rows_parfor0_kernel(
# SPIRV-DAG: %[[ONE:.*]] = spirv.Constant 1.000000e+00 : f64
# SPIRV-DAG: %[[MINUS_ONE:.*]] = spirv.Constant -1.000000e+00 : f64
# SPIRV-DAG: %[[MINUS_ZERO:.*]] = spirv.Constant -0.000000e+00 : f64
# SPIRV: ^bb2(
# SPIRV-DAG: spirv.CL.fma %{{.*}}, %[[ONE]], %{{.*}} : f64
# SPIRV-DAG: spirv.CL.fma %{{.*}}, %[[MINUS_ONE]], %{{.*}} : f64
# SPIRV-DAG: spirv.CL.fma %{{.*}}, %{{.*}}, %[[MINUS_ZERO]] : f64
# SPIRV-NOT: spirv.FAdd
# SPIRV-NOT: spirv.FSub
# SPIRV-NOT: spirv.FMul
# SPIRV: spirv.Return

# SPIRV-LABEL: spirv.func @orbit_parfor0_kernel(
# SPIRV-NOT: spirv.CL.fma
# SPIRV: spirv.FMul
# SPIRV: spirv.FAdd
# SPIRV: spirv.Return
