"""The MLIR pass pipelines of each stage, as data.

A pipeline is a tuple of pass strings, nested under ``builtin.module``; ``{name}``
fields are filled from the target and the module by the stage that runs it
(``stages.py``), with ``str.format`` (hence the doubled braces of pass options).
The Python rewrites that run between them are in ``gpu_rewrites.py`` and ``spirv_rewrites.py``.
"""

# linalg stage: the frontend gives a parfor's body as its own function, one
# block per Numba IR block and scalar variables in stack slots. mem2reg makes
# the slots SSA values again, lift-cf-to-scf turns the branches into scf.if and
# scf.while, and the body is inlined into the parallel loop that calls it (no
# canonicalization here: this stage shows the frontend's code).
STRUCTURE = (
    "func.func(mem2reg)",
    "lift-cf-to-scf",
    "inline{{default-pipeline=}}",
    "symbol-dce",
)

# gpu stage, before tiling: linalg ops (if any) become scf.parallel loops, and
# the loop nest is cleaned up so that the number of loop dimensions, which picks
# the tile sizes, can be read off it.
LOOPS = (
    "convert-linalg-to-parallel-loops",
    "func.func(fold-memref-alias-ops)",
    "flatten-memref",
    "canonicalize",
    "cse",
    "loop-invariant-code-motion",
)

# gpu stage: each loop dimension becomes a dimension of the launch (dimension
# i -> x, y, z), run as a range of work-items with no work-group size of its
# own: gpu_rewrites.index_by_global_ids makes the kernels read their global ids, so
# the device runtime picks the work-group shape (see that rewrite for why).
MAP_TO_GPU = (
    "func.func(gpu-map-parallel-loops)",
    "convert-parallel-loops-to-gpu",
    # folds the launch's `count ceildiv 1` before it is expanded
    "canonicalize",
    "lower-affine",
    "canonicalize",
    "cse",
)

# gpu stage, after the launch bodies are self-contained: one gpu.module per
# launch; canonicalize drops the ids outlining materializes but the kernel does
# not use, and host code that only fed the launch bodies; symbol-dce the host's
# copy of what outlining copied into a gpu.module (a reduction's work-group
# buffers, memref.global).
OUTLINE = (
    "gpu-kernel-outlining",
    "canonicalize",
    "symbol-dce",
)

# gpu stage, once the kernels read bounded global ids (gpu_rewrites.bound_global_ids)
# and count their loops with scf.for (counted_loops.py): what the ranges of ids
# and loop indices prove (an index is never negative) folds away.
RANGES = (
    "int-range-optimizations",
    "canonicalize",
)

# gpu stage of an explicit kernel, which the frontend writes as a gpu.func
# calling its body: as in STRUCTURE, the body's stack slots become SSA values
# and its branches scf ops (gpu_rewrites.inline_kernel_bodies then moves it into
# the kernel, KERNEL_CLEANUP tidies up, which leaves its counted loops in the
# shape counted_loops.py matches, and RANGES follows as for a parfor's kernels).
KERNEL_STRUCTURE = (
    "gpu.module(func.func(mem2reg))",
    "lift-cf-to-scf",
)
KERNEL_CLEANUP = (
    "canonicalize",
    "cse",
)

# gpu stage, once the kernels are merged into one gpu.module.
ATTACH_TARGET = (
    "spirv-attach-target{{ver={version} caps={caps} client_api=OpenCL}}",
)

# gpu stage for a CUDA device, once the kernels are merged: the NVPTX target
# (chip sm_90..., features the PTX ISA version) and libdevice, linked into the
# module by gpu-module-to-binary for the math functions convert-gpu-to-nvvm
# calls (__nv_exp...).
ATTACH_NVVM_TARGET = (
    "nvvm-attach-target{{chip={chip} features=+{ptx_version} l={libdevice}}}",
)

# nvvm stage. convert-gpu-to-nvvm lowers math ops to libdevice calls first;
# convert-math-to-llvm then takes the few left, which LLVM lowers exactly
# (fabs, fma, copysign...), never an approximation; with bare pointers each
# memref argument is one pointer, the kernel ABI of the SPIR-V kernels (sizes
# and strides arrive as separate arguments), so one launch plan serves both.
TO_NVVM = (
    "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm{{use-bare-ptr-memref-call-conv=1}})",
)
# nvvm stage, after nvvm_rewrites.exact_square_roots: the rest in the llvm dialect.
NVVM_TO_LLVM = (
    "gpu.module(convert-math-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,"
    "reconcile-unrealized-casts)",
)

# ptx stage: each gpu.module compiled to PTX, the gpu.binary's assembly.
TO_PTX = ("gpu-module-to-binary{{format=isa}}",)

# spirv stage. arith-expand rewrites the arith ops with no SPIR-V lowering
# (floordivsi, ceildivsi) into ones with; convert-math-to-spirv reads the
# gpu.module's spirv.target_env to pick OpenCL (not GLSL) extended
# instructions; convert-gpu-to-spirv lowers each memref argument to one bare
# CrossWorkgroup pointer, and index to i64.
TO_SPIRV = (
    # scf-for-to-while: the SPIR-V lowering of an scf.for with iter_args sets
    # its results only inside the body, so a loop that runs zero times (an
    # empty reduction, a work-item past the end) yields undefined values;
    # scf.while's lowering is right
    "gpu.module(scf-for-to-while,arith-expand,convert-math-to-spirv,convert-ub-to-spirv)",
    "convert-gpu-to-spirv{{use-64bit-index=1}}",
    "gpu.module(spirv.module(spirv-lower-abi-attrs,spirv-update-vce))",
)

# spv stage: serialize each gpu.module's spirv.module into a gpu.binary.
TO_BINARY = ("gpu-module-to-binary",)
