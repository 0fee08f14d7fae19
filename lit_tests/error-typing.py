# A typing error, found when Numba compiles the explicit signature, is
# reported at the line Numba names, with Numba's explanation.
# RUN: not %xpuc compile %s --emit linalg 2>&1 | filecheck %s

import xpuc


@xpuc.jit("float64[::1](float64[::1])")
def bad(a):
    # CHECK: error-typing.py:[[# @LINE + 1]]: TypingError:
    return a + "one"

# CHECK: No implementation of function
# CHECK-NOT: Traceback
