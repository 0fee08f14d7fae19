# gpu stage of a 3-D loop: work-groups of 16x4x4 (256 work-items), all three
# of x, y and z used.
# RUN: %xpuc compile %s --emit gpu | filecheck %s

import xpuc


@xpuc.jit("float64[:, :, ::1](float64[:, :, ::1], float64)")
def scale3(a, s):
    return a * s

# CHECK-DAG: %[[C16:c16]] = arith.constant 16 : index
# CHECK-DAG: %[[C4:c4]] = arith.constant 4 : index
# CHECK: gpu.launch_func @scale3_parfor0_kernel::@scale3_parfor0_kernel
# CHECK-SAME: blocks in (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}})
# CHECK-SAME: threads in (%[[C16]], %[[C4]], %[[C4]])
# CHECK-SAME: %{{arg[0-9]+}} : f64
# CHECK: gpu.func @scale3_parfor0_kernel(
# CHECK-SAME: known_block_size = array<i32: 16, 4, 4>
# CHECK-DAG: gpu.block_id z
# CHECK-DAG: gpu.thread_id z
# CHECK: scf.if
# CHECK: arith.mulf %{{[0-9]+}}, %{{arg[0-9]+}} : f64
