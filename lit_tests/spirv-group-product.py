# spirv stage of a work-group product: core OpenCL SPIR-V has no group
# multiply, so it is SPV_KHR_uniform_group_instructions' GroupFMulKHR /
# GroupIMulKHR, the module declaring the capability and its extension.
# RUN: %xpuc compile %s --emit spirv | filecheck %s

import xpuc


@xpuc.kernel(["void(float32[::1], float32[::1])", "void(int64[::1], int64[::1])"])
def group_product(values, out):
    out[xpuc.get_global_id(0)] = xpuc.group.reduce_mul(values[xpuc.get_global_id(0)])

# CHECK: // xpuc: kernel group_product signature (array(float32, 1d, C), array(float32, 1d, C))
# CHECK: spirv.module @{{.*}} requires #spirv.vce<{{.*}}GroupUniformArithmeticKHR{{.*}}[SPV_KHR_uniform_group_instructions]>
# CHECK: spirv.KHR.GroupFMul <Workgroup> <Reduce> %{{.*}} : f32

# CHECK: // xpuc: kernel group_product signature (array(int64, 1d, C), array(int64, 1d, C))
# CHECK: spirv.KHR.GroupIMul <Workgroup> <Reduce> %{{.*}} : i64
