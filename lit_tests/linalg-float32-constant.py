# np.float32 constants keep float32 code float32 (no f64 anywhere); Numba
# hoists them out of the loop, so they reach the kernel as f32 arguments.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numpy as np

import xpuc


@xpuc.jit("float32[::1](float32[::1])")
def scaled(a):
    return a * np.float32(2.0) + np.float32(1.0)

# CHECK: func.func @scaled_parfor0(%[[TWO:arg[0-9]+]]: f32, %[[ONE:arg[0-9]+]]: f32,
# CHECK: %[[X:[0-9]+]] = memref.load %{{arg[0-9]+}}[%{{[0-9]+}}] : memref<?xf32>
# CHECK-NEXT: %[[P:[0-9]+]] = arith.mulf %[[X]], %[[TWO]] : f32
# CHECK-NEXT: arith.addf %[[P]], %[[ONE]] : f32
# CHECK-NOT: f64
