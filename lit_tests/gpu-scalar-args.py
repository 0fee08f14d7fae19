# Scalars reach the kernel as launch arguments of their own type; an array's
# dimension the kernel does not need is not passed (nor is the loop's extent:
# one work-item per iteration needs no bounds check).
# RUN: %xpuc compile %s --emit gpu | filecheck %s
import xpuc


@xpuc.jit("float64[::1](float64[::1], float64[::1], float64)")
def axpy(x, y, a):
    return a * x + y

# CHECK: func.func @axpy_parfor0(%[[OUT:arg[0-9]+]]: memref<?xf64>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[A:arg[0-9]+]]: f64, %[[X:arg[0-9]+]]: memref<?xf64>, %{{arg[0-9]+}}: index,
# CHECK-SAME: %[[Y:arg[0-9]+]]: memref<?xf64>, %{{arg[0-9]+}}: index, %[[N:arg[0-9]+]]: index)
# CHECK: gpu.launch_func
# CHECK-SAME: args(%[[X]] : memref<?xf64>, %[[A]] : f64, %[[Y]] : memref<?xf64>,
# CHECK-SAME: %[[OUT]] : memref<?xf64>, %{{c0_[0-9]+}} : index)
# CHECK: gpu.func @axpy_parfor0_kernel(%{{arg[0-9]+}}: memref<?xf64>, %[[KA:arg[0-9]+]]: f64,
# CHECK: arith.mulf %[[KA]], %{{[0-9]+}} : f64
