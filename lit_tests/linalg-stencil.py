# Neighbour access in a prange: i - 1 and i + 1 are integer arithmetic on the
# (signed) loop index, each a load of the same memref after wrap-around. The
# constant start is a constant of the kernel.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numba

import xpuc


@xpuc.jit("void(float64[::1], float64[::1])")
def smooth(a, out):
    for i in numba.prange(1, a.shape[0] - 1):
        out[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0

# CHECK: func.func @smooth_parfor0(%[[A:arg[0-9]+]]: memref<?xf64>
# CHECK: scf.parallel (%[[IV:arg[0-9]+]]) = (%c1) to (%{{arg[0-9]+}})
# CHECK: %[[I:[0-9]+]] = arith.index_cast %[[IV]] : index to i64
# CHECK: arith.subi %[[I]], %{{c1_i64(_[0-9]+)?}} : i64
# CHECK: %[[L:[0-9]+]] = memref.load %[[A]]
# CHECK: %[[C:[0-9]+]] = memref.load %[[A]]
# CHECK: arith.addi %[[I]], %{{c1_i64(_[0-9]+)?}} : i64
# CHECK: %[[R:[0-9]+]] = memref.load %[[A]]
# CHECK: arith.divf %{{[0-9]+}}, %{{cst(_[0-9]+)?}} : f64
