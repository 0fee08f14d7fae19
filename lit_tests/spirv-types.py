# The SPIR-V module requires what its kernel uses: Float64 only for f64 code,
# Int8 for boolean (i8) storage; i1 comparisons become 0/1 bytes by Select.
# RUN: %xpuc compile %s --emit spirv | filecheck %s

import numpy as np

import xpuc


@xpuc.jit("float32[::1](float32[::1])")
def half(a):
    return a * np.float32(0.5)


@xpuc.jit("float64[::1](float64[::1])")
def double(a):
    return a * 2.0


@xpuc.jit("boolean[::1](float64[::1], float64[::1])")
def less(a, b):
    return a < b

# CHECK-LABEL: // xpuc: function half
# CHECK: spirv.module @__spv__half_parfor0_kernel Physical64 OpenCL
# CHECK-SAME: requires #spirv.vce<v1.0, [Int64, Addresses, Kernel], []>
# CHECK: spirv.FMul %{{[0-9]+}}, %{{[a-z0-9_]+}} : f32
# CHECK-LABEL: // xpuc: function double
# CHECK: spirv.module @__spv__double_parfor0_kernel Physical64 OpenCL
# CHECK-SAME: requires #spirv.vce<v1.0, [{{.*}}Float64{{.*}}], []>
# CHECK: spirv.FMul %{{[0-9]+}}, %{{[a-z0-9_]+}} : f64
# CHECK-LABEL: // xpuc: function less
# CHECK: requires #spirv.vce<v1.0, [{{.*}}Int8{{.*}}], []>
# CHECK: spirv.func @less_parfor0_kernel(
# CHECK-SAME: %[[OUT:arg[0-9]+]]: !spirv.ptr<i8, CrossWorkgroup>, %{{arg[0-9]+}}: i64)
# CHECK: %[[LT:[0-9]+]] = spirv.FOrdLessThan %{{[0-9]+}}, %{{[0-9]+}} : f64
# CHECK-DAG: %[[ZERO:cst0_i8]] = spirv.Constant 0 : i8
# CHECK-DAG: %[[ONE:cst1_i8]] = spirv.Constant 1 : i8
# CHECK: %[[BYTE:[0-9]+]] = spirv.Select %[[LT]], %[[ONE]], %[[ZERO]] : i1, i8
# CHECK: spirv.Store "CrossWorkgroup" %{{[0-9]+}}, %[[BYTE]] : i8
