# A sum in a prange for an NVIDIA GPU (--arch sm_90): the reduction takes a
# GPU's shape. The launch is blocks of 256 threads, 8 blocks for each of the
# 132 SMs of an H100 (the kernel's own blocks, not a range the runtime cuts
# up); each thread adds a grid-strided share of the iterations (step 1056 *
# 256), four at a step while four remain (their loads in flight together),
# then one at a step; each warp halves its 32 results with shuffles down (a float64 moved
# as two 32-bit halves), the first thread of each warp leaves the warp's
# result in shared memory (8 of them), and after the barrier thread 0 adds
# the 8 and stores one partial result per block for the host.
# RUN: %xpuc compile %s --arch sm_90 --emit gpu | filecheck %s --check-prefix=GPU
# RUN: %xpuc compile %s --arch sm_90 --emit ptx | filecheck %s

import numba

import xpuc


@xpuc.jit("float64(float64[::1])")
def total(a):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        s += a[i] * a[i]
    return s

# GPU: gpu.launch_func @total_parfor0_kernel::@total_parfor0_kernel blocks in (%c1056, %c1, %c1) threads in (%c256, %c1, %c1)
# GPU: gpu.func @total_parfor0_kernel(
# GPU-SAME: known_block_size = array<i32: 256, 1, 1>
# GPU: %[[BLOCK:block_id_x]] = gpu.block_id x
# GPU: %[[THREAD:thread_id_x]] = gpu.thread_id x
# GPU: scf.for %{{.*}} = %{{[0-9]+}} to %{{[0-9]+}} step %c1081344
# GPU-COUNT-4: memref.load %{{arg[0-9]+}}[%{{[a-z0-9]+}}] : memref<?xf64>
# GPU: scf.yield
# GPU-NEXT: }
# GPU-NEXT: scf.for %{{.*}} = %{{[0-9]+}} to %{{[0-9]+}} step %c270336
# GPU-NEXT: memref.load %{{arg[0-9]+}}[%{{[a-z0-9]+}}] : memref<?xf64>
# GPU: gpu.shuffle down %{{[0-9]+}}, %c16_i32, %c32_i32 : f64
# GPU: gpu.shuffle down %{{[0-9]+}}, %c1_i32, %c32_i32 : f64
# GPU: gpu.barrier
# GPU: memref.store %{{[0-9]+}}, %{{arg[0-9]+}}[%[[BLOCK]]] : memref<?xf64>
# GPU: memref.global "private" @total_parfor0_body_group0 : memref<8xf64, #gpu.address_space<workgroup>>

# CHECK: .shared .align 8 .b8 total_parfor0_body_group0[64];
# CHECK: mov.u32 %{{r[0-9]+}}, %ctaid.x;
# CHECK: mov.u32 %{{r[0-9]+}}, %tid.x;
# CHECK: ld.global.b64
# CHECK: shfl.sync.down.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 16, 31, -1;
# CHECK-NEXT: shfl.sync.down.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 16, 31, -1;
# CHECK: shfl.sync.down.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 1, 31, -1;
# CHECK: st.shared.b64
# CHECK: bar.sync 0;
# CHECK: ld.shared
# CHECK: st.global.b64
