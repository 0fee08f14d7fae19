"""What about a SYCL device changes the code xpuc generates for it: the
``Target`` of a dpctl device, read from the device's own queries (never
assumed for one CPU)."""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from . import intel_gpus, nvidia_gpus
from .cuda_runtime import CudaDevice
from .device import root_device
from .passes import Target

if TYPE_CHECKING:  # imported when a SYCL device is first named: xpuc imports without it
    import dpctl

# XPUC_FP64=0: every device counts as lacking fp64, so that code meant for a
# GPU without it (Arc, an integrated GPU) is typed and run as there
FP64_VARIABLE = "XPUC_FP64"


def fp64_switched_off() -> bool:
    return os.environ.get(FP64_VARIABLE) == "0"


def has_fp64(device: dpctl.SyclDevice) -> bool:
    """Whether code for ``device`` may use float64."""
    return device.has_aspect_fp64 and not fp64_switched_off()


def target_for(device: dpctl.SyclDevice | CudaDevice | str) -> Target:
    """What changes generated code on ``device`` (a CUDA device: its
    architecture's), or on the GPU architecture it names: Intel's as ocloc
    names them (``dg2``, see ``intel_gpus``), NVIDIA's as ptxas does
    (``sm_90``, see ``nvidia_gpus``)."""
    if isinstance(device, str | CudaDevice):
        target = arch_target(device if isinstance(device, str) else device.sm_arch)
        if isinstance(device, CudaDevice):  # its reductions' blocks fill its own SMs
            target = nvidia_gpus.ARCHITECTURES[device.sm_arch].target(device.sm_arch,
                                                                      device.multiprocessors)
        return dataclasses.replace(target, fp64=target.fp64 and not fp64_switched_off())
    return Target(
        name=device.name,
        fp64=has_fp64(device),
        fp16=device.has_aspect_fp16,
        atomic64=device.has_aspect_atomic64,
        vector_lanes=vector_lanes(device),
        vectorizes_work_items=device.is_cpu,
        cache_line_bytes=device.global_mem_cache_line_size or 64,
        reorders_loop_reductions=device.is_cpu,
        parallel_inner_loops=not device.is_cpu,
    )


def code_key(device: dpctl.SyclDevice | CudaDevice | str) -> str:
    """What code compiled for ``device`` is kept under: its root device's
    filter string, or the Intel GPU architecture's name, marked when
    ``XPUC_FP64=0`` types its code otherwise. A split divides a device's
    compute units, not its instruction set or aspects, so sub-devices share their root's code (the
    same SPIR-V); each one's driver builds it for itself, as a program built
    for one sub-device does not run on another, even in one context."""
    if isinstance(device, str):
        name = f"arch:{device}"
    elif isinstance(device, CudaDevice):
        name = f"cuda:{device.ordinal}"
    else:
        name = root_device(device).filter_string
    return name + "/no-fp64" * fp64_switched_off()


def vector_lanes(device: dpctl.SyclDevice) -> int:
    """Work-items ``device`` runs as one vector: a CPU device vectorizes
    kernels across work-items at its SIMD width (its native vector width of
    32-bit values: 16 with AVX-512, 8 with AVX2); a GPU runs sub-groups."""
    if device.is_cpu:
        return device.native_vector_width_float
    return max(device.sub_group_sizes, default=1)


def arch_target(name: str) -> Target:
    """The Target of GPU architecture ``name`` (``dg2``, ``sm_90``);
    ValueError naming the ones known."""
    vendor, table = (("NVIDIA", nvidia_gpus.ARCHITECTURES) if nvidia_gpus.is_architecture(name)
                     else ("Intel", intel_gpus.ARCHITECTURES))
    gpu = table.get(name)
    if gpu is None:
        raise ValueError(f"unknown {vendor} GPU architecture '{name}' "
                         f"(known: {', '.join(table)})")
    return gpu.target(name)


def known_architectures() -> list[str]:
    """Every architecture ``xpuc compile --arch`` takes."""
    return [*intel_gpus.ARCHITECTURES, *nvidia_gpus.ARCHITECTURES]
