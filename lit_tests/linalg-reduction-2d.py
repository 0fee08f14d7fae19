# A sum over a 2-D array: work-item (chunk, lane) runs the rows of its chunk
# (the points of the outer loop) and in each the columns lane, lane + L, ...
# below the row's width, so that neighbouring lanes read neighbouring elements
# (a flat iteration count, cut by division into row and column, made the
# device gather element by element). The body gets the row and the column.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("float64(float64[:, ::1])")
def total(a):
    return a.sum()

# CHECK-LABEL: func.func @total_parfor0(
# CHECK: %[[L:c[0-9]+[_0-9]*]] = arith.constant {{16|8}} : index
# CHECK: scf.parallel (%[[LANE:arg[0-9]+]], %[[CHUNK:arg[0-9]+]]) =
# CHECK: %[[WIDTH:[0-9]+]] = arith.maxsi
# CHECK: %[[HAS:[0-9]+]] = arith.cmpi sgt, %[[WIDTH]], %[[LANE]] : index
# CHECK-NEXT: %[[LEFT:[0-9]+]] = arith.subi %[[WIDTH]], %[[LANE]] : index
# CHECK-NEXT: %[[STEPS:[0-9]+]] = arith.ceildivui %[[LEFT]], %[[L]] : index
# CHECK: %[[MINE:[0-9]+]] = arith.select %[[HAS]], %[[STEPS]], %{{c0[_0-9]*}} : index
# CHECK: scf.for %[[ROW:arg[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step
# CHECK: scf.for %[[STEP:arg[0-9]+]] = %{{c0[_0-9]*}} to %[[MINE]] step
# CHECK-NEXT: %[[GROUP:[0-9]+]] = arith.muli %[[STEP]], %[[L]] : index
# CHECK-NEXT: %[[COLUMN:[0-9]+]] = arith.addi %[[GROUP]], %[[LANE]] : index
# CHECK-NOT: arith.divui
# CHECK-NOT: arith.remui
# CHECK: memref.load
