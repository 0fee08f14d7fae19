"""Dask with one worker per SYCL (sub-)device (SPEC "Placement beyond one
device"): xpuc.dask.LocalSYCLCluster and SYCLWorkerPlugin, on this machine's
CPU device split into one sub-device per compute unit, over loopback."""

import subprocess
import sys
import textwrap

import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

import xpuc
from xpuc.dask import LocalSYCLCluster, SYCLWorkerPlugin, sycl_device_names
from xpuc.device import device_name

ROOT = "opencl:cpu:0"
SUB_DEVICES = [f"{ROOT}/partition=1/0", f"{ROOT}/partition=1/1"]

# imported by the workers by name (cache=True needs a module file)
MODULE = '''
import numpy as np
import xpuc

@xpuc.jit(cache=True)
def wave(x):
    return np.sin(x) * 2.0 + 1.0
'''


def current_device() -> str:
    return device_name(xpuc.get_current_queue().sycl_device)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    project = tmp_path_factory.mktemp("project")
    (project / "blocks.py").write_text(MODULE)
    env = {"XPUC_CACHE_DIR": str(project / "cache")}
    with LocalSYCLCluster(partition=1, dashboard_address=None, env=env) as cluster, \
            Client(cluster) as connected:
        def importable(folder: str) -> None:
            sys.path.insert(0, folder)

        connected.run(importable, str(project))
        yield connected


def test_each_worker_runs_on_its_own_sub_device(client):
    assert sorted(client.run(current_device).values()) == SUB_DEVICES


def test_blocks_are_computed_on_both_workers(client):
    @xpuc.jit
    def scaled(block, factor):
        return block * factor + 1.0

    client.run(xpuc.reset_stats)
    x = da.from_array(np.arange(40_000.0).reshape(200, 200), chunks=(50, 200))
    result = x.map_blocks(scaled, 3.0).compute()
    np.testing.assert_array_equal(result, np.arange(40_000.0).reshape(200, 200) * 3.0 + 1.0)
    launches = [stats["kernel_launches"] for stats in client.run(xpuc.stats).values()]
    assert len(launches) == 2 and all(launches) and sum(launches) == 4
    # Dask sends the function with every task: the workers keep what they compiled
    client.run(xpuc.reset_stats)
    x.map_blocks(scaled, 3.0).compute()
    assert [stats["kernels_compiled"] for stats in client.run(xpuc.stats).values()] == [0, 0]


def test_workers_of_a_node_share_the_kernel_cache(client):
    first, second = sorted(client.scheduler_info()["workers"])
    client.run(xpuc.reset_stats)
    block = np.linspace(0.0, 1.0, 1000)

    def wave(x):
        import blocks
        return blocks.wave(x)

    for worker in (first, second):  # one after the other: the second finds the first's
        result = client.submit(wave, block, workers=[worker], pure=False).result()
        np.testing.assert_allclose(result, np.sin(block) * 2.0 + 1.0)
    stats = client.run(xpuc.stats)
    assert stats[first]["kernels_compiled"] > 0 and stats[first]["kernel_launches"] == 1
    assert stats[second]["kernels_compiled"] == 0 and stats[second]["kernel_launches"] == 1


def test_the_plugin_puts_workers_started_otherwise_on_a_device():
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as connected:
        connected.register_plugin(SYCLWorkerPlugin(SUB_DEVICES[1]))
        assert list(connected.run(current_device).values()) == [SUB_DEVICES[1]]


def test_device_names_of_a_cluster():
    assert sycl_device_names(["opencl:cpu"]) == [ROOT]
    assert sycl_device_names(["opencl:cpu"], partition=1) == SUB_DEVICES
    assert sycl_device_names(["opencl:cpu"], partition=[1, 1]) == [
        f"{ROOT}/partition=1,1/0", f"{ROOT}/partition=1,1/1"]


def test_workers_sharing_a_process_are_refused():
    with pytest.raises(ValueError, match="processes=False is not possible"):
        LocalSYCLCluster(processes=False)


def test_an_unknown_device_is_refused_naming_it():
    with pytest.raises(xpuc.DeviceError, match="nosuch"):
        SYCLWorkerPlugin("level_zero:nosuch")


def test_the_module_is_not_imported_by_xpuc():
    code = "import sys, xpuc; print('xpuc.dask' in sys.modules, 'distributed' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["False", "False"]
