"""Imported by compile-imports.py: its xpuc.jit function is not that file's
own, so compiling that file does not compile it."""

import xpuc

SIGNATURE = "float64[::1](float64[::1])"


@xpuc.jit(SIGNATURE)
def imported(a):
    return a * 3.0
