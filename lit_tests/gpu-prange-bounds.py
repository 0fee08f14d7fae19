# gpu stage of prange(start, stop): the loop is normalized to count from 0,
# so the work-items cover max(stop - start, 0) iterations and each adds start
# to its id (the range check is unsigned: it must not see a negative start).
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
# CHECK-NEXT: arith.maxsi %[[SPAN]], %c0 : index
# CHECK: gpu.launch_func @fill_parfor0_kernel::@fill_parfor0_kernel
# CHECK-SAME: args(%[[STOP]] : index, %[[START]] : index,
# CHECK: gpu.func @fill_parfor0_kernel(%[[KSTOP:arg[0-9]+]]: index, %[[KSTART:arg[0-9]+]]: index,
# CHECK: %[[KSPAN:[0-9]+]] = arith.subi %[[KSTOP]], %[[KSTART]] : index
# CHECK-NEXT: %[[COUNT:[0-9]+]] = arith.maxsi %[[KSPAN]], %c0 : index
# CHECK: %[[BASE:[0-9]+]] = arith.muli %block_id_x, %c64
# CHECK-NEXT: %[[ID:[0-9]+]] = arith.addi %thread_id_x, %[[BASE]] : index
# CHECK-NEXT: %[[IN:[0-9]+]] = arith.cmpi ult, %[[ID]], %[[COUNT]] : index
# CHECK-NEXT: scf.if %[[IN]] {
# CHECK-NEXT: %[[I:[0-9]+]] = arith.addi %[[KSTART]], %[[ID]] : index
# CHECK-NEXT: arith.cmpi slt, %[[I]], %c0 : index
