# A --device that selects nothing is an error, before the file is loaded.
# RUN: not %xpuc compile %s --device level_zero:gpu:7 2>&1 | filecheck %s
# CHECK: xpuc compile: no device level_zero:gpu:7:
# CHECK-NOT: Traceback
