# An array expression becomes one func.func whose arguments are flat memrefs
# and index values, holding one scf.parallel over the elements.
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("float32[::1](float32[::1], float32[::1], float32[::1])")
def fma(a, b, c):
    return a * b + c

# CHECK: // xpuc: function fma signature
# CHECK-SAME: (array(float32, 1d, C), array(float32, 1d, C), array(float32, 1d, C))
# CHECK-SAME: parfor fma_parfor0
# CHECK-NEXT: module {
# CHECK-NEXT: func.func @fma_parfor0(%[[OUT:arg[0-9]+]]: memref<?xf32>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[A:arg[0-9]+]]: memref<?xf32>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[B:arg[0-9]+]]: memref<?xf32>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[C:arg[0-9]+]]: memref<?xf32>, %{{arg[0-9]+}}: index, %[[N:arg[0-9]+]]: index)
# CHECK: scf.parallel (%[[I:arg[0-9]+]]) = (%c0) to (%[[N]]) step (%c1) {
# CHECK: %[[X:[0-9]+]] = memref.load %[[A]][%{{[0-9]+}}] : memref<?xf32>
# CHECK: %[[Y:[0-9]+]] = memref.load %[[B]][%{{[0-9]+}}] : memref<?xf32>
# CHECK-NEXT: %[[P:[0-9]+]] = arith.mulf %[[X]], %[[Y]] : f32
# CHECK: %[[Z:[0-9]+]] = memref.load %[[C]][%{{[0-9]+}}] : memref<?xf32>
# CHECK-NEXT: %[[S:[0-9]+]] = arith.addf %[[P]], %[[Z]] : f32
# CHECK: memref.store %[[S]], %[[OUT]][%{{[0-9]+}}] : memref<?xf32>
# CHECK-NEXT: scf.reduce
# CHECK-NOT: gpu.
