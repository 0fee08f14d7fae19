# prange(start, stop) passes both bounds as index arguments of the loop; an
# index of a signed type may be negative and wraps around as in Python.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numba

import xpuc


@xpuc.jit("void(float64[::1], int64, int64)")
def fill(a, start, stop):
    for i in numba.prange(start, stop):
        a[i] = 1.5

# CHECK: func.func @fill_parfor0(%[[A:arg[0-9]+]]: memref<?xf64>, %[[N:arg[0-9]+]]: index,
# CHECK-SAME: %[[START:arg[0-9]+]]: index, %[[STOP:arg[0-9]+]]: index)
# CHECK: scf.parallel (%[[IV:arg[0-9]+]]) = (%[[START]]) to (%[[STOP]]) step (%c1) {
# CHECK: %[[I:[0-9]+]] = arith.index_cast %{{[0-9]+}} : i64 to index
# CHECK: %[[NEG:[0-9]+]] = arith.cmpi slt, %[[I]], %c0 : index
# CHECK-NEXT: %[[WRAPPED:[0-9]+]] = arith.addi %[[I]], %[[N]] : index
# CHECK-NEXT: %[[POS:[0-9]+]] = arith.select %[[NEG]], %[[WRAPPED]], %[[I]] : index
# CHECK-NEXT: memref.store %{{cst(_[0-9]+)?}}, %[[A]][%[[POS]]] : memref<?xf64>
