# float64 code for a GPU without fp64 (--arch dg2) is refused before any
# build, naming fp64, the architecture and the line; for pvc it compiles.
# RUN: not %xpuc compile %s --arch dg2 --emit spirv 2>&1 | filecheck %s
# RUN: %xpuc compile %s --arch pvc --emit spirv | filecheck %s --check-prefix=PVC

import numba
import numpy as np

import xpuc


@xpuc.jit("(float32[::1],)")
def widened(a):
    for i in numba.prange(a.shape[0]):
        a[i] = np.float64(a[i]) * 3.0

# CHECK: error-fp64-arch.py:14: the kernel uses f64 (a value widened to f64
# CHECK-SAME: at {{.*}}error-fp64-arch.py:15), but dg2 has no fp64
# CHECK-SAME: (while lowering to SPIR-V)
# CHECK-NOT: Traceback
# PVC: spirv.module @__spv__widened_parfor0_kernel Physical64 OpenCL
# PVC-SAME: requires #spirv.vce<v1.0, [{{.*}}Float64{{.*}}], []>
