"""Every SPIR-V module the tests compile is also built by Intel's GPU compiler,
ocloc: for ``pvc`` (Data Center GPU Max, with fp64) all of them, for ``dg2``
(Arc, no fp64) those that declare no Float64 capability. conftest.py imports
this module's fixture and hooks.

Each distinct module (by its bytes) is built once, in the background: one
``ocloc multi`` process at a time builds a batch while the tests run (started
and collected between tests, from pytest's thread), and the session waits for
the last batch at its end. A failed build fails the session,
naming the test that compiled the module and the compiler's message. Without
ocloc, nothing is built and the report header says how to get it;
``XPUC_REQUIRE_OCLOC=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import array
import hashlib
import os
import time
from pathlib import Path

import pytest

from xpuc import ocloc

ALL_KERNELS_ARCH = "pvc"
FLOAT32_KERNELS_ARCH = "dg2"
_BATCH = 48  # builds per ocloc process: its libraries load once per batch

# scripts/get-ocloc.sh unpacks ocloc into the repository's .ocloc/, which an
# installed (not editable) xpuc does not look in: the tests, and the commands
# they run, are told where it is
_REPOSITORY_OCLOC = Path(__file__).resolve().parent.parent / ".ocloc" / "usr" / "bin" / "ocloc"
if ocloc.OCLOC_VARIABLE not in os.environ and _REPOSITORY_OCLOC.exists():
    os.environ[ocloc.OCLOC_VARIABLE] = str(_REPOSITORY_OCLOC)
_OCLOC = ocloc.find_ocloc()
_seen_files: set[str] = set()
_seen_modules: set[str] = set()
_pending: list[tuple[str, str, bytes, str]] = []  # (test, file, SPIR-V, arch)
# the batch being built: its jobs and the process
_running: tuple[list, ocloc.Builds] | None = None
_failures: list[tuple[str, str, str, str]] = []  # (test, file, arch, compiler's message)
_builds = [0]


def declares_float64(spirv: bytes) -> bool:
    """Whether a SPIR-V module declares the Float64 capability (its
    OpCapability instructions come first, before OpMemoryModel)."""
    words = array.array("I", spirv[: len(spirv) // 4 * 4])
    position = 5  # after the header
    while position < len(words):
        count, opcode = words[position] >> 16, words[position] & 0xFFFF
        if opcode == 14 or count == 0:  # OpMemoryModel: no capability after it
            return False
        if opcode == 17 and words[position + 1] == 10:  # OpCapability Float64
            return True
        position += count
    return False


def _collect(wait: bool) -> None:
    """Take the running batch's results, if it ended (or waiting for it)."""
    global _running
    if _running is None or not (wait or _running[1].finished()):
        return
    batch, builds = _running
    _running = None
    results = builds.wait()
    _builds[0] += len(batch)
    _failures.extend((test, name, arch, build.errors)
                     for (test, name, _, arch), build in zip(batch, results)
                     if not build.succeeded)


def _start(size: int) -> None:
    """Start building the first ``size`` pending jobs, if no batch runs."""
    global _running
    if _running is None and _pending:
        batch = _pending[:size]
        del _pending[:size]
        _running = (batch, ocloc.Builds(_OCLOC, [(spirv, arch) for _, _, spirv, arch in batch]))


@pytest.fixture(autouse=True)
def builds_for_intel_gpus(request):
    """Queue the SPIR-V modules a test compiled for ocloc builds."""
    yield
    if _OCLOC is None:
        if os.environ.get("XPUC_REQUIRE_OCLOC"):
            pytest.fail(f"ocloc is required (XPUC_REQUIRE_OCLOC) but not found: {ocloc.HOW_TO_GET}")
        return
    directory = os.environ["XPUC_DUMP_DIR"]
    for name in sorted(set(os.listdir(directory)) - _seen_files):
        _seen_files.add(name)
        if not name.endswith(".spv"):
            continue
        with open(os.path.join(directory, name), "rb") as file:
            spirv = file.read()
        digest = hashlib.sha256(spirv).hexdigest()
        if digest in _seen_modules:
            continue
        _seen_modules.add(digest)
        _pending.append((request.node.nodeid, name, spirv, ALL_KERNELS_ARCH))
        if not declares_float64(spirv):
            _pending.append((request.node.nodeid, name, spirv, FLOAT32_KERNELS_ARCH))
    _collect(wait=False)
    if len(_pending) >= _BATCH:
        _start(_BATCH)


def pytest_report_header(config) -> str:
    if _OCLOC is None:
        return (f"ocloc: not found, kernels are not built for Intel GPUs ({ALL_KERNELS_ARCH}, "
                f"{FLOAT32_KERNELS_ARCH}): {ocloc.HOW_TO_GET}")
    return (f"ocloc: {_OCLOC}: every kernel is also built for {ALL_KERNELS_ARCH}, "
            f"those without float64 for {FLOAT32_KERNELS_ARCH}")


def pytest_sessionfinish(session) -> None:
    """Build what is left; a failed build fails the session."""
    if _OCLOC is None:
        return
    waited = time.perf_counter()
    _collect(wait=True)
    while _pending:
        _start(len(_pending))
        _collect(wait=True)
    session.config._xpuc_ocloc_wait = time.perf_counter() - waited
    if _failures:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter) -> None:
    if _OCLOC is None:
        return
    wait = getattr(terminalreporter.config, "_xpuc_ocloc_wait", 0.0)
    terminalreporter.write_line(
        f"ocloc: {len(_seen_modules)} distinct SPIR-V modules, {_builds[0]} builds for Intel "
        f"GPUs in the background ({wait:.1f} s waited for at the end)")
    for test, name, arch, message in _failures:
        terminalreporter.write_line(f"FAILED ocloc build for {arch} of {name} (from {test}):",
                                    red=True)
        terminalreporter.write_line("  " + message.replace("\n", "\n  "))
