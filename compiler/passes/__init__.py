"""The MLIR half of xpuc: a parfor's module, from the frontend's linalg stage
to a SPIR-V binary and the launch plan the host runs it with."""

import importlib

from .target import Target

# Everything else here needs the MLIR bindings, which take 0.1 s to load: a
# process that only runs compiled code (a warm start from the disk cache) never
# loads them. Each name is imported from its module when first used (PEP 562).
_LAZY = {
    "HostOp": "launch_plan", "KernelLaunch": "launch_plan", "LaunchPlan": "launch_plan",
    **dict.fromkeys(("CUDA_KERNEL_STAGES", "CUDA_STAGES", "KERNEL_STAGES", "STAGE_TABLES",
                     "STAGES", "Lowered", "Stage", "StageInput", "lower", "read_stage_input",
                     "stages_for"), "stages"),
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)


__all__ = ["CUDA_KERNEL_STAGES", "CUDA_STAGES", "KERNEL_STAGES", "STAGES", "STAGE_TABLES",
           "HostOp", "KernelLaunch", "LaunchPlan", "Lowered", "Stage", "StageInput", "Target",
           "lower", "read_stage_input", "stages_for"]
