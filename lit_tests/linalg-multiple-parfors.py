# Each parfor of a function is a kernel of its own, numbered in order; each
# explicit signature is compiled, in the order given; a function without
# parfors is listed as such.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numpy as np

import xpuc


@xpuc.jit(["float32[::1](float32[::1], float32[::1])",
           "float64[::1](float64[::1], float64[::1])"])
def hypot2(a, b):
    return a * a + b * b


@xpuc.jit("float64(float64, float64)")
def scalar_only(x, y):
    return x + y


@xpuc.jit("float64[::1](float64[::1])")
def two_loops(a):
    b = np.sin(a)
    # a sequential loop between the two keeps Numba from fusing them
    for i in range(1, b.shape[0]):
        b[i] += b[i - 1]
    return b * 2.0

# CHECK: // xpuc: function hypot2 signature (array(float32, 1d, C), array(float32, 1d, C))
# CHECK-SAME: parfor hypot2_parfor0
# CHECK: func.func @hypot2_parfor0({{.*}}memref<?xf32>
# CHECK: // xpuc: function hypot2 signature (array(float64, 1d, C), array(float64, 1d, C))
# CHECK-SAME: parfor hypot2_parfor0
# CHECK: func.func @hypot2_parfor0({{.*}}memref<?xf64>
# CHECK: // xpuc: function scalar_only signature (float64, float64) has no parfors
# CHECK-NOT: func.func
# CHECK: // xpuc: function two_loops signature (array(float64, 1d, C)) parfor two_loops_parfor0
# CHECK: func.func @two_loops_parfor0(
# CHECK: math.sin
# CHECK: // xpuc: function two_loops signature (array(float64, 1d, C)) parfor two_loops_parfor1
# CHECK: func.func @two_loops_parfor1(
# CHECK: arith.mulf
