# Integer comparisons are signed for signed types, unsigned for unsigned ones.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit(["boolean[::1](int32[::1], int32[::1])", "boolean[::1](uint32[::1], uint32[::1])"])
def greater_equal(a, b):
    return a >= b

# CHECK: // xpuc: function greater_equal signature (array(int32, 1d, C), array(int32, 1d, C))
# CHECK: arith.cmpi sge, %{{[0-9]+}}, %{{[0-9]+}} : i32
# CHECK: // xpuc: function greater_equal signature (array(uint32, 1d, C), array(uint32, 1d, C))
# CHECK: arith.cmpi uge, %{{[0-9]+}}, %{{[0-9]+}} : i32
