"""The MLIR half of xpuc: a parfor's module, from the frontend's linalg stage
to a SPIR-V binary and the launch plan the host runs it with."""

from .launch_plan import HostOp, KernelLaunch, LaunchPlan
from .stages import KERNEL_STAGES, STAGES, Lowered, Stage, lower
from .target import Target

__all__ = ["KERNEL_STAGES", "STAGES", "HostOp", "KernelLaunch", "LaunchPlan", "Lowered", "Stage",
           "Target", "lower"]
