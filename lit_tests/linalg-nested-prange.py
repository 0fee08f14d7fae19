# A prange nested in a prange body: the outer loop is the parallel one, the
# inner one runs as a serial loop inside each work-item.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import numba

import xpuc


@xpuc.jit("void(float32[:, ::1], float32[:, ::1])")
def copy(src, dst):
    for i in numba.prange(src.shape[0]):
        for j in numba.prange(src.shape[1]):
            dst[i, j] = src[i, j]

# CHECK-LABEL: func.func @copy_parfor0(
# CHECK: scf.parallel (%[[I:arg[0-9]+]]) =
# CHECK: scf.while
# CHECK: arith.cmpi slt
# CHECK: memref.load
# CHECK: memref.store
# CHECK-NOT: scf.parallel
