# gpu stage of a 1-D loop: one work-item per iteration. The host function
# launches as many as the loop has iterations (never fewer than 0) with no
# work-group size of its own; the kernel indexes by its global id, with no
# bounds check, and fixes no work-group size either. Its id is offset by a last
# argument, ``first``, which the launch passes as 0 (the host splits large
# launches at a cache line of the array it stores: passes/aligned_lanes.py).
# RUN: %xpuc compile %s --emit gpu | filecheck %s

import xpuc


@xpuc.jit("float32[::1](float32[::1], float32[::1], float32[::1])")
def fma(a, b, c):
    return a * b + c

# CHECK: // xpuc: function fma signature
# CHECK-NEXT: module attributes {gpu.container_module} {
# CHECK: func.func @fma_parfor0(
# CHECK-SAME: %[[N:arg[0-9]+]]: index) {
# CHECK-DAG: %[[C0:c0]] = arith.constant 0 : index
# CHECK-DAG: %[[C1:c1]] = arith.constant 1 : index
# CHECK: %[[COUNT:[0-9]+]] = arith.maxsi %[[N]], %[[C0]] : index
# CHECK-NEXT: %[[ZERO:c0_[0-9]+]] = arith.constant 0 : index
# CHECK-NEXT: gpu.launch_func @fma_parfor0_kernel::@fma_parfor0_kernel
# CHECK-SAME: blocks in (%[[COUNT]], %[[C1]], %[[C1]])
# CHECK-SAME: threads in (%[[C1]], %[[C1]], %[[C1]])
# CHECK-SAME: %{{arg[0-9]+}} : memref<?xf32>, %[[ZERO]] : index)
# CHECK-NOT: scf.parallel
# CHECK: gpu.module @fma_parfor0_kernel [#spirv.target_env<
# CHECK-SAME: api=OpenCL
# CHECK-NEXT: gpu.func @fma_parfor0_kernel(
# CHECK-SAME: %[[OUT:arg3]]: memref<?xf32>, %[[FIRST:arg4]]: index)
# CHECK-SAME: kernel attributes {xpuc.aligns = array<i64: 3, 4, 4>} {
# CHECK-NEXT: %[[GID:global_id_x]] = gpu.global_id x
# CHECK-NEXT: %[[I:[0-9]+]] = arith.addi %[[GID]], %[[FIRST]] : index
# CHECK-NOT: scf.if
# CHECK: memref.load %{{arg[0-9]+}}[%[[I]]]
# CHECK: arith.mulf
# CHECK: arith.addf
# CHECK: memref.store %{{[0-9]+}}, %[[OUT]][%[[I]]]
# CHECK-NEXT: gpu.return
