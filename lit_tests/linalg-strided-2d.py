# A 2-D 'A' array has a stride per dimension: offset = i * s0 + j * s1, where
# a C array's offset is i * d1 + j. The body runs in two versions: with 1 for
# the innermost stride when it is 1 (a slice of rows; the device then reads
# neighbouring elements in neighbouring work-items), with s1 otherwise. The
# gpu stage splits the kernel at that branch (passes/unswitch.py): the host
# launches the copy for unit strides when the argument holding s1 is 1.
# RUN: %xpuc compile %s --emit linalg | filecheck %s
# RUN: %xpuc compile %s --emit gpu | filecheck %s --check-prefix=GPU

import xpuc


@xpuc.jit("float32[:, ::1](float32[:, :])")
def twice(a):
    return a * a

# CHECK: // xpuc: function twice signature (array(float32, 2d, A))
# CHECK: func.func @twice_parfor0(%{{arg[0-9]+}}: memref<?xf32>,
# CHECK-SAME: %[[A:arg[0-9]+]]: memref<?xf32>, %{{arg[0-9]+}}: index, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[S0:arg[0-9]+]]: index, %[[S1:arg[0-9]+]]: index
# CHECK: scf.parallel (%{{arg[0-9]+}}, %{{arg[0-9]+}})
# CHECK-NEXT: %[[ONE:c1[_0-9]*]] = arith.constant 1 : index
# CHECK-NEXT: %[[UNIT:[0-9]+]] = arith.cmpi eq, %[[S1]], %[[ONE]] : index
# CHECK-NEXT: scf.if %[[UNIT]] {
# CHECK: %[[I:[0-9]+]] = arith.index_castui %{{[0-9]+}} : i64 to index
# CHECK-NEXT: %[[J:[0-9]+]] = arith.index_castui %{{[0-9]+}} : i64 to index
# CHECK-NEXT: %[[X:[0-9]+]] = arith.muli %[[I]], %[[S0]] : index
# CHECK-NEXT: %[[Y:[0-9]+]] = arith.muli %[[J]], %[[ONE]] : index
# CHECK-NEXT: %[[OFF:[0-9]+]] = arith.addi %[[X]], %[[Y]] : index
# CHECK-NEXT: memref.load %[[A]][%[[OFF]]] : memref<?xf32>
# CHECK: } else {
# CHECK: %[[I:[0-9]+]] = arith.index_castui %{{[0-9]+}} : i64 to index
# CHECK-NEXT: %[[J:[0-9]+]] = arith.index_castui %{{[0-9]+}} : i64 to index
# CHECK-NEXT: %[[X:[0-9]+]] = arith.muli %[[I]], %[[S0]] : index
# CHECK-NEXT: %[[Y:[0-9]+]] = arith.muli %[[J]], %[[S1]] : index
# CHECK-NEXT: %[[OFF:[0-9]+]] = arith.addi %[[X]], %[[Y]] : index
# CHECK-NEXT: memref.load %[[A]][%[[OFF]]] : memref<?xf32>

# GPU: gpu.func @twice_parfor0_kernel(%[[K1:arg0]]: index,
# GPU-SAME: xpuc.unit_arguments = array<i64: 0>, xpuc.unit_variant = "twice_parfor0_kernel_unit"
# GPU-NOT: scf.if
# GPU: arith.muli %{{.*}}, %[[K1]] : index
# GPU: gpu.func @twice_parfor0_kernel_unit(
# GPU-NOT: scf.if
# GPU-NOT: %[[K1]] : index
# GPU: gpu.return
