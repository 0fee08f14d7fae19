# A streaming kernel (its global id the whole index of every access) on a
# device that vectorizes across work-items takes a last argument, `first`,
# added to its id, and records the array its vectors align to, that array's
# element bytes and the argument's position (passes/aligned_lanes.py): the
# array it stores, else the first it loads. A kernel that indexes by anything
# else of its id keeps its id as it is.
# RUN: %xpuc compile %s --emit gpu | filecheck %s
from numba import prange

import xpuc


@xpuc.jit("void(float32[::1], float64[::1])")
def narrow(out, a):
    for i in prange(out.shape[0]):
        out[i] = a[i]


@xpuc.jit("float64(float64[::1])")
def total(a):
    s = 0.0
    for i in prange(a.shape[0]):
        s += a[i]
    return s


@xpuc.jit("void(float64[::1], float64[::1])")
def shifted(a, b):
    for i in prange(a.shape[0] - 1):
        a[i] = b[i + 1]

# CHECK-LABEL: // xpuc: function narrow
# CHECK: gpu.launch_func
# CHECK-SAME: %[[ZERO:c0_[0-9]+]] : index)
# CHECK: gpu.func @narrow_parfor0_kernel(%[[A:arg[0-9]+]]: memref<?xf64>,
# CHECK-SAME: %[[OUT:arg[0-9]+]]: memref<?xf32>, %[[FIRST:arg2]]: index)
# CHECK-SAME: xpuc.aligns = array<i64: 1, 4, 2>
# CHECK: %[[I:[0-9]+]] = arith.addi %global_id_x, %[[FIRST]] : index
# CHECK: memref.load %[[A]][%[[I]]]
# CHECK: memref.store %{{[0-9]+}}, %[[OUT]][%[[I]]]
# CHECK-LABEL: // xpuc: function total
# CHECK-NOT: xpuc.aligns
# CHECK-LABEL: // xpuc: function shifted
# CHECK-NOT: xpuc.aligns
