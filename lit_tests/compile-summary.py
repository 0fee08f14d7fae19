# Without --emit, one line per function says what was compiled, in definition
# order, with the device (the default one: opencl:cpu here, see lit.cfg.py).
# RUN: %xpuc compile %s | filecheck %s
# An explicit --device gives the same.
# RUN: %xpuc compile %s --device opencl:cpu | filecheck %s

import numpy as np

import xpuc


@xpuc.jit(["float32[::1](float32[::1], float32[::1])",
           "float64[::1](float64[::1], float64[::1])"])
def hypot2(a, b):
    return a * a + b * b


@xpuc.jit("float64[::1](float64[::1])")
def two_loops(a):
    b = np.sin(a)
    # a sequential loop between the two keeps Numba from fusing them
    for i in range(1, b.shape[0]):
        b[i] += b[i - 1]
    return b * 2.0


@xpuc.jit("float64(float64, float64)")
def scalar_only(x, y):
    return x + y

# CHECK: hypot2: 2 signatures, 2 kernels for opencl:cpu:0
# CHECK-SAME: (hypot2_parfor0_kernel, hypot2_parfor0_kernel)
# CHECK-NEXT: two_loops: 1 signature, 2 kernels for opencl:cpu:0
# CHECK-SAME: (two_loops_parfor0_kernel, two_loops_parfor1_kernel)
# CHECK-NEXT: scalar_only: 1 signature, 0 kernels for opencl:cpu:0
# CHECK-NOT: {{.}}
