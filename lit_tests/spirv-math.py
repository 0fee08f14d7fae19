# Math functions become OpenCL extended instructions (spirv.CL.*), never the
# GLSL ones a Vulkan target would use.
# RUN: %xpuc compile %s --emit spirv | filecheck %s
# RUN: %xpuc compile %s --emit spirv | filecheck %s --check-prefix=NOGL

import math

import numba
import numpy as np

import xpuc


@xpuc.jit("void(float32[::1], float32[::1])")
def waves(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = math.sin(x[i]) + np.cos(x[i]) * math.exp(x[i]) + math.sqrt(x[i])


@xpuc.jit("float64[::1](float64[::1])")
def logs(x):
    return np.log(x) + np.tanh(x) + np.abs(x) + np.floor(x)

# CHECK-LABEL: // xpuc: function waves
# CHECK: %[[X:[0-9]+]] = spirv.Load "CrossWorkgroup" %{{[0-9]+}} : f32
# CHECK-NEXT: spirv.CL.sin %[[X]] : f32
# CHECK-NEXT: spirv.CL.cos %[[X]] : f32
# CHECK-NEXT: spirv.CL.exp %[[X]] : f32
# CHECK: spirv.CL.sqrt %[[X]] : f32
# CHECK-LABEL: // xpuc: function logs
# CHECK-DAG: spirv.CL.log %{{[0-9]+}} : f64
# CHECK-DAG: spirv.CL.tanh %{{[0-9]+}} : f64
# CHECK-DAG: spirv.CL.fabs %{{[0-9]+}} : f64
# CHECK-DAG: spirv.CL.floor %{{[0-9]+}} : f64
# no GLSL extended instructions anywhere in the output
# NOGL-NOT: GL
