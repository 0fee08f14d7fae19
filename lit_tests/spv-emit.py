# --emit spv writes each kernel's SPIR-V binary to DIR/<kernel name>.spv and
# prints the paths. A kernel name repeats across the signatures of a function:
# the later files get a counter.
# RUN: rm -rf %t
# RUN: %xpuc compile %s --emit spv -o %t | filecheck %s --check-prefix=PATHS
# RUN: ls %t | filecheck %s --check-prefix=FILES
# RUN: od -A n -t x4 -N 4 %t/scale_parfor0_kernel.spv | filecheck %s --check-prefix=MAGIC

import xpuc


@xpuc.jit(["float32[::1](float32[::1])", "float64[::1](float64[::1])"])
def scale(a):
    return a * 3


@xpuc.jit("float64[:, ::1](float64[:, ::1])")
def square(a):
    return a * a

# PATHS: spv-emit.py.tmp/scale_parfor0_kernel.spv
# PATHS-NEXT: spv-emit.py.tmp/scale_parfor0_kernel.1.spv
# PATHS-NEXT: spv-emit.py.tmp/square_parfor0_kernel.spv
# PATHS-NOT: {{.}}

# FILES: scale_parfor0_kernel.1.spv
# FILES-NEXT: scale_parfor0_kernel.spv
# FILES-NEXT: square_parfor0_kernel.spv

# the SPIR-V magic number, 0x07230203
# MAGIC: 07230203
