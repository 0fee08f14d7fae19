# gpu stage of a 3-D loop: a 3-D range of work-items, all three of x, y and z
# used.
# RUN: %xpuc compile %s --emit gpu | filecheck %s

import xpuc


@xpuc.jit("float64[:, :, ::1](float64[:, :, ::1], float64)")
def scale3(a, s):
    return a * s

# CHECK: gpu.launch_func @scale3_parfor0_kernel::@scale3_parfor0_kernel
# CHECK-SAME: blocks in (%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}})
# CHECK-SAME: threads in (%c1, %c1, %c1)
# CHECK-SAME: %{{arg[0-9]+}} : f64
# CHECK: gpu.func @scale3_parfor0_kernel(
# CHECK-SAME: ) kernel {
# CHECK-DAG: gpu.global_id x
# CHECK-DAG: gpu.global_id y
# CHECK-DAG: gpu.global_id z
# CHECK-NOT: scf.if
# CHECK: arith.mulf %{{[0-9]+}}, %{{arg[0-9]+}} : f64
