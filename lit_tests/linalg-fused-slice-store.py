# A slice assignment of an array expression is one parfor: the stencil's four
# views of grid loaded, the sum scaled by 0.25 (a scalar argument of the
# kernel) and stored into the view of other. No temporary, no second parfor
# copying it into the view; the swapped pair made by the function needs no
# overlap check, so no staged copy of the store is compiled either.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("float64[:, ::1](float64[:, ::1], int64)")
def jacobi(grid, steps):
    other = grid * 1.0
    for _ in range(steps):
        other[1:-1, 1:-1] = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                    + grid[1:-1, :-2] + grid[1:-1, 2:])
        grid, other = other, grid
    return grid

# CHECK-LABEL: func.func @jacobi_parfor1(
# CHECK-SAME: %[[SCALE:arg[0-9]+]]: f64
# CHECK: scf.parallel
# CHECK: memref.load
# CHECK: memref.load
# CHECK: arith.addf
# CHECK: memref.load
# CHECK: arith.addf
# CHECK: memref.load
# CHECK: %[[SUM:[0-9]+]] = arith.addf
# CHECK: %[[V:[0-9]+]] = arith.mulf %[[SCALE]], %[[SUM]] : f64
# CHECK: memref.store %[[V]]
# CHECK-NOT: func.func @jacobi_parfor2
