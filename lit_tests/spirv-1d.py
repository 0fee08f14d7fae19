# spirv stage: an OpenCL kernel module (Physical64 addressing, Kernel and
# Addresses capabilities), an entry point reading its global id and fixing no
# work-group size, arrays as CrossWorkgroup pointers, index arithmetic in i64.
# RUN: %xpuc compile %s --emit spirv | filecheck %s
# RUN: %xpuc compile %s --emit spirv | filecheck %s --check-prefix=NOGL
import xpuc


@xpuc.jit("float32[::1](float32[::1], float32[::1], float32[::1])")
def fma(a, b, c):
    return a * b + c

# CHECK: gpu.module @fma_parfor0_kernel
# CHECK-NEXT: spirv.module @__spv__fma_parfor0_kernel Physical64 OpenCL
# CHECK-SAME: requires #spirv.vce<v1.0, [{{.*}}Addresses{{.*}}Kernel{{.*}}]
# CHECK: spirv.GlobalVariable @[[GID:__builtin__GlobalInvocationId__]] built_in("GlobalInvocationId")
# CHECK: spirv.func @fma_parfor0_kernel(%{{arg[0-9]+}}: !spirv.ptr<f32, CrossWorkgroup>,
# CHECK-SAME: %{{arg[0-9]+}}: !spirv.ptr<f32, CrossWorkgroup>, %{{arg[0-9]+}}: !spirv.ptr<f32, CrossWorkgroup>,
# CHECK-SAME: %[[OUT:arg[0-9]+]]: !spirv.ptr<f32, CrossWorkgroup>, %[[FIRST:arg[0-9]+]]: i64)
# CHECK: %[[ID:[0-9]+]] = spirv.CompositeExtract %{{[0-9]+}}[0 : i32] : vector<3xi64>
# CHECK-NEXT: %[[I:[0-9]+]] = spirv.IAdd %[[ID]], %[[FIRST]] : i64
# CHECK-NOT: spirv.mlir.selection
# CHECK: spirv.Load "CrossWorkgroup" %{{[0-9]+}} : f32
# CHECK: spirv.FMul %{{[0-9]+}}, %{{[0-9]+}} : f32
# CHECK: spirv.FAdd %{{[0-9]+}}, %{{[0-9]+}} : f32
# CHECK: %[[PTR:[0-9]+]] = spirv.PtrAccessChain %[[OUT]][%[[I]]]
# CHECK-NEXT: spirv.Store "CrossWorkgroup" %[[PTR]], %{{[0-9]+}} : f32
# CHECK: spirv.EntryPoint "Kernel" @fma_parfor0_kernel, @[[GID]]
# each float operation rounded on its own, as NumPy's (forbid_contraction)
# CHECK-NEXT: spirv.ExecutionMode @fma_parfor0_kernel "ContractionOff"
# CHECK-NOT: spirv.ExecutionMode
# no GLSL extended instructions anywhere in the output
# NOGL-NOT: GL
