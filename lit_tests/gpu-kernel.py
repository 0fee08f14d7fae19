# gpu stage of an explicit kernel: the function is a gpu.func of its own (no
# launch to map), work-item functions are gpu ops on the SYCL axis order (the
# range's last dimension is x), a barrier is SPIR-V's control barrier ordering
# local memory, and a local array is one Workgroup variable of the module.
# RUN: %xpuc compile %s --emit gpu | filecheck %s
# RUN: %xpuc compile %s --emit linalg | filecheck %s --check-prefix=LINALG

import numpy as np

import xpuc


@xpuc.kernel("void(float32[:, ::1], float32[:, ::1])", ndim=2)
def transpose_tile(a, out):
    i = xpuc.get_global_id(0)
    j = xpuc.get_global_id(1)
    tile = xpuc.local.array((8, 8), np.float32)
    tile[xpuc.get_local_id(0), xpuc.get_local_id(1)] = a[i, j]
    xpuc.barrier()
    out[j, i] = tile[xpuc.get_local_id(0), xpuc.get_local_id(1)]

# CHECK: // xpuc: kernel transpose_tile signature (array(float32, 2d, C), array(float32, 2d, C)) range 2-D
# CHECK: gpu.module @kernels
# CHECK: spirv.GlobalVariable @local0 : !spirv.ptr<!spirv.array<64 x f32>, Workgroup>
# CHECK: gpu.func @transpose_tile(%{{.*}}: memref<?xf32>
# CHECK-SAME: kernel
# CHECK-SAME: spirv.entry_point_abi = #spirv.entry_point_abi<>
# CHECK-NOT: func.call
# CHECK-DAG: gpu.global_id  y
# CHECK-DAG: gpu.global_id  x
# CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
# CHECK: gpu.return

# LINALG: // xpuc: kernel transpose_tile {{.*}} has no linalg stage
