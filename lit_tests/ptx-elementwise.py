# ptx stage of a 1-D loop for an NVIDIA GPU, compiled without one (--arch
# sm_90): one thread per iteration in the runtime's blocks, rounded up, so
# each thread compares its global id with the range's extent, an argument
# after the arrays (each array one bare pointer, as in the SPIR-V kernels);
# floats rounded op by op, never contracted into an fma (NumPy's results).
# RUN: %xpuc compile %s --arch sm_90 --emit ptx | filecheck %s
# RUN: %xpuc compile %s --arch sm_90 | filecheck %s --check-prefix=SUMMARY

import xpuc


@xpuc.jit("float32[::1](float32[::1], float32[::1], float32[::1])")
def fma(a, b, c):
    return a * b + c

# CHECK: // xpuc: function fma signature
# CHECK: .version 8.0
# CHECK-NEXT: .target sm_90
# CHECK: .visible .entry fma_parfor0_kernel(
# CHECK-NEXT: .param .u64 .ptr .align 1 fma_parfor0_kernel_param_0,
# CHECK-NEXT: .param .u64 .ptr .align 1 fma_parfor0_kernel_param_1,
# CHECK-NEXT: .param .u64 .ptr .align 1 fma_parfor0_kernel_param_2,
# CHECK-NEXT: .param .u64 .ptr .align 1 fma_parfor0_kernel_param_3,
# CHECK-NEXT: .param .u64 fma_parfor0_kernel_param_4
# CHECK-NEXT: )
# CHECK: ld.param.b64 %[[N:rd[0-9]+]], [fma_parfor0_kernel_param_4];
# CHECK: mov.u32 %{{r[0-9]+}}, %ctaid.x;
# CHECK: mov.u32 %{{r[0-9]+}}, %ntid.x;
# CHECK: mov.u32 %{{r[0-9]+}}, %tid.x;
# CHECK: setp.ge.u64 %[[PAST:p[0-9]+]], %[[ID:rd[0-9]+]], %[[N]];
# CHECK-NEXT: @%[[PAST]] bra
# CHECK: mul.rn.f32
# CHECK: add.rn.f32
# CHECK-NOT: fma.rn
# CHECK: st.global.b32
# CHECK: ret;

# SUMMARY: fma: 1 signature, 1 kernel for sm_90 (fma_parfor0_kernel)
