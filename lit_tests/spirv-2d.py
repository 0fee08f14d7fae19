# spirv stage of a 2-D loop: ids read from x and y of the global id, no
# bounds check, no fixed local size.
# RUN: %xpuc compile %s --emit spirv | filecheck %s
import xpuc


@xpuc.jit("float32[:, ::1](float32[:, ::1], float32[:, ::1])")
def add2(a, b):
    return a + b

# CHECK: spirv.func @add2_parfor0_kernel(
# CHECK-DAG: spirv.CompositeExtract %{{[0-9]+}}[0 : i32] : vector<3xi64>
# CHECK-DAG: spirv.CompositeExtract %{{[0-9]+}}[1 : i32] : vector<3xi64>
# CHECK-NOT: spirv.CompositeExtract %{{[0-9]+}}[2 : i32]
# CHECK-NOT: spirv.mlir.selection
# CHECK: spirv.FAdd %{{[0-9]+}}, %{{[0-9]+}} : f32
# CHECK-NOT: LocalSize
