# spirv stage: an OpenCL kernel module (Physical64 addressing, Kernel and
# Addresses capabilities), entry point and work-group size declared, arrays
# as CrossWorkgroup pointers, index arithmetic in i64.
# RUN: %xpuc compile %s --emit spirv | filecheck %s
# RUN: %xpuc compile %s --emit spirv | filecheck %s --check-prefix=NOGL

import xpuc


@xpuc.jit("float32[::1](float32[::1], float32[::1], float32[::1])")
def fma(a, b, c):
    return a * b + c

# CHECK: gpu.module @fma_parfor0_kernel
# CHECK-NEXT: spirv.module @__spv__fma_parfor0_kernel Physical64 OpenCL
# CHECK-SAME: requires #spirv.vce<v1.0, [{{.*}}Addresses{{.*}}Kernel{{.*}}]
# CHECK-DAG: spirv.GlobalVariable @[[WG:__builtin__WorkgroupId__]] built_in("WorkgroupId")
# CHECK-DAG: spirv.GlobalVariable @[[LID:__builtin__LocalInvocationId__]] built_in("LocalInvocationId")
# CHECK: spirv.func @fma_parfor0_kernel(%{{arg[0-9]+}}: i64,
# CHECK-SAME: %{{arg[0-9]+}}: !spirv.ptr<f32, CrossWorkgroup>, %{{arg[0-9]+}}: !spirv.ptr<f32, CrossWorkgroup>,
# CHECK-SAME: %{{arg[0-9]+}}: !spirv.ptr<f32, CrossWorkgroup>, %[[OUT:arg[0-9]+]]: !spirv.ptr<f32, CrossWorkgroup>)
# CHECK: spirv.ULessThan %{{[0-9]+}}, %{{[0-9]+}} : i64
# CHECK: spirv.mlir.selection {
# CHECK: spirv.Load "CrossWorkgroup" %{{[0-9]+}} : f32
# CHECK: spirv.FMul %{{[0-9]+}}, %{{[0-9]+}} : f32
# CHECK: spirv.FAdd %{{[0-9]+}}, %{{[0-9]+}} : f32
# CHECK: %[[PTR:[0-9]+]] = spirv.PtrAccessChain %[[OUT]][%{{[0-9]+}}]
# CHECK-NEXT: spirv.Store "CrossWorkgroup" %[[PTR]], %{{[0-9]+}} : f32
# CHECK: spirv.EntryPoint "Kernel" @fma_parfor0_kernel, @[[WG]], @[[LID]]
# CHECK-NEXT: spirv.ExecutionMode @fma_parfor0_kernel "LocalSize", 64, 1, 1
# no GLSL extended instructions anywhere in the output
# NOGL-NOT: GL
