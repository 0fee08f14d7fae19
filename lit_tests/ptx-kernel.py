# ptx stage of an explicit kernel for an NVIDIA GPU, compiled without one
# (--arch sm_90): its arrays as bare pointers (the counts passed again as a
# pointer for the atomic, as on SPIR-V), then the range's extents in x, y, z,
# which every work-item compares its ids with (the runtime's blocks may run
# past the range), the global size read from them; the atomic is llvm's
# atomicrmw on global memory.
# RUN: %xpuc compile %s --arch sm_90 --emit nvvm | filecheck %s --check-prefix=NVVM
# RUN: %xpuc compile %s --arch sm_90 --emit ptx | filecheck %s

import xpuc


@xpuc.kernel("void(int64[::1], int32[::1])")
def histogram(data, counts):
    xpuc.atomic.add(counts, data[xpuc.get_global_id(0)], xpuc.get_global_size(0))

# NVVM: llvm.func @histogram(%arg0: !llvm.ptr, %arg1: i64, %arg2: !llvm.ptr, %arg3: i64, %[[POINTER:arg4]]: !llvm.ptr, %[[X:arg5]]: i64, %arg6: i64, %arg7: i64)
# NVVM: llvm.icmp "ult" %{{[0-9]+}}, %[[X]] : i64
# NVVM: %[[SIZE:[0-9]+]] = llvm.trunc %[[X]] : i64 to i32
# NVVM: llvm.atomicrmw add %{{[0-9]+}}, %[[SIZE]] syncscope("device") monotonic : !llvm.ptr, i32
# NVVM-NOT: spirv.{{[A-Z]}}

# CHECK: .visible .entry histogram(
# CHECK-NEXT: .param .u64 .ptr .align 1 histogram_param_0,
# CHECK-NEXT: .param .u64 histogram_param_1,
# CHECK-NEXT: .param .u64 .ptr .align 1 histogram_param_2,
# CHECK-NEXT: .param .u64 histogram_param_3,
# CHECK-NEXT: .param .u64 .ptr .align 1 histogram_param_4,
# CHECK-NEXT: .param .u64 histogram_param_5,
# CHECK-NEXT: .param .u64 histogram_param_6,
# CHECK-NEXT: .param .u64 histogram_param_7
# CHECK-NEXT: )
# CHECK: ld.param.b64 %[[X:rd[0-9]+]], [histogram_param_5];
# CHECK: setp.ge.u64 %{{p[0-9]+}}, %{{rd[0-9]+}}, %[[X]];
# CHECK: @%{{p[0-9]+}} bra
# CHECK: cvt.u32.u64 %[[SIZE:r[0-9]+]], %[[X]];
# CHECK: atom.global.add.u32 %{{r[0-9]+}}, [%{{rd[0-9]+}}], %[[SIZE]];
# CHECK: ret;
