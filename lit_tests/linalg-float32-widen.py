# float32 elements meeting a float64 scalar are widened with arith.extf, as
# NumPy's type promotion does; the result array is float64.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("float64[::1](float32[::1], float64)")
def widen(x, s):
    return x * s

# CHECK: func.func @widen_parfor0(%[[OUT:arg[0-9]+]]: memref<?xf64>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[S:arg[0-9]+]]: f64, %[[X:arg[0-9]+]]: memref<?xf32>
# CHECK: %[[E:[0-9]+]] = memref.load %[[X]][%{{[0-9]+}}] : memref<?xf32>
# CHECK-NEXT: %[[W:[0-9]+]] = arith.extf %[[E]] : f32 to f64
# CHECK-NEXT: %[[P:[0-9]+]] = arith.mulf %[[W]], %[[S]] : f64
# CHECK: memref.store %[[P]], %[[OUT]][%{{[0-9]+}}] : memref<?xf64>
