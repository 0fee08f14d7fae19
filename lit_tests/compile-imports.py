# The compiled file can import modules beside it (its directory is on
# sys.path); only the xpuc.jit functions it defines are compiled, not those it
# imports; an `if __name__ == "__main__"` block does not run.
# RUN: %xpuc compile %s | filecheck %s

from Inputs.shared import SIGNATURE, imported  # noqa: F401

import xpuc


@xpuc.jit(SIGNATURE)
def own(a):
    return a + 1.0


if __name__ == "__main__":
    print("MAIN RAN")

# CHECK-NOT: imported
# CHECK: own: 1 signature, 1 kernel for opencl:cpu:0 (own_parfor0_kernel)
# CHECK-NOT: imported
# CHECK-NOT: MAIN RAN
