# A sum in a prange: the parallel loop runs over a fixed 4096 work-items, as
# chunks by lanes (lanes innermost, so on x; as many as the device's vector
# width, 8 with AVX2, 16 with AVX-512). Work-item (chunk, lane) runs an
# scf.for over the rows of L iterations of its chunk, reading row * L + lane
# and carrying the running sum from 0 with the rounding error it has not taken
# in yet (a compensated sum); chunk 0 adds the last, partial row in an scf.if;
# each stores its partial result, the sum less its error, for the host to
# combine (in each branch of the scf.if: the OpenCL CPU device's vectorizer
# miscompiled results yielded by it).
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numba

import xpuc


@xpuc.jit("float64(float64[::1])")
def total(a):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        s += a[i]
    return s

# CHECK-LABEL: func.func @total_parfor0(
# CHECK-SAME: %[[PARTIALS:arg[0-9]+]]: memref<?xf64>)
# CHECK: %[[C:c[0-9]+[_0-9]*]] = arith.constant {{256|512}} : index
# CHECK-NEXT: %[[L:c[0-9]+[_0-9]*]] = arith.constant {{16|8}} : index
# CHECK: %[[ZERO:cst[_0-9]*]] = arith.constant 0.000000e+00 : f64
# CHECK: scf.parallel (%[[LANE:arg[0-9]+]], %[[CHUNK:arg[0-9]+]]) =
# CHECK: %[[ROWS:[0-9]+]] = arith.divui %{{[0-9]+}}, %[[L]] : index
# CHECK-NEXT: %[[PER:[0-9]+]] = arith.ceildivui %[[ROWS]], %[[C]] : index
# CHECK-NEXT: %[[FIRST:[0-9]+]] = arith.muli %[[CHUNK]], %[[PER]] : index
# CHECK: %[[SUMS:[0-9]+]]:2 = scf.for %[[ROW:arg[0-9]+]] = %[[FIRST]] to %{{[0-9]+}} step
# CHECK-SAME: iter_args(%[[SUM:arg[0-9]+]] = %[[ZERO]], %[[ERROR:arg[0-9]+]] = %{{cst[_0-9]*}}) -> (f64, f64)
# CHECK-NEXT: %[[START:[0-9]+]] = arith.muli %[[ROW]], %[[L]] : index
# CHECK-NEXT: arith.addi %[[START]], %[[LANE]] : index
# CHECK: %[[X:[0-9]+]] = memref.load
# CHECK-NEXT: %[[TERM:[0-9]+]] = arith.addf %[[ZERO]], %[[X]] : f64
# CHECK-NEXT: %[[CORRECTED:[0-9]+]] = arith.subf %[[TERM]], %[[ERROR]] : f64
# CHECK-NEXT: %[[NEXT:[0-9]+]] = arith.addf %[[SUM]], %[[CORRECTED]] : f64
# CHECK-NEXT: %[[ADDED:[0-9]+]] = arith.subf %[[NEXT]], %[[SUM]] : f64
# CHECK-NEXT: %[[LOST:[0-9]+]] = arith.subf %[[ADDED]], %[[CORRECTED]] : f64
# CHECK: %[[KEPT:[0-9]+]] = arith.select %{{[0-9]+}}, %[[LOST]], %{{cst[_0-9]*}} : f64
# CHECK-NEXT: scf.yield %[[NEXT]], %[[KEPT]] : f64, f64
# CHECK: %[[BASE:[0-9]+]] = arith.muli %[[CHUNK]], %[[L]] : index
# CHECK-NEXT: %[[ITEM:[0-9]+]] = arith.addi %[[BASE]], %[[LANE]] : index
# CHECK-NEXT: scf.if
# CHECK: memref.store %{{[0-9]+}}, %[[PARTIALS]][%[[ITEM]]] : memref<?xf64>
# CHECK-NEXT: } else {
# CHECK-NEXT: %[[PARTIAL:[0-9]+]] = arith.subf %[[SUMS]]#0, %[[SUMS]]#1 : f64
# CHECK-NEXT: memref.store %[[PARTIAL]], %[[PARTIALS]][%[[ITEM]]] : memref<?xf64>
# CHECK-NOT: scf.while
