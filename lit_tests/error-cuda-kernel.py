# An explicit kernel's atomics have no CUDA lowering yet: compiling it for an
# NVIDIA GPU is refused, naming the kernel, the construct and the user's line.
# RUN: not %xpuc compile %s --arch sm_90 --emit ptx 2>&1 | filecheck %s

import xpuc


@xpuc.kernel("void(int64[::1], int32[::1])")
def histogram(data, counts):
    # CHECK: error-cuda-kernel.py:[[# @LINE + 1]]: kernel 'histogram' uses spirv.{{[A-Za-z]+}}, which has no CUDA lowering yet
    xpuc.atomic.add(counts, data[xpuc.get_global_id(0)], 1)

# CHECK-NOT: Traceback
