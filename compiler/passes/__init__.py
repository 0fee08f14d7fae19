"""The MLIR half of xpuc: a parfor's module, from the frontend's linalg stage
to a SPIR-V binary and the launch plan the host runs it with."""

from .launch_plan import HostOp, KernelLaunch, LaunchPlan
from .stages import (
    KERNEL_STAGES,
    STAGE_TABLES,
    STAGES,
    Lowered,
    Stage,
    StageInput,
    lower,
    read_stage_input,
)
from .target import Target

__all__ = ["KERNEL_STAGES", "STAGES", "STAGE_TABLES", "HostOp", "KernelLaunch", "LaunchPlan",
           "Lowered", "Stage", "StageInput", "Target", "lower", "read_stage_input"]
