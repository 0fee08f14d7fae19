# Only functions with explicit signatures can be compiled ahead of time: one
# without is named in a note; a file with none at all is an error.
# RUN: not %xpuc compile %s --emit linalg 2>&1 | filecheck %s

import xpuc


# CHECK: error-no-signatures.py:[[# @LINE + 1]]: note: lazy has no explicit signatures, not compiled
@xpuc.jit
def lazy(a):
    return a + 1

# CHECK: error-no-signatures.py: no xpuc.jit function with explicit signatures to compile
