# The same functions on float64 stay f64; log and tanh too.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numpy as np

import xpuc


@xpuc.jit("float64[::1](float64[::1])")
def f(x):
    return np.log(x) + np.tanh(x)

# CHECK: func.func @f_parfor0(
# CHECK-DAG: math.log %{{[0-9]+}} : f64
# CHECK-DAG: math.tanh %{{[0-9]+}} : f64
# CHECK: arith.addf %{{[0-9]+}}, %{{[0-9]+}} : f64
