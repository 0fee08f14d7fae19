"""The MLIR half of xpuc: a parfor's module, from the frontend's linalg stage
to a SPIR-V binary and the launch plan the host runs it with."""

from .launch_plan import HostOp, KernelLaunch, LaunchPlan
from .stages import (
    CUDA_KERNEL_STAGES,
    CUDA_STAGES,
    KERNEL_STAGES,
    STAGE_TABLES,
    STAGES,
    Lowered,
    Stage,
    StageInput,
    lower,
    read_stage_input,
    stages_for,
)
from .target import Target

__all__ = ["CUDA_KERNEL_STAGES", "CUDA_STAGES", "KERNEL_STAGES", "STAGES", "STAGE_TABLES",
           "HostOp", "KernelLaunch", "LaunchPlan", "Lowered", "Stage", "StageInput", "Target",
           "lower", "read_stage_input", "stages_for"]
