# A reduction into a bool (any: max) is carried as a byte: the value before
# the loop arrives as one (bools travel as bytes), the body gets it back as
# an i1 and gives its result out widened, and the partial results are bytes,
# which the host reads as Numba's bools.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numba

import xpuc


@xpuc.jit("boolean(float64[::1])")
def any_positive(a):
    found = False
    for i in numba.prange(a.shape[0]):
        found = max(found, a[i] > 0)
    return found

# CHECK: func.func @any_positive_parfor0(%[[A:arg[0-9]+]]: memref<?xf64>, {{.*}}%[[FOUND:arg[0-9]+]]: i8, {{.*}}%[[PARTIALS:arg[0-9]+]]: memref<?xi8>)
# CHECK: scf.for {{.*}} iter_args(%[[CARRIED:arg[0-9]+]] = %[[FOUND]]) -> (i8) {
# CHECK: %[[HELD:[0-9]+]] = arith.cmpi ne, %[[CARRIED]], %{{.*}} : i8
# CHECK: %[[POSITIVE:[0-9]+]] = arith.cmpf ogt
# CHECK-NEXT: %[[MORE:[0-9]+]] = arith.cmpi ugt, %[[POSITIVE]], %[[HELD]] : i1
# CHECK-NEXT: %[[MAX:[0-9]+]] = arith.select %[[MORE]], %[[POSITIVE]], %[[HELD]] : i1
# CHECK-NEXT: %[[BYTE:[0-9]+]] = arith.extui %[[MAX]] : i1 to i8
# CHECK-NEXT: scf.yield %[[BYTE]] : i8
# CHECK: memref.store %{{[0-9]+}}, %[[PARTIALS]][%{{[0-9]+}}] : memref<?xi8>
