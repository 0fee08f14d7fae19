# linalg stage of an array of a run-time size in a prange body: symm's
# C[:i, j] += alpha * B[i, j] * A[i, :i] is one scf.for over the column's
# slice, each element of the array expression computed there (A's element
# loaded, multiplied), added to C's and stored: no array made, no alloca.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

from numba import prange

import xpuc


@xpuc.jit(["void(float64, int64, float64[:, ::1], float64[:, ::1], float64[:, ::1])"])
def symm_column(alpha, i, C, A, B):
    for j in prange(C.shape[1]):
        C[:i, j] += alpha * B[i, j] * A[i, :i]

# CHECK: func.func @symm_column_parfor0(
# CHECK-NOT: memref.alloca
# CHECK: scf.for
# CHECK: %[[A:.*]] = memref.load %arg0[%{{.*}}] : memref<?xf64>
# CHECK: %[[TERM:.*]] = arith.mulf %{{.*}}, %[[A]] : f64
# CHECK: %[[C:.*]] = memref.load %arg6[%[[AT:.*]]] : memref<?xf64>
# CHECK: %[[SUM:.*]] = arith.addf %[[C]], %[[TERM]] : f64
# CHECK: memref.store %[[SUM]], %arg6[%[[AT]]] : memref<?xf64>
