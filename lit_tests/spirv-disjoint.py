# A kernel whose work-items walk rows and which writes one of its arrays gets a
# copy whose arrays are declared disjoint (passes/disjoint.py): the gpu stage
# names the copy on the kernel, the spirv stage decorates the copy's pointers
# Restrict (the serialized module adds FuncParamAttr NoAlias), and the host
# launches the copy when no written array overlaps another argument. A kernel
# that only writes the one array it reads gets no copy.
# RUN: %xpuc compile %s --emit gpu | filecheck %s --check-prefix=GPU
# RUN: %xpuc compile %s --emit spirv | filecheck %s --check-prefix=SPIRV
from numba import prange

import xpuc


@xpuc.jit("void(float64[:, ::1], float64[:, ::1])")
def stencil(a, out):
    for i in prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


@xpuc.jit("void(float64[:, ::1])")
def double_rows(a):
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] *= 2.0

# GPU: gpu.func @stencil_parfor0_kernel(
# GPU-SAME: xpuc.disjoint_variant = "stencil_parfor0_kernel_disjoint"
# GPU: gpu.func @stencil_parfor0_kernel_disjoint(
# GPU-SAME: xpuc.disjoint_args
# GPU: gpu.func @double_rows_parfor0_kernel(
# GPU-NOT: xpuc.disjoint
# GPU-SAME: kernel

# SPIRV: spirv.func @stencil_parfor0_kernel(
# SPIRV-NOT: Restrict
# SPIRV-SAME: "None"
# SPIRV: spirv.func @stencil_parfor0_kernel_disjoint(
# SPIRV-SAME: %{{arg[0-9]+}}: !spirv.ptr<f64, CrossWorkgroup> {spirv.decoration = #spirv.decoration<Restrict>}
# SPIRV-SAME: %{{arg[0-9]+}}: !spirv.ptr<f64, CrossWorkgroup> {spirv.decoration = #spirv.decoration<Restrict>}
# SPIRV: spirv.EntryPoint "Kernel" @stencil_parfor0_kernel,
# SPIRV: spirv.EntryPoint "Kernel" @stencil_parfor0_kernel_disjoint,
# SPIRV: spirv.func @double_rows_parfor0_kernel(
# SPIRV-NOT: Restrict
# SPIRV-NOT: _disjoint
