"""What about a SYCL device changes the code xpuc generates for it: the
``Target`` of a dpctl device, read from the device's own queries (never
assumed for one CPU)."""

from __future__ import annotations

import dpctl

from .device import root_device
from .passes import Target


def target_for(device: dpctl.SyclDevice) -> Target:
    """What changes generated code on ``device``."""
    return Target(
        fp64=device.has_aspect_fp64,
        fp16=device.has_aspect_fp16,
        atomic64=device.has_aspect_atomic64,
        vector_lanes=vector_lanes(device),
        vectorizes_work_items=device.is_cpu,
        reorders_loop_reductions=device.is_cpu,
    )


def code_key(device: dpctl.SyclDevice) -> str:
    """What code compiled for ``device`` is kept under: its root device's
    filter string. A split divides a device's compute units, not its
    instruction set or aspects, so sub-devices share their root's code (the
    same SPIR-V); each one's driver builds it for itself, as a program built
    for one sub-device does not run on another, even in one context."""
    return root_device(device).filter_string


def vector_lanes(device: dpctl.SyclDevice) -> int:
    """Work-items ``device`` runs as one vector: a CPU device vectorizes
    kernels across work-items at its SIMD width (its native vector width of
    32-bit values: 16 with AVX-512, 8 with AVX2); a GPU runs sub-groups."""
    if device.is_cpu:
        return device.native_vector_width_float
    return max(device.sub_group_sizes, default=1)
