# linalg stage of a reduction into an array in a prange body (acc += a[i]):
# acc stays an array argument (no partials), and each iteration walks its
# elements in an scf.for, adding a[i]'s to them atomically: an AtomicIAdd for
# int64, a compare-exchange loop for float64.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

from numba import prange

import xpuc


@xpuc.jit(["void(int64[:, ::1], int64[::1])", "void(float64[:, ::1], float64[::1])"])
def column_sums(a, acc):
    for i in prange(a.shape[0]):
        acc += a[i]

# CHECK: // xpuc: function column_sums signature (array(int64, 2d, C), array(int64, 1d, C))
# CHECK: func.func @column_sums_parfor0(
# CHECK: scf.for
# CHECK: spirv.AtomicIAdd <Device> <None> %{{.*}} : !spirv.ptr<i64, CrossWorkgroup>

# CHECK: // xpuc: function column_sums signature (array(float64, 2d, C), array(float64, 1d, C))
# CHECK: func.func @column_sums_parfor0(
# CHECK: scf.for
# CHECK: arith.addf
# CHECK: spirv.AtomicCompareExchange <Device> <None> <None>
