# gpu stage of a 2-D loop: a 2-D range of work-items, the innermost (contiguous)
# dimension on x so that neighbouring work-items read neighbouring elements.
# RUN: %xpuc compile %s --emit gpu | filecheck %s

import xpuc


@xpuc.jit("float32[:, ::1](float32[:, ::1], float32[:, ::1])")
def add2(a, b):
    return a + b

# CHECK: func.func @add2_parfor0(
# CHECK-SAME: %[[ROWS:arg[0-9]+]]: index, %[[COLS:arg[0-9]+]]: index) {
# CHECK-DAG: %[[C1:c1]] = arith.constant 1 : index
# CHECK-DAG: %[[X:[0-9]+]] = arith.maxsi %[[COLS]], %c0 : index
# CHECK-DAG: %[[Y:[0-9]+]] = arith.maxsi %[[ROWS]], %c0 : index
# CHECK: gpu.launch_func @add2_parfor0_kernel::@add2_parfor0_kernel
# CHECK-SAME: blocks in (%[[X]], %[[Y]], %[[C1]])
# CHECK-SAME: threads in (%[[C1]], %[[C1]], %[[C1]])
# CHECK: gpu.func @add2_parfor0_kernel(
# CHECK-SAME: ) kernel {
# CHECK-NEXT: %[[GX:global_id_x]] = gpu.global_id x
# CHECK-NEXT: %[[GY:global_id_y]] = gpu.global_id y
# CHECK-NEXT: %[[ROW:[0-9]+]] = arith.muli %[[GY]], %{{arg[0-9]+}} : index
# CHECK-NEXT: arith.addi %[[ROW]], %[[GX]] : index
# CHECK-NOT: scf.if
# CHECK: arith.addf %{{[0-9]+}}, %{{[0-9]+}} : f32
