# An if/else inside a prange body is refused (for now) with the line of the
# branch, as file:line: on stderr, no traceback, and exit status 1.
# RUN: not %xpuc compile %s --emit linalg 2>&1 | filecheck %s

import numba
import xpuc


@xpuc.jit("void(float64[::1], float64[::1])")
def absolute(a, out):
    for i in numba.prange(a.shape[0]):
        # CHECK: error-control-flow.py:[[# @LINE + 1]]: control flow (if/else, loops) in a parfor body
        if a[i] > 0:
            out[i] = a[i]
        else:
            out[i] = -a[i]

# CHECK-NOT: Traceback
# CHECK-NOT: xpuc: function
