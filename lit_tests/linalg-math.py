# math and NumPy functions of a float become math dialect ops of its width.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import math

import numba
import numpy as np

import xpuc


@xpuc.jit("void(float32[::1], float32[::1])")
def waves(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = math.sin(x[i]) + np.cos(x[i]) * math.exp(x[i]) + math.sqrt(x[i])

# CHECK: func.func @waves_parfor0(
# CHECK: scf.parallel
# CHECK: math.sin %{{[0-9]+}} : f32
# CHECK: math.cos %{{[0-9]+}} : f32
# CHECK: math.exp %{{[0-9]+}} : f32
# CHECK: arith.mulf
# CHECK: arith.addf
# CHECK: math.sqrt %{{[0-9]+}} : f32
# CHECK: arith.addf
# CHECK: memref.store
