# A reduction in a prange is refused, naming the variable and the loop's line.
# RUN: not %xpuc compile %s 2>&1 | filecheck %s

import numba

import xpuc


@xpuc.jit("float64(float64[::1])")
def total(a):
    s = 0.0
    # CHECK: error-reduction.py:[[# @LINE + 1]]: reduction into s{{[.0-9]*}} in a parfor
    for i in numba.prange(a.shape[0]):
        s += a[i]
    return s

# CHECK-NOT: Traceback
