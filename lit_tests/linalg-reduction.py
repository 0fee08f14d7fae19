# A sum in a prange: the parallel loop runs over a fixed number of work-items,
# each an scf.for over a strided share of the iterations that carries the
# running sum from 0, and each stores its partial result for the host to combine.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numba

import xpuc


@xpuc.jit("float64(float64[::1])")
def total(a):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        s += a[i]
    return s

# CHECK-LABEL: func.func @total_parfor0(
# CHECK-SAME: %[[PARTIALS:arg[0-9]+]]: memref<?xf64>)
# CHECK: %[[W:c4096]] = arith.constant 4096 : index
# CHECK: %[[ZERO:cst[_0-9]*]] = arith.constant 0.000000e+00 : f64
# CHECK: scf.parallel (%[[ITEM:arg[0-9]+]]) = (%{{c0[_0-9]*}}) to (%[[W]])
# CHECK-NEXT: %[[SUMS:[0-9]+]] = scf.for %[[K:arg[0-9]+]] = %[[ITEM]] to %{{[0-9]+}} step %[[W]]
# CHECK-SAME: iter_args(%[[SUM:arg[0-9]+]] = %[[ZERO]]) -> (f64)
# CHECK: %[[X:[0-9]+]] = memref.load
# CHECK: %[[NEXT:[0-9]+]] = arith.addf %[[SUM]], %[[X]] : f64
# CHECK: scf.yield %[[NEXT]] : f64
# CHECK: memref.store %[[SUMS]], %[[PARTIALS]][%[[ITEM]]] : memref<?xf64>
# CHECK-NOT: scf.while
