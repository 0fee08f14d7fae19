# gpu stage of a 1-D loop: the host function computes the number of
# work-groups of 64 and launches the outlined kernel, whose work-item checks
# it is in range.
# RUN: %xpuc compile %s --emit gpu | filecheck %s

import xpuc


@xpuc.jit("float32[::1](float32[::1], float32[::1], float32[::1])")
def fma(a, b, c):
    return a * b + c

# CHECK: // xpuc: function fma signature
# CHECK-NEXT: module attributes {gpu.container_module} {
# CHECK: func.func @fma_parfor0(
# CHECK-SAME: %[[N:arg[0-9]+]]: index) {
# CHECK-DAG: %[[C64:c64]] = arith.constant 64 : index
# CHECK-DAG: %[[C1:c1]] = arith.constant 1 : index
# CHECK: arith.divsi %{{[0-9]+}}, %[[C64]] : index
# CHECK: gpu.launch_func @fma_parfor0_kernel::@fma_parfor0_kernel
# CHECK-SAME: blocks in (%{{[0-9]+}}, %[[C1]], %[[C1]])
# CHECK-SAME: threads in (%[[C64]], %[[C1]], %[[C1]])
# CHECK-SAME: args(%[[N]] : index,
# CHECK-NOT: scf.parallel
# CHECK: gpu.module @fma_parfor0_kernel [#spirv.target_env<
# CHECK-SAME: api=OpenCL
# CHECK-NEXT: gpu.func @fma_parfor0_kernel(%[[KN:arg[0-9]+]]: index,
# CHECK-SAME: kernel attributes {known_block_size = array<i32: 64, 1, 1>}
# CHECK-DAG: %[[BLOCK:block_id_x]] = gpu.block_id x
# CHECK-DAG: %[[THREAD:thread_id_x]] = gpu.thread_id x
# CHECK-DAG: %[[BOUND:[0-9]+]] = arith.maxsi %[[KN]], %c0 : index
# CHECK: %[[BASE:[0-9]+]] = arith.muli %[[BLOCK]], %c64
# CHECK-NEXT: %[[GID:[0-9]+]] = arith.addi %[[THREAD]], %[[BASE]] : index
# CHECK-NEXT: %[[IN:[0-9]+]] = arith.cmpi ult, %[[GID]], %[[BOUND]] : index
# CHECK-NEXT: scf.if %[[IN]] {
# CHECK: arith.mulf
# CHECK: arith.addf
# CHECK: memref.store
# CHECK: gpu.return
