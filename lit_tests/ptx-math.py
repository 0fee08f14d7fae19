# Math on an NVIDIA GPU goes through libdevice, linked into the PTX: float64
# exp is __nv_exp's polynomial in float64 (without libdevice, LLVM lowers it
# to the float32 ex2.approx); a float32 square root is correctly rounded
# (libdevice's __nv_sqrtf would be sqrt.approx).
# RUN: %xpuc compile %s --arch sm_90 --emit nvvm | filecheck %s --check-prefix=NVVM
# RUN: %xpuc compile %s --arch sm_90 --emit ptx | filecheck %s

import math

import numba

import xpuc


@xpuc.jit("void(float64[::1], float64[::1])")
def exps(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = math.exp(x[i])


@xpuc.jit("void(float32[::1], float32[::1])")
def roots(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = math.sqrt(x[i])

# NVVM-LABEL: // xpuc: function exps
# NVVM: llvm.func @__nv_exp(f64) -> f64
# NVVM: llvm.call @__nv_exp(%{{[0-9]+}}) : (f64) -> f64
# NVVM-LABEL: // xpuc: function roots
# NVVM-NOT: __nv_sqrtf
# NVVM: llvm.intr.sqrt(%{{[0-9]+}}) : (f32) -> f32

# CHECK-LABEL: // xpuc: function exps
# CHECK: .visible .entry exps_parfor0_kernel(
# CHECK-NOT: ex2.approx
# CHECK: fma.rn.f64
# CHECK-NOT: ex2.approx
# CHECK-LABEL: // xpuc: function roots
# CHECK-NOT: sqrt.approx
# CHECK: sqrt.rn.f32
# CHECK-NOT: sqrt.approx
