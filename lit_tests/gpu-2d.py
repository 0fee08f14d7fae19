# gpu stage of a 2-D loop: work-groups of 16x16, the innermost dimension on
# x; a work-item checks both of its indices.
# RUN: %xpuc compile %s --emit gpu | filecheck %s

import xpuc


@xpuc.jit("float32[:, ::1](float32[:, ::1], float32[:, ::1])")
def add2(a, b):
    return a + b

# CHECK: func.func @add2_parfor0(
# CHECK-SAME: %[[ROWS:arg[0-9]+]]: index, %[[COLS:arg[0-9]+]]: index) {
# CHECK-DAG: %[[C16:c16]] = arith.constant 16 : index
# CHECK-DAG: %[[C1:c1]] = arith.constant 1 : index
# CHECK: gpu.launch_func @add2_parfor0_kernel::@add2_parfor0_kernel
# CHECK-SAME: blocks in (%{{[0-9]+}}, %{{[0-9]+}}, %[[C1]])
# CHECK-SAME: threads in (%[[C16]], %[[C16]], %[[C1]])
# CHECK-SAME: args(%[[COLS]] : index, %[[ROWS]] : index,
# CHECK: gpu.func @add2_parfor0_kernel(%[[X:arg[0-9]+]]: index, %[[Y:arg[0-9]+]]: index,
# CHECK-SAME: known_block_size = array<i32: 16, 16, 1>
# CHECK-DAG: gpu.block_id x
# CHECK-DAG: gpu.block_id y
# CHECK-DAG: gpu.thread_id x
# CHECK-DAG: gpu.thread_id y
# CHECK: %[[INX:[0-9]+]] = arith.cmpi ult, %{{[0-9]+}}, %{{[0-9]+}} : index
# CHECK-NEXT: %[[INY:[0-9]+]] = arith.cmpi ult, %{{[0-9]+}}, %{{[0-9]+}} : index
# CHECK-NEXT: %[[IN:[0-9]+]] = arith.andi %[[INX]], %[[INY]] : i1
# CHECK-NEXT: scf.if %[[IN]] {
# CHECK: arith.addf %{{[0-9]+}}, %{{[0-9]+}} : f32
