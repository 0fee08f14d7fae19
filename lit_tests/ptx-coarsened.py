# A streaming parfor for an NVIDIA GPU (--arch sm_90) runs several iterations
# a thread, enough for 16 bytes of loads in flight (coarsening.py): a float32
# triad loads 8 bytes an iteration, so each of G = ceil(n / 2) threads runs
# iterations g and g + G, the second clamped to n - 1 for its loads. All four
# loads come before the first store; the second iteration stores only below
# n. The host launches ceil(n / 2) work-items (n itself past 2^31 - 1, which
# the runtime refuses) and passes n.
# RUN: %xpuc compile %s --arch sm_90 --emit gpu | filecheck %s --check-prefix=GPU
# RUN: %xpuc compile %s --arch sm_90 --emit ptx | filecheck %s

import numba

import xpuc


@xpuc.jit("void(float32[::1], float32[::1], float32[::1], float32)")
def triad(a, b, c, s):
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] + s * c[i]

# GPU: %[[N:[0-9]+]] = arith.maxsi
# GPU: %[[FITS:[0-9]+]] = arith.cmpi sle, %[[N]], %c2147483647
# GPU: %[[G:[0-9]+]] = arith.ceildivsi %[[N]], %c2
# GPU: %[[RANGE:[0-9]+]] = arith.select %[[FITS]], %[[G]], %[[N]]
# GPU: gpu.launch_func @triad_parfor0_kernel::@triad_parfor0_kernel blocks in (%[[RANGE]], %c1, %c1) threads in (%c1, %c1, %c1) args({{.*}}, %[[N]] : index)
# GPU: gpu.func @triad_parfor0_kernel({{.*}}, %[[TOTAL:arg[0-9]+]]: index) kernel
# GPU: %[[ID:global_id_x]] = gpu.global_id x
# GPU: %[[STRIDE:[0-9]+]] = arith.ceildivui %[[TOTAL]], %c2
# GPU: %[[I1:[0-9]+]] = arith.addi %[[ID]], %[[STRIDE]]
# GPU: %[[C1:[0-9]+]] = arith.minui %[[I1]]
# GPU-COUNT-2: memref.load %arg0
# GPU-COUNT-2: memref.load %arg1
# GPU-NOT: memref.load
# GPU: memref.store %{{[0-9]+}}, %arg3[%[[ID]]]
# GPU-NEXT: %[[PAST1:[0-9]+]] = arith.cmpi ult, %[[I1]], %[[TOTAL]]
# GPU-NEXT: scf.if %[[PAST1]] {
# GPU-NEXT: memref.store %{{[0-9]+}}, %arg3[%[[C1]]]
# GPU-NOT: scf.if

# CHECK: .visible .entry triad_parfor0_kernel(
# CHECK: min.u64
# CHECK-NOT: min.u64
# CHECK-COUNT-4: ld.global.b32
# CHECK-NOT: ld.global
# CHECK: st.global.b32
# CHECK: st.global.b32
# CHECK-NOT: st.global
# CHECK: ret;
