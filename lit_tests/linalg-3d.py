# A 3-D array expression: three induction variables, innermost first, and the
# offset ((i * d1) + j) * d2 + k.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("float64[:, :, ::1](float64[:, :, ::1], float64)")
def scale3(a, s):
    return a * s

# CHECK: func.func @scale3_parfor0(
# CHECK-SAME: %[[A:arg[0-9]+]]: memref<?xf64>, %{{arg[0-9]+}}: index, %[[D1:arg[0-9]+]]: index, %[[D2:arg[0-9]+]]: index, %[[S:arg[0-9]+]]: f64,
# CHECK-SAME: %[[N0:arg[0-9]+]]: index, %[[N1:arg[0-9]+]]: index, %[[N2:arg[0-9]+]]: index)
# CHECK: scf.parallel (%[[K:arg[0-9]+]], %[[J:arg[0-9]+]], %[[I:arg[0-9]+]])
# CHECK-SAME: to (%[[N2]], %[[N1]], %[[N0]]) step (%c1, %c1, %c1) {
# CHECK: arith.index_castui %[[I]] : index to i64
# CHECK-NEXT: arith.index_castui %[[J]] : index to i64
# CHECK-NEXT: arith.index_castui %[[K]] : index to i64
# CHECK-NEXT: %[[II:[0-9]+]] = arith.index_castui
# CHECK-NEXT: %[[JJ:[0-9]+]] = arith.index_castui
# CHECK-NEXT: %[[KK:[0-9]+]] = arith.index_castui
# CHECK-NEXT: %[[T0:[0-9]+]] = arith.muli %[[II]], %[[D1]] : index
# CHECK-NEXT: %[[T1:[0-9]+]] = arith.addi %[[T0]], %[[JJ]] : index
# CHECK-NEXT: %[[T2:[0-9]+]] = arith.muli %[[T1]], %[[D2]] : index
# CHECK-NEXT: %[[OFF:[0-9]+]] = arith.addi %[[T2]], %[[KK]] : index
# CHECK-NEXT: %[[X:[0-9]+]] = memref.load %[[A]][%[[OFF]]] : memref<?xf64>
# CHECK-NEXT: arith.mulf %[[X]], %[[S]] : f64
