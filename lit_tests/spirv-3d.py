# spirv stage of a 3-D loop: all three components of the global id.
# RUN: %xpuc compile %s --emit spirv | filecheck %s
import xpuc


@xpuc.jit("float64[:, :, ::1](float64[:, :, ::1], float64)")
def scale3(a, s):
    return a * s

# CHECK: spirv.func @scale3_parfor0_kernel(
# CHECK-SAME: %{{arg[0-9]+}}: f64
# CHECK: spirv.CompositeExtract %{{[0-9]+}}[2 : i32] : vector<3xi64>
# CHECK: spirv.FMul %{{[0-9]+}}, %{{arg[0-9]+}} : f64
# CHECK-NOT: LocalSize
