# Branches and loops in a prange body: the frontend gives the body as blocks
# joined by cf branches with variables in stack slots; the linalg stage turns
# them into scf.if and scf.while with values carried as results, inlined into
# the parallel loop (no branch, slot or call left).
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numba

import xpuc


@xpuc.jit("void(float64[::1], float64[::1])")
def clipped_sum(a, out):
    for i in numba.prange(a.shape[0]):
        total = 0.0
        for _ in range(10):
            if total > a[i]:
                break
            total += 1.0
        out[i] = total

# CHECK-LABEL: func.func @clipped_sum_parfor0(
# CHECK: scf.parallel
# CHECK: scf.while
# CHECK: arith.cmpi slt
# CHECK: scf.if
# CHECK: arith.cmpf ogt
# CHECK: scf.condition
# CHECK: memref.store
# CHECK-NOT: cf.br
# CHECK-NOT: cf.cond_br
# CHECK-NOT: memref.alloca
# CHECK-NOT: func.call
# CHECK-NOT: scf.index_switch
