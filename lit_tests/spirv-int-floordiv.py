# floordivsi has no SPIR-V op: arith-expand rewrites it as SDiv, then subtracts
# one when the division was inexact and the operands' signs differ; a zero
# divisor is replaced by 1 and the result by 0.
# RUN: %xpuc compile %s --emit spirv | filecheck %s

import xpuc


@xpuc.jit("int64[::1](int64[::1], int64[::1])")
def floordiv(a, b):
    return a // b

# CHECK: %[[A:[0-9]+]] = spirv.Load "CrossWorkgroup" %{{[0-9]+}} : i64
# CHECK: %[[B:[0-9]+]] = spirv.Load "CrossWorkgroup" %{{[0-9]+}} : i64
# CHECK-NEXT: %[[BYZERO:[0-9]+]] = spirv.IEqual %[[B]], %{{cst0_i64}} : i64
# CHECK-NEXT: %[[SAFE:[0-9]+]] = spirv.Select %[[BYZERO]], %{{cst1_i64}}, %[[B]] : i1, i64
# CHECK-NEXT: %[[Q:[0-9]+]] = spirv.SDiv %[[A]], %[[SAFE]] : i64
# CHECK-NEXT: %[[P:[0-9]+]] = spirv.IMul %[[Q]], %[[SAFE]] : i64
# CHECK-NEXT: %[[INEXACT:[0-9]+]] = spirv.INotEqual %[[A]], %[[P]] : i64
# CHECK: %[[ANEG:[0-9]+]] = spirv.SLessThan %[[A]], %{{cst0_i64(_[0-9]+)?}} : i64
# CHECK-NEXT: %[[BNEG:[0-9]+]] = spirv.SLessThan %[[SAFE]], %{{cst0_i64(_[0-9]+)?}} : i64
# CHECK-NEXT: %[[SIGNS:[0-9]+]] = spirv.LogicalNotEqual %[[ANEG]], %[[BNEG]] : i1
# CHECK-NEXT: %[[FIX:[0-9]+]] = spirv.LogicalAnd %[[INEXACT]], %[[SIGNS]] : i1
# CHECK: %[[DOWN:[0-9]+]] = spirv.IAdd %[[Q]], %{{cst-1_i64}} : i64
# CHECK-NEXT: %[[FLOOR:[0-9]+]] = spirv.Select %[[FIX]], %[[DOWN]], %[[Q]] : i1, i64
# CHECK-NEXT: spirv.Select %[[BYZERO]], %{{cst0_i64}}, %[[FLOOR]] : i1, i64
# CHECK-NOT: floordivsi
