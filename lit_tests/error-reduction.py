# A reduction into a bool is refused, naming the variable and the loop's line.
# RUN: not %xpuc compile %s 2>&1 | filecheck %s

import numba

import xpuc


@xpuc.jit("boolean(float64[::1])")
def any_positive(a):
    found = False
    # CHECK: error-reduction.py:[[# @LINE + 1]]: reduction into found of type bool
    for i in numba.prange(a.shape[0]):
        found = max(found, a[i] > 0)
    return found

# CHECK-NOT: Traceback
