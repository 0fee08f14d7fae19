# spirv stage of explicit kernels' atomics: on an argument array an integer
# add is one AtomicIAdd on a second, SPIR-V pointer argument; a float add is a
# compare-exchange loop on the element's bits; 64-bit atomics declare
# Int64Atomics; on a local array, the same SPIR-V atomics on its Workgroup
# variable, at work-group scope (a float add a compare-exchange loop there too).
# RUN: %xpuc compile %s --emit spirv | filecheck %s

import numpy as np

import xpuc


@xpuc.kernel(["void(int64[::1], int32[::1])", "void(int64[::1], float64[::1])"])
def histogram(data, counts):
    xpuc.atomic.add(counts, data[xpuc.get_global_id(0)], 1)


@xpuc.kernel("void(int64[::1], float32[::1])")
def group_sums(data, sums):
    partial = xpuc.local.array(4, np.float32)
    xpuc.atomic.add(partial, data[xpuc.get_global_id(0)], 0.5)


@xpuc.kernel("void(int64[::1], int64[::1])")
def group_histogram(data, counts):
    bins = xpuc.local.array(16, np.int64)
    xpuc.atomic.add(bins, data[xpuc.get_global_id(0)], 1)
    xpuc.barrier()
    if xpuc.get_local_id(0) < 16:
        xpuc.atomic.add(counts, xpuc.get_local_id(0), bins[xpuc.get_local_id(0)])

# CHECK: // xpuc: kernel histogram signature (array(int64, 1d, C), array(int32, 1d, C))
# CHECK: spirv.func @histogram({{.*}}!spirv.ptr<i32, CrossWorkgroup>
# CHECK: spirv.AtomicIAdd <Device> <None> %{{.*}} : !spirv.ptr<i32, CrossWorkgroup>

# CHECK: // xpuc: kernel histogram signature (array(int64, 1d, C), array(float64, 1d, C))
# CHECK: requires #spirv.vce<{{.*}}Int64Atomics
# CHECK: spirv.mlir.loop
# CHECK: spirv.AtomicCompareExchange <Device> <None> <None> %{{.*}} : !spirv.ptr<i64, CrossWorkgroup>

# CHECK: // xpuc: kernel group_sums
# CHECK: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.array<4 x f32>, Workgroup>
# CHECK: spirv.mlir.loop
# CHECK: spirv.AtomicCompareExchange <Workgroup> <None> <None> %{{.*}} : !spirv.ptr<i32, Workgroup>

# CHECK: // xpuc: kernel group_histogram
# CHECK: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.array<16 x i64>, Workgroup>
# CHECK: spirv.AtomicIAdd <Workgroup>
# CHECK: spirv.ControlBarrier <Workgroup>
# CHECK: spirv.AtomicIAdd <Device>
