# A prange whose work-items each walk a row of their own in an inner loop: the
# gpu stage marks the kernel, and on the CPU device (which vectorizes across
# work-items, turning each step of the walk into a gather across rows) the
# spirv stage gives it a VecTypeHint, which leaves it unvectorized across
# work-items. A kernel whose inner loop also reads elements shared by all
# work-items (pairwise distances) keeps its vectorization.
# RUN: %xpuc compile %s --emit gpu | filecheck %s --check-prefix=GPU
# RUN: %xpuc compile %s --emit spirv | filecheck %s --check-prefix=SPIRV
import math

from numba import prange

import xpuc


@xpuc.jit("void(float64[:, ::1], float64[::1])")
def row_norms(a, out):
    for i in prange(a.shape[0]):
        total = 0.0
        for j in range(a.shape[1]):
            total += a[i, j] * a[i, j]
        out[i] = math.sqrt(total)


@xpuc.jit("void(float64[:, ::1], float64[:, ::1])")
def pairwise(points, out):
    for i in prange(points.shape[0]):
        for j in range(points.shape[0]):
            total = 0.0
            for k in range(points.shape[1]):
                d = points[i, k] - points[j, k]
                total += d * d
            out[i, j] = math.sqrt(total)

# GPU: gpu.func @row_norms_parfor0_kernel(
# GPU-SAME: kernel attributes {{.*}}xpuc.walks_rows}
# GPU: gpu.func @pairwise_parfor0_kernel(
# GPU-NOT: xpuc.walks_rows
# GPU-SAME: kernel

# SPIRV: spirv.EntryPoint "Kernel" @row_norms_parfor0_kernel
# SPIRV: spirv.ExecutionMode @row_norms_parfor0_kernel "VecTypeHint", 65538
# SPIRV: spirv.EntryPoint "Kernel" @pairwise_parfor0_kernel
# SPIRV-NOT: "VecTypeHint"
