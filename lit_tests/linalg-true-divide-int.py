# / on integers is true division: both operands become f64 first.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("float64[::1](int32[::1], int32[::1])")
def ratio(a, b):
    return a / b

# CHECK: func.func @ratio_parfor0(%{{arg[0-9]+}}: memref<?xf64>
# CHECK: %[[A:[0-9]+]] = memref.load %{{arg[0-9]+}}[%{{[0-9]+}}] : memref<?xi32>
# CHECK: %[[B:[0-9]+]] = memref.load %{{arg[0-9]+}}[%{{[0-9]+}}] : memref<?xi32>
# CHECK-NEXT: %[[FA:[0-9]+]] = arith.sitofp %[[A]] : i32 to f64
# CHECK-NEXT: %[[FB:[0-9]+]] = arith.sitofp %[[B]] : i32 to f64
# CHECK-NEXT: arith.divf %[[FA]], %[[FB]] : f64
