# print() in a prange body and in a kernel: one gpu.printf per call (items
# joined by spaces, the line's newline in the format, small integers widened
# to int, a bool's text chosen by an scf.if), lowered to OpenCL's printf with
# the format a constant string of the module.
# RUN: %xpuc compile %s --emit gpu | filecheck %s --check-prefix=GPU
# RUN: %xpuc compile %s --emit spirv | filecheck %s

import numba

import xpuc


@xpuc.jit("void(float64[::1])")
def rows(a):
    for i in numba.prange(a.shape[0]):
        print("row", i, a[i])


@xpuc.kernel("void(int16[::1], boolean[::1])")
def flags(a, b):
    i = xpuc.get_global_id(0)
    print(a[i], b[i])

# GPU: gpu.func @rows_parfor0
# GPU: gpu.printf "row %ld %g\0A", %{{.*}}, %{{.*}} : i64, f64

# GPU: gpu.func @flags
# GPU: %[[WIDE:.*]] = arith.extsi %{{.*}} : i16 to i32
# GPU: scf.if
# GPU-NEXT: gpu.printf "%d True\0A", %[[WIDE]] : i32
# GPU: } else {
# GPU-NEXT: gpu.printf "%d False\0A", %[[WIDE]] : i32

# CHECK: spirv.SpecConstantComposite @printfMsg0_scc
# CHECK: spirv.GlobalVariable @printfMsg0 initializer(@printfMsg0_scc) {Constant} : !spirv.ptr<!spirv.array<12 x i8>, UniformConstant>
# CHECK: spirv.func @rows_parfor0
# CHECK: spirv.CL.printf %{{.*}} %{{.*}}, %{{.*}} : !spirv.ptr<i8, UniformConstant>, i64, f64 -> i32
