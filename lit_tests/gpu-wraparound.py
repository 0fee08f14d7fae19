# gpu stage: Numba wraps a negative subscript around (a[i] is a[i + n] for
# i < 0). The runtime launches at most 2^31-1 work-items, so each global id
# carries that upper bound, from which int-range-optimizations drops the
# wraparound of every index that cannot be negative: from a constant start
# of 1, i - 1 and i + 1 of a prange; i and i + 1 of an explicit kernel. From
# a start of -1, i can be negative and keeps its wraparound.
# RUN: %xpuc compile %s --emit gpu | filecheck %s

import numba

import xpuc


@xpuc.jit("void(float64[::1], float64[::1])")
def smooth(a, out):
    for i in numba.prange(1, a.shape[0] - 1):
        out[i] = 0.5 * (a[i - 1] + a[i + 1])


@xpuc.jit("void(float64[::1], float64[::1])")
def shift(a, out):
    for i in numba.prange(-1, a.shape[0] - 1):
        out[i + 1] = a[i]


@xpuc.kernel("void(float64[::1], float64[::1])", ndim=1)
def spread(a, out):
    i = xpuc.get_global_id(0)
    out[i + 1] = a[i]

# CHECK-LABEL: gpu.func @smooth_parfor0_kernel
# CHECK: gpu.global_id x upper_bound 2147483647
# CHECK-NOT: arith.select
# CHECK: gpu.return

# CHECK-LABEL: gpu.func @shift_parfor0_kernel
# CHECK: %[[ID:global_id_x]] = gpu.global_id x upper_bound 2147483647
# CHECK: %[[I:[0-9]+]] = arith.addi %[[ID]], %c-1 : index
# CHECK: %[[NEGATIVE:[0-9]+]] = arith.cmpi slt, %[[I]], %c0 : index
# CHECK: %[[WRAPPED:[0-9]+]] = arith.addi %[[I]], %{{arg[0-9]+}} : index
# CHECK: %[[INDEX:[0-9]+]] = arith.select %[[NEGATIVE]], %[[WRAPPED]], %[[I]] : index
# CHECK: memref.load %{{arg[0-9]+}}[%[[INDEX]]]
# CHECK-NOT: arith.select
# CHECK: gpu.return

# CHECK-LABEL: gpu.func @spread
# CHECK: gpu.global_id x upper_bound 2147483647
# CHECK-NOT: arith.select
# CHECK: gpu.return
