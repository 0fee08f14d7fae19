# gpu stage: lift-cf-to-scf makes a counted inner loop an scf.while, whose
# index int-range-optimizations gives no range; counted_loops.py makes it an
# scf.for, whose index ranges over its bounds. From a start that cannot be
# negative (a work-item's index, a block of a constant size) the loop's
# subscripts keep no wraparound; from one that may be negative they keep it.
# An explicit kernel's loops are counted too.
# RUN: %xpuc compile %s --emit gpu | filecheck %s

import numba

import xpuc

BLOCK = 1024


@xpuc.jit("void(float64[::1], float64[::1])")
def suffix_sums(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for j in range(i, a.shape[0]):
            total += a[j]
        out[i] = total


@xpuc.jit("void(float64[::1], float64[::1])")
def blocks(a, out):
    for block in numba.prange((a.shape[0] + BLOCK - 1) // BLOCK):
        for i in range(block * BLOCK, min(block * BLOCK + BLOCK, a.shape[0])):
            out[i] = 2.0 * a[i]


@xpuc.jit("void(float64[::1], float64[::1])")
def trailing_window(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for j in range(i - 3, i + 1):
            total += a[j]
        out[i] = total


@xpuc.kernel("void(float64[:, ::1], float64[::1])", ndim=1)
def row_sums(a, out):
    i = xpuc.get_global_id(0)
    total = 0.0
    for j in range(a.shape[1]):
        total += a[i, j]
    out[i] = total

# CHECK-LABEL: gpu.func @suffix_sums_parfor0_kernel
# CHECK: %[[ID:global_id_x]] = gpu.global_id x upper_bound 2147483647
# CHECK: %[[START:[0-9]+]] = arith.index_castui %[[ID]] : index to i64
# CHECK: %[[SUM:[0-9]+]] = scf.for %[[J:arg[0-9]+]] = %[[START]] to %{{[0-9]+}} step %c1_i64 iter_args(%{{arg[0-9]+}} = %cst) -> (f64) : i64 {
# CHECK-NOT: arith.select
# CHECK: scf.yield
# CHECK: memref.store %[[SUM]]
# CHECK-NEXT: gpu.return

# CHECK-LABEL: gpu.func @blocks_parfor0_kernel(
# CHECK: scf.for %{{arg[0-9]+}} = %{{[0-9]+}} to %{{[0-9]+}} step %c1_i64 : i64 {
# CHECK-NOT: arith.cmpi slt, %{{[0-9]+}}, %c0 : index
# CHECK: gpu.return

# CHECK-LABEL: gpu.func @trailing_window_parfor0_kernel
# CHECK: scf.for %[[J:arg[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %c1_i64
# CHECK: %[[INDEX:[0-9]+]] = arith.index_cast %[[J]] : i64 to index
# CHECK: %[[NEGATIVE:[0-9]+]] = arith.cmpi slt, %[[INDEX]], %c0 : index
# CHECK: arith.select %[[NEGATIVE]]
# CHECK: gpu.return

# CHECK-LABEL: gpu.func @row_sums
# CHECK: scf.for
# CHECK-NOT: scf.while
# CHECK-NOT: arith.select
# CHECK: gpu.return
