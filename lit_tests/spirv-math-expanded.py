# exp2, trunc and cbrt have no SPIR-V lowering in MLIR: xpuc expands them into
# ops that do (pow; floor of fabs with the sign copied back, by bit
# operations; pow plus a Newton step).
# RUN: %xpuc compile %s --emit spirv | filecheck %s

import numpy as np

import xpuc


@xpuc.jit("float64[::1](float64[::1])")
def exp2(x):
    return np.exp2(x)


@xpuc.jit("float64[::1](float64[::1])")
def trunc(x):
    return np.trunc(x)


@xpuc.jit("float32[::1](float32[::1])")
def cbrt(x):
    return np.cbrt(x)

# CHECK-LABEL: // xpuc: function exp2
# CHECK: %[[X:[0-9]+]] = spirv.Load "CrossWorkgroup"
# CHECK: spirv.CL.pow %{{cst_f64(_[0-9]+)?}}, %[[X]] : f64
# CHECK-LABEL: // xpuc: function trunc
# CHECK: %[[X:[0-9]+]] = spirv.Load "CrossWorkgroup"
# CHECK-NEXT: %[[ABS:[0-9]+]] = spirv.CL.fabs %[[X]] : f64
# CHECK-NEXT: %[[FLOOR:[0-9]+]] = spirv.CL.floor %[[ABS]] : f64
# CHECK: %[[FBITS:[0-9]+]] = spirv.Bitcast %[[FLOOR]] : f64 to i64
# CHECK-NEXT: %[[XBITS:[0-9]+]] = spirv.Bitcast %[[X]] : f64 to i64
# CHECK-NEXT: %[[MAG:[0-9]+]] = spirv.BitwiseAnd %[[FBITS]], %{{cst9223372036854775807_i64}}
# CHECK-NEXT: %[[SIGN:[0-9]+]] = spirv.BitwiseAnd %[[XBITS]], %{{cst-9223372036854775808_i64}}
# CHECK-NEXT: spirv.BitwiseOr %[[MAG]], %[[SIGN]] : i64
# CHECK-LABEL: // xpuc: function cbrt
# CHECK: %[[ABS:[0-9]+]] = spirv.CL.fabs %{{[0-9]+}} : f32
# CHECK: %[[ROOT:[0-9]+]] = spirv.CL.pow %[[ABS]], %{{cst_f32(_[0-9]+)?}} : f32
# CHECK: %[[SQUARE:[0-9]+]] = spirv.FMul %[[ROOT]], %[[ROOT]] : f32
# CHECK-NEXT: spirv.FDiv %[[ABS]], %[[SQUARE]] : f32
# CHECK-NOT: math.
