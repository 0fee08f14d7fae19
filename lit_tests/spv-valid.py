# The written binary is valid OpenCL SPIR-V, and disassembles to one kernel
# entry point (no fixed local size, contraction off), using OpenCL.std
# instructions only.
# REQUIRES: spirv-tools
# RUN: rm -rf %t
# RUN: %xpuc compile %s --emit spv -o %t
# RUN: spirv-val --target-env opencl2.1 %t/waves_parfor0_kernel.spv
# RUN: spirv-dis %t/waves_parfor0_kernel.spv | filecheck %s

import math

import numba

import xpuc


@xpuc.jit("void(float32[::1], float32[::1])")
def waves(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = math.sin(x[i]) * math.exp(x[i])

# CHECK-DAG: OpCapability Addresses
# CHECK-DAG: OpCapability Kernel
# CHECK-DAG: %[[STD:[0-9a-zA-Z_]+]] = OpExtInstImport "OpenCL.std"
# CHECK: OpMemoryModel Physical64 OpenCL
# CHECK-NEXT: OpEntryPoint Kernel %[[K:[0-9a-zA-Z_]+]] "waves_parfor0_kernel"
# CHECK-NEXT: OpExecutionMode %[[K]] ContractionOff
# CHECK-NOT: OpExecutionMode
# CHECK: OpExtInst %float %[[STD]] sin
# CHECK: OpExtInst %float %[[STD]] exp
# CHECK-NOT: GLSL
