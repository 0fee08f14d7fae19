# Python's // and % on signed integers round toward minus infinity: floordivsi,
# and a truncated remainder moved to the divisor's sign when they differ. A
# zero divisor gives 0, as in NumPy, and the division runs on a divisor of 1.
# The remainder is a - (a / b) * b, not remsi (whose SPIR-V lowering takes the
# magnitude of the smallest integer, which has none); a divisor of -1, whose
# quotient could overflow, is taken as 1 too (its remainder is 0).
# RUN: %xpuc compile %s --emit linalg | filecheck %s

import xpuc


@xpuc.jit("int64[::1](int64[::1], int64[::1])")
def floordiv(a, b):
    return a // b


@xpuc.jit("int64[::1](int64[::1], int64[::1])")
def modulo(a, b):
    return a % b

# CHECK-LABEL: // xpuc: function floordiv
# CHECK: %[[A:[0-9]+]] = memref.load
# CHECK: %[[B:[0-9]+]] = memref.load
# CHECK: %[[ZERO:.+]] = arith.cmpi eq, %[[B]], %c0_i64 : i64
# CHECK-NEXT: %[[SAFE:[0-9]+]] = arith.select %[[ZERO]], %c1_i64, %[[B]] : i64
# CHECK-NEXT: %[[Q:[0-9]+]] = arith.floordivsi %[[A]], %[[SAFE]] : i64
# CHECK-NEXT: arith.select %[[ZERO]], %c0_i64, %[[Q]] : i64
# CHECK-NOT: arith.divsi
# CHECK-LABEL: // xpuc: function modulo
# CHECK: %[[A:[0-9]+]] = memref.load
# CHECK: %[[B:[0-9]+]] = memref.load
# CHECK: %[[BYZERO:[0-9]+]] = arith.cmpi eq, %[[B]], %c0_i64 : i64
# CHECK-NEXT: %c-1_i64 = arith.constant -1 : i64
# CHECK-NEXT: %[[BYMINUS1:[0-9]+]] = arith.cmpi eq, %[[B]], %c-1_i64 : i64
# CHECK-NEXT: %[[EXACT:[0-9]+]] = arith.ori %[[BYZERO]], %[[BYMINUS1]] : i1
# CHECK-NEXT: %[[SAFE:[0-9]+]] = arith.select %[[EXACT]], %c1_i64, %[[B]] : i64
# CHECK-NEXT: %[[Q:[0-9]+]] = arith.divsi %[[A]], %[[SAFE]] : i64
# CHECK-NEXT: %[[QB:[0-9]+]] = arith.muli %[[Q]], %[[SAFE]] : i64
# CHECK-NEXT: %[[REM:[0-9]+]] = arith.subi %[[A]], %[[QB]] : i64
# CHECK-NEXT: %[[R:[0-9]+]] = arith.select %[[EXACT]], %c0_i64, %[[REM]] : i64
# CHECK: %[[RNEG:[0-9]+]] = arith.cmpi slt, %[[R]], %[[Z:c0_i64_0]] : i64
# CHECK-NEXT: %[[BNEG:[0-9]+]] = arith.cmpi slt, %[[B]], %[[Z]] : i64
# CHECK-NEXT: %[[DIFF:[0-9]+]] = arith.xori %[[RNEG]], %[[BNEG]] : i1
# CHECK-NEXT: %[[NZ:[0-9]+]] = arith.cmpi ne, %[[R]], %[[Z]] : i64
# CHECK-NEXT: %[[FIX:[0-9]+]] = arith.andi %[[NZ]], %[[DIFF]] : i1
# CHECK-NEXT: %[[SUM:[0-9]+]] = arith.addi %[[R]], %[[B]] : i64
# CHECK-NEXT: arith.select %[[FIX]], %[[SUM]], %[[R]] : i64
# CHECK-NOT: arith.remsi
