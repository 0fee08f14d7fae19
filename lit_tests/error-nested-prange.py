# A prange nested in a prange body is refused at the inner loop.
# RUN: not %xpuc compile %s --emit gpu 2>&1 | filecheck %s

import numba

import xpuc


@xpuc.jit("void(float32[:, ::1], float32[:, ::1])")
def copy(src, dst):
    for i in numba.prange(src.shape[0]):
        # CHECK: error-nested-prange.py:[[# @LINE + 1]]: nested parfor (prange inside prange)
        for j in numba.prange(src.shape[1]):
            dst[i, j] = src[i, j]

# CHECK-NOT: Traceback
