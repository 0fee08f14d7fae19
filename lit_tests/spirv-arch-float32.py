# For a GPU without fp64 (--arch dg2, Arc), Python floats are float32: the
# literal, math.pi and the float argument of a float32 function, the 0.0 that
# seeds a sum, a kernel's literal. No f64 anywhere; no Float64 capability.
# RUN: %xpuc compile %s --arch dg2 --emit spirv | filecheck %s
# RUN: %xpuc compile %s --arch dg2 --emit spirv | filecheck %s --check-prefix=ANY

import math

import numba

import xpuc


@xpuc.jit("(float32[::1], float32)")
def axpy(a, x):
    return a * 2.5 + x * math.pi


@xpuc.jit("(float32[::1],)")
def sum_of_squares(a):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        s += a[i] * a[i]
    return s


@xpuc.kernel("void(float32[::1], float32[::1], float32)")
def scale(a, b, alpha):
    i = xpuc.get_global_id(0)
    b[i] = alpha * a[i] + 1.5

# ANY-NOT: f64
# CHECK-LABEL: // xpuc: function axpy
# CHECK: spirv.module @__spv__axpy_parfor0_kernel Physical64 OpenCL
# CHECK-SAME: requires #spirv.vce<v1.0, [Int64, Addresses, Kernel], []>
# x * math.pi, computed on the host, comes in as an f32 argument
# CHECK: spirv.func @axpy_parfor0_kernel(%{{.*}}, %[[XPI:arg[0-9]+]]: f32,
# CHECK: spirv.Constant 2.500000e+00 : f32
# CHECK: %[[P:[0-9]+]] = spirv.FMul %{{[0-9]+}}, %{{[a-z0-9_]+}} : f32
# CHECK-NEXT: spirv.FAdd %[[P]], %[[XPI]] : f32
# CHECK-LABEL: // xpuc: function sum_of_squares
# CHECK: spirv.module @__spv__sum_of_squares_parfor0_kernel Physical64 OpenCL
# CHECK-SAME: requires #spirv.vce<v1.0, [Int64, Addresses, Kernel{{.*}}], []>
# CHECK: spirv.FAdd %{{.*}} : f32
# CHECK-LABEL: // xpuc: kernel scale
# CHECK: spirv.module @__spv__kernels Physical64 OpenCL
# CHECK-SAME: requires #spirv.vce<v1.0, [Int64, Addresses, Kernel], []>
# CHECK: spirv.Constant 1.500000e+00 : f32
# CHECK: spirv.FMul %{{.*}} : f32
