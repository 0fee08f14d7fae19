# int64 elements on an NVIDIA GPU are one 64-bit access each: the gpu.module
# has NVPTX's data layout when it is translated to LLVM IR (in LLVM's default
# one an i64 is 4-byte aligned, and each load and store was split in two
# 32-bit ones).
# RUN: %xpuc compile %s --arch sm_90 --emit ptx | filecheck %s

import numba

import xpuc


@xpuc.jit("void(int64[::1], int64[::1])")
def shifted(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = a[i] + 1

# CHECK: .visible .entry shifted_parfor0_kernel(
# CHECK-NOT: ld.global.b32
# CHECK: ld.global.b64
# CHECK-NOT: st.global.b32
# CHECK: st.global.b64
# CHECK-NOT: st.global.b32
# CHECK: ret;
