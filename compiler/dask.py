"""Dask with one worker per SYCL device: each worker process runs its tasks'
parfors and kernels on its own device (or sub-device), as dask-cuda does for
NVIDIA GPUs. xpuc schedules nothing itself: ``dask.array.map_blocks(f, x)``
with an ``xpuc.jit`` function ``f`` sends each block to a worker, whose
default device (``xpuc.set_default_device``) runs it.

Needs the optional extra (``pip install 'xpuc[dask]'``); ``import xpuc`` does
not import this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dpctl
from distributed import LocalCluster, Worker, WorkerPlugin

from .device import as_device, device_name, set_default_device, sub_device_names
from .errors import DeviceError

DeviceSpec = str | dpctl.SyclDevice

# the device a plugin made this process's default: workers sharing a process
# cannot each have their own
_process_device: str | None = None


class SYCLWorkerPlugin(WorkerPlugin):
    """Makes ``device`` (a device name such as ``opencl:cpu``, a sub-device's
    such as ``opencl:cpu:0/partition=1/0``, or a ``dpctl.SyclDevice``) the
    default device of the worker's process, for workers started otherwise
    than by ``LocalSYCLCluster`` (``dask worker``, dask-jobqueue, dask-mpi):
    ``client.register_plugin(SYCLWorkerPlugin(...))`` on each."""

    name = "xpuc-sycl-device"

    def __init__(self, device: DeviceSpec) -> None:
        self.device = _name_of(device)

    def setup(self, worker: Worker) -> None:
        global _process_device
        if _process_device not in (None, self.device):
            raise DeviceError(
                f"worker {worker.name} shares its process with a worker on {_process_device} "
                f"and cannot run on {self.device}: start workers in processes of their own "
                "(processes=True, the default of LocalSYCLCluster and `dask worker`)")
        set_default_device(self.device)
        _process_device = self.device


class LocalSYCLCluster(LocalCluster):
    """A ``distributed.LocalCluster`` with one worker process per device of
    ``devices`` (names or ``dpctl.SyclDevice``; default: every GPU, else the
    default device), or per sub-device when ``partition`` (what
    ``SyclDevice.create_sub_devices`` takes, e.g. 1 compute unit each) splits
    each one. Other keywords go to ``LocalCluster``; each worker has one
    thread unless ``threads_per_worker`` says otherwise. Scaling beyond the
    devices puts further workers on them in turn."""

    def __init__(self, devices: Sequence[DeviceSpec] | None = None,
                 partition: int | str | Sequence[int] | None = None, **kwargs: Any) -> None:
        if kwargs.pop("processes", True) is False:
            raise ValueError("LocalSYCLCluster runs each worker in a process of its own "
                             "(a device is a process-wide default): processes=False is not "
                             "possible")
        self.sycl_devices = sycl_device_names(devices, partition)
        n_workers = kwargs.pop("n_workers", len(self.sycl_devices))
        kwargs.setdefault("threads_per_worker", 1)
        super().__init__(n_workers=0, processes=True, **kwargs)
        self.scale(n_workers)
        if not self.asynchronous:
            self.sync(self._correct_state)

    def new_worker_spec(self) -> dict:
        """The next worker's spec: that of LocalCluster, with its device's plugin."""
        ((name, spec),) = super().new_worker_spec().items()
        device = self.sycl_devices[int(name) % len(self.sycl_devices)]
        options = dict(spec["options"])
        options["plugins"] = {*options.get("plugins", ()), SYCLWorkerPlugin(device)}
        return {name: {**spec, "options": options}}


def sycl_device_names(devices: Sequence[DeviceSpec] | None = None,
                      partition: int | str | Sequence[int] | None = None) -> list[str]:
    """The names of the devices ``LocalSYCLCluster`` puts a worker on."""
    if devices is None:
        gpus = dpctl.get_devices(device_type="gpu")
        devices = gpus or [dpctl.SyclDevice()]
    names = [_name_of(device) for device in devices]
    if partition is None:
        return names
    # compute units of each sub-device, or an affinity domain, as a name writes it
    text = str(partition) if isinstance(partition, (int, str)) else ",".join(map(str, partition))
    return [sub for name in names for sub in sub_device_names(name, text)]


def _name_of(device: DeviceSpec) -> str:
    """A device's name as another process can find it again."""
    found = as_device(device) if isinstance(device, str) else device
    name = device_name(found)
    if name is None:
        raise DeviceError(f"{found.name}: a sub-device split off outside xpuc has no name "
                          "another process can find; name it instead, e.g. "
                          "'opencl:cpu:0/partition=1/0'")
    return name


__all__ = ["LocalSYCLCluster", "SYCLWorkerPlugin", "sycl_device_names"]
