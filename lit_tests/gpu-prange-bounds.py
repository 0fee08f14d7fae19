# gpu stage of prange(start, stop): the loop is normalized to count from 0,
# so the host launches max(stop - start, 0) work-items and each adds start to
# its global id.
# RUN: %xpuc compile %s --emit gpu | filecheck %s
import numba

import xpuc


@xpuc.jit("void(float64[::1], int64, int64)")
def fill(a, start, stop):
    for i in numba.prange(start, stop):
        a[i] = 1.5

# CHECK: func.func @fill_parfor0(%{{arg[0-9]+}}: memref<?xf64>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[START:arg[0-9]+]]: index, %[[STOP:arg[0-9]+]]: index)
# CHECK: %[[SPAN:[0-9]+]] = arith.subi %[[STOP]], %[[START]] : index
# CHECK-NEXT: %[[COUNT:[0-9]+]] = arith.maxsi %[[SPAN]], %c0 : index
# CHECK: gpu.launch_func @fill_parfor0_kernel::@fill_parfor0_kernel
# CHECK-SAME: blocks in (%[[COUNT]], %c1, %c1)
# CHECK-SAME: args(%[[START]] : index,
# CHECK: gpu.func @fill_parfor0_kernel(%[[KSTART:arg[0-9]+]]: index,
# CHECK: %[[ID:global_id_x]] = gpu.global_id x
# CHECK-NEXT: %[[I:[0-9]+]] = arith.addi %[[KSTART]], %[[ID]] : index
# CHECK-NEXT: arith.cmpi slt, %[[I]], %c0 : index
