# A comparison gives an i1, stored into the boolean result as one byte (i8).
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("boolean[::1](float64[::1], float64[::1])")
def less(a, b):
    return a < b

# CHECK: func.func @less_parfor0(%[[OUT:arg[0-9]+]]: memref<?xi8>,
# CHECK-SAME: memref<?xf64>
# CHECK: %[[C:[0-9]+]] = arith.cmpf olt, %{{[0-9]+}}, %{{[0-9]+}} : f64
# CHECK: %[[B:[0-9]+]] = arith.extui %[[C]] : i1 to i8
# CHECK-NEXT: memref.store %[[B]], %[[OUT]][%{{[0-9]+}}] : memref<?xi8>
