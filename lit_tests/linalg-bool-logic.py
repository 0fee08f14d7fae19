# Boolean arrays hold one byte per element: a load is compared with 0 to give
# an i1, ~ is an xor with true, and the i1 result is widened back to i8.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("boolean[::1](boolean[::1], boolean[::1])")
def logic(p, q):
    return p & ~q

# CHECK: func.func @logic_parfor0(%[[OUT:arg[0-9]+]]: memref<?xi8>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[P:arg[0-9]+]]: memref<?xi8>, %{{arg[0-9]+}}: index, %[[Q:arg[0-9]+]]: memref<?xi8>
# CHECK: %[[PB:[0-9]+]] = memref.load %[[P]][%{{[0-9]+}}] : memref<?xi8>
# CHECK: %[[PT:[0-9]+]] = arith.cmpi ne, %[[PB]], %{{c0_i8(_[0-9]+)?}} : i8
# CHECK: %[[QB:[0-9]+]] = memref.load %[[Q]][%{{[0-9]+}}] : memref<?xi8>
# CHECK: %[[QT:[0-9]+]] = arith.cmpi ne, %[[QB]], %{{c0_i8(_[0-9]+)?}} : i8
# CHECK: %[[TRUE:true(_[0-9]+)?]] = arith.constant true
# CHECK-NEXT: %[[NQ:[0-9]+]] = arith.xori %[[QT]], %[[TRUE]] : i1
# CHECK-NEXT: %[[R:[0-9]+]] = arith.andi %[[PT]], %[[NQ]] : i1
# CHECK: %[[RB:[0-9]+]] = arith.extui %[[R]] : i1 to i8
# CHECK-NEXT: memref.store %[[RB]], %[[OUT]][%{{[0-9]+}}] : memref<?xi8>
