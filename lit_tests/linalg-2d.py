# A 2-D array expression is one scf.parallel with two induction variables,
# the innermost (column) dimension first, indexing row-major flat memrefs.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("float32[:, ::1](float32[:, ::1], float32[:, ::1])")
def add2(a, b):
    return a + b

# CHECK: // xpuc: function add2 signature (array(float32, 2d, C), array(float32, 2d, C))
# CHECK: func.func @add2_parfor0(%{{arg[0-9]+}}: memref<?xf32>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %{{arg[0-9]+}}: index, %[[A:arg[0-9]+]]: memref<?xf32>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[ACOLS:arg[0-9]+]]: index,
# CHECK-SAME: %[[ROWS:arg[0-9]+]]: index, %[[COLS:arg[0-9]+]]: index)
# CHECK: scf.parallel (%[[J:arg[0-9]+]], %[[I:arg[0-9]+]])
# CHECK-SAME: = (%{{c0(_[0-9]+)?}}, %{{c0(_[0-9]+)?}})
# CHECK-SAME: to (%[[COLS]], %[[ROWS]]) step (%c1, %c1) {
# CHECK: %[[ROW:[0-9]+]] = arith.index_castui %[[I]] : index to i64
# CHECK-NEXT: %[[COL:[0-9]+]] = arith.index_castui %[[J]] : index to i64
# CHECK-NEXT: %[[R:[0-9]+]] = arith.index_castui %[[ROW]] : i64 to index
# CHECK-NEXT: %[[C:[0-9]+]] = arith.index_castui %[[COL]] : i64 to index
# CHECK-NEXT: %[[T:[0-9]+]] = arith.muli %[[R]], %[[ACOLS]] : index
# CHECK-NEXT: %[[OFF:[0-9]+]] = arith.addi %[[T]], %[[C]] : index
# CHECK-NEXT: memref.load %[[A]][%[[OFF]]] : memref<?xf32>
