# --emit spv writes an explicit kernel's SPIR-V binary like a parfor's:
# DIR/<kernel name>.spv, a valid module starting with the SPIR-V magic number.
# RUN: rm -rf %t
# RUN: %xpuc compile %s --emit spv -o %t | filecheck %s --check-prefix=PATHS
# RUN: od -A n -t x4 -N 4 %t/scale.spv | filecheck %s --check-prefix=MAGIC

import xpuc


@xpuc.kernel("void(float32[::1], float32)")
def scale(a, factor):
    i = xpuc.get_global_id(0)
    a[i] = a[i] * factor

# PATHS: scale.spv
# MAGIC: 07230203
