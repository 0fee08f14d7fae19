# spirv stage of prange bodies that update elements several iterations may
# share: an int32 histogram's += is one AtomicIAdd on the array passed again as
# a SPIR-V pointer; a float64 one, and a max, a compare-exchange loop on the
# element's bits (64-bit: Int64Atomics); an update of the iteration's own
# element stays a plain load and store, with no atomic, as does one in a serial
# loop over a block of its own (range(i * b, i * b + b)); one block longer, the
# blocks overlap and the update is atomic.
# RUN: %xpuc compile %s --emit spirv | filecheck %s

from numba import prange

import xpuc


@xpuc.jit(["void(int64[::1], int32[::1], int32[::1])",
           "void(int64[::1], float64[::1], float64[::1])"])
def histogram(idx, w, h):
    for i in prange(idx.shape[0]):
        h[idx[i]] += w[i]


@xpuc.jit("void(int64[::1], float32[::1], float32[::1])")
def maxima(idx, v, h):
    for i in prange(idx.shape[0]):
        h[idx[i]] = max(h[idx[i]], v[i])


@xpuc.jit("void(float64[::1], float64[::1])")
def own_elements(x, h):
    for i in prange(x.shape[0]):
        h[i] += x[i]

@xpuc.jit("void(int64, int64[::1], int64[::1])")
def own_blocks(b, x, s):
    for i in prange(x.shape[0] // b):
        for j in range(i * b, i * b + b):
            s[j] += x[j]


@xpuc.jit("void(int64, int64[::1], int64[::1])")
def overlapping_blocks(b, x, s):
    for i in prange(x.shape[0] // b):
        for j in range(i * b, i * b + b + 1):
            s[j] += x[i]

# CHECK: // xpuc: function histogram signature (array(int64, 1d, C), array(int32, 1d, C), array(int32, 1d, C))
# CHECK: spirv.func @histogram_parfor0_kernel({{.*}}!spirv.ptr<i32, CrossWorkgroup>
# CHECK-NOT: spirv.Store
# CHECK: spirv.AtomicIAdd <Device> <None> %{{.*}} : !spirv.ptr<i32, CrossWorkgroup>
# CHECK-NOT: spirv.Store
# CHECK: spirv.Return

# CHECK: // xpuc: function histogram signature (array(int64, 1d, C), array(float64, 1d, C), array(float64, 1d, C))
# CHECK: requires #spirv.vce<{{.*}}Int64Atomics
# CHECK: spirv.mlir.loop
# CHECK: spirv.FAdd
# CHECK: spirv.AtomicCompareExchange <Device> <None> <None> %{{.*}} : !spirv.ptr<i64, CrossWorkgroup>

# CHECK: // xpuc: function maxima
# CHECK: spirv.mlir.loop
# CHECK: spirv.AtomicCompareExchange <Device> <None> <None> %{{.*}} : !spirv.ptr<i32, CrossWorkgroup>

# CHECK: // xpuc: function own_elements
# CHECK-NOT: spirv.Atomic
# CHECK: spirv.Store "CrossWorkgroup"
# CHECK-NOT: spirv.Atomic
# CHECK: spirv.Return

# CHECK: // xpuc: function own_blocks
# CHECK-NOT: spirv.Atomic
# CHECK: spirv.Store "CrossWorkgroup"
# CHECK-NOT: spirv.Atomic
# CHECK: spirv.Return

# CHECK: // xpuc: function overlapping_blocks
# CHECK: spirv.AtomicIAdd <Device> <None> %{{.*}} : !spirv.ptr<i64, CrossWorkgroup>
