# An explicit float64[:] signature is layout 'A' (any strides): each such array
# gets a stride argument per dimension, in elements, and offsets use it; a
# C-contiguous float64[::1] argument gets none. The body runs with the
# constant 1 in place of the stride when the stride is 1, and with the stride
# otherwise.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numba

import xpuc


@xpuc.jit("void(float64[:], float64[::1])")
def double(src, dst):
    for i in numba.prange(src.shape[0]):
        dst[i] = src[i] * 2.0

# CHECK: // xpuc: function double signature (array(float64, 1d, A), array(float64, 1d, C))
# CHECK: func.func @double_parfor0(%[[DST:arg[0-9]+]]: memref<?xf64>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[SRC:arg[0-9]+]]: memref<?xf64>, %{{arg[0-9]+}}: index, %[[STRIDE:arg[0-9]+]]: index,
# CHECK-SAME: %[[N:arg[0-9]+]]: index)
# CHECK: scf.parallel (%{{arg[0-9]+}}) = (%c0) to (%[[N]])
# CHECK-NEXT: %[[ONE:c1[_0-9]*]] = arith.constant 1 : index
# CHECK-NEXT: %[[UNIT:[0-9]+]] = arith.cmpi eq, %[[STRIDE]], %[[ONE]] : index
# CHECK-NEXT: scf.if %[[UNIT]] {
# CHECK: %[[I:[0-9]+]] = arith.index_castui %{{[0-9]+}} : i64 to index
# CHECK-NEXT: %[[OFF:[0-9]+]] = arith.muli %[[I]], %[[ONE]] : index
# CHECK-NEXT: memref.load %[[SRC]][%[[OFF]]] : memref<?xf64>
# CHECK: %[[J:[0-9]+]] = arith.index_castui %{{[0-9]+}} : i64 to index
# CHECK-NEXT: memref.store %{{[0-9]+}}, %[[DST]][%[[J]]] : memref<?xf64>
# CHECK: } else {
# CHECK: %[[I:[0-9]+]] = arith.index_castui %{{[0-9]+}} : i64 to index
# CHECK-NEXT: %[[OFF:[0-9]+]] = arith.muli %[[I]], %[[STRIDE]] : index
# CHECK-NEXT: memref.load %[[SRC]][%[[OFF]]] : memref<?xf64>
# CHECK: %[[J:[0-9]+]] = arith.index_castui %{{[0-9]+}} : i64 to index
# CHECK-NEXT: memref.store %{{[0-9]+}}, %[[DST]][%[[J]]] : memref<?xf64>
