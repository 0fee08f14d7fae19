# float64 arrays give f64 memrefs and arithmetic; a float scalar argument is
# passed by value as an f64 kernel argument.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("float64[::1](float64[::1], float64[::1], float64)")
def axpy(x, y, a):
    return a * x + y

# CHECK: // xpuc: function axpy signature (array(float64, 1d, C), array(float64, 1d, C), float64)
# CHECK: func.func @axpy_parfor0(
# CHECK-SAME: %[[A:arg[0-9]+]]: f64
# CHECK: scf.parallel
# CHECK: %[[X:[0-9]+]] = memref.load %{{arg[0-9]+}}[%{{[0-9]+}}] : memref<?xf64>
# CHECK-NEXT: arith.mulf %[[A]], %[[X]] : f64
# CHECK: arith.addf %{{[0-9]+}}, %{{[0-9]+}} : f64
# CHECK: memref.store %{{[0-9]+}}, %{{arg[0-9]+}}[%{{[0-9]+}}] : memref<?xf64>
# CHECK-NOT: f32
