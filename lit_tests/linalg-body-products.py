# linalg stage of products in a prange body: spmv's dot of a slice with a
# gather is one scf.for carrying the sum, which loads each column index and
# then x at it (no array made, no alloca); the lengths of A_col's and A_val's
# slices are the host's size check, not the kernel's.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

from numba import prange

import xpuc


@xpuc.jit(["void(int64[::1], int64[::1], float64[::1], float64[::1], float64[::1])"])
def spmv(A_row, A_col, A_val, x, y):
    for i in prange(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]

# CHECK: func.func @spmv_parfor0(
# CHECK-NOT: memref.alloca() : memref<{{[0-9]+}}xf64
# CHECK: scf.for %{{.*}} iter_args(%[[SUM:.*]] = %{{.*}}) -> (f64)
# CHECK: memref.load %{{.*}} : memref<?xf64>
# CHECK: memref.load %{{.*}} : memref<?xi64>
# CHECK: memref.load %{{.*}} : memref<?xf64>
# CHECK: arith.mulf
# CHECK: arith.addf %[[SUM]]
# CHECK: scf.yield
