# ptx stage of 2-D parfors: a kernel whose accesses move by one element as x
# (the innermost index) does, a stencil's, gets the global that asks the CUDA
# runtime for blocks a warp wide along x; its copy for strided arrays and a
# kernel reading rows along x (pairwise distances) get none
# (passes/contiguous_x.py).
# RUN: %xpuc compile %s --arch sm_90 --emit ptx | filecheck %s

import math

import numba

import xpuc


@xpuc.jit("void(float64[:, ::1], float64[:, ::1])")
def stencil(grid, out):
    out[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                              + grid[1:-1, :-2] + grid[1:-1, 2:])


@xpuc.jit("void(float32[:, ::1], float32[:, ::1])")
def pairwise(points, out):
    for i in numba.prange(points.shape[0]):
        for j in range(points.shape[0]):
            total = 0.0
            for k in range(points.shape[1]):
                d = points[i, k] - points[j, k]
                total += d * d
            out[i, j] = math.sqrt(total)

# CHECK-LABEL: parfor stencil_parfor0
# CHECK-NOT: .visible .global {{.*}} stencil_parfor0_kernel__xpuc_x_contiguous
# CHECK: .visible .global .align 1 .u8 stencil_parfor0_kernel_unit__xpuc_x_contiguous = 1;
# CHECK: .entry stencil_parfor0_kernel(
# CHECK: .entry stencil_parfor0_kernel_unit(
# CHECK-LABEL: parfor pairwise_parfor0
# CHECK-NOT: __xpuc_x_contiguous
# CHECK: .entry pairwise_parfor0_kernel(
