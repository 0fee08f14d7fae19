# A sum in a prange: the parallel loop runs over a fixed number of work-items,
# each a while loop over a strided share of the iterations that carries the
# running sum, and each stores its partial result for the host to combine.
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
# CHECK: scf.parallel (%[[ITEM:arg[0-9]+]]) = (%c0) to (%[[W]])
# CHECK: scf.while (%[[SUM:arg[0-9]+]] = %cst
# CHECK: arith.addf
# CHECK: scf.condition
# CHECK: memref.store %{{[0-9]+}}#{{[0-9]+}}, %[[PARTIALS]][%[[ITEM]]] : memref<?xf64>
