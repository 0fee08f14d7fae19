"""Intel's offline GPU compiler, ``ocloc``: builds SPIR-V for an Intel GPU
architecture without the GPU being present (``xpuc compile --arch``, and the
tests' check that every kernel builds for Intel GPUs).

It is found, in order, at ``XPUC_OCLOC`` (the path of the executable), in the
private folder ``scripts/get-ocloc.sh`` unpacks Debian's packages into
(``.ocloc/`` of the repository), or on ``PATH``. Unpacked privately, its
libraries are found through ``LD_LIBRARY_PATH``, set for its process alone.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

OCLOC_VARIABLE = "XPUC_OCLOC"
# where scripts/get-ocloc.sh unpacks it, in a source checkout
_PRIVATE_FOLDER = Path(__file__).resolve().parent.parent / ".ocloc"
_MULTIARCH_LIBS = Path("lib") / "x86_64-linux-gnu"

HOW_TO_GET = ("get it with scripts/get-ocloc.sh (Debian's intel-opencl-icd and the libraries "
              f"it needs, unpacked into .ocloc/), or set {OCLOC_VARIABLE}=/path/to/ocloc")


def find_ocloc() -> str | None:
    """The path of ocloc, or None where there is none."""
    given = os.environ.get(OCLOC_VARIABLE)
    if given:
        return given
    private = _PRIVATE_FOLDER / "usr" / "bin" / "ocloc"
    if private.is_file():
        return str(private)
    return shutil.which("ocloc")


@dataclass(frozen=True)
class Build:
    """What ocloc said of one SPIR-V module built for one architecture."""

    succeeded: bool
    log: str  # the compiler's messages

    @property
    def errors(self) -> str:
        """The compiler's error lines, each once, in order (it repeats them
        for each device of a family such as ``dg2``)."""
        lines = [line.strip() for line in self.log.splitlines()
                 if line.strip() and not line.startswith("Command was:")]
        errors = [line for line in lines if "error" in line.lower()] or lines
        return "\n".join(dict.fromkeys(errors))


# as the runtime builds every module on a device (runtime/sycl/program.c):
# float32 division and square root correctly rounded, as NumPy's are, where
# OpenCL allows 2.5 and 3 ulp and Intel's GPU compiler takes them
BUILD_OPTIONS = "-cl-fp32-correctly-rounded-divide-sqrt"

# ``ocloc multi``'s output: each command's messages after its number (from
# 1), then a status line for each (numbered from 0)
_COMMAND = re.compile(r"^Command number (\d+): *$", re.MULTILINE)
_STATUS = re.compile(r"^Build command (\d+): (successful|failed)", re.MULTILINE)


class Builds:
    """``ocloc multi`` building ``(spirv, arch)`` jobs in one process (its
    libraries load once, which halves the cost of a build), started and
    not waited for: ``finished`` says whether it ended, ``wait`` gives each
    job's Build."""

    def __init__(self, ocloc: str, jobs: Sequence[tuple[bytes, str]]) -> None:
        self._ocloc, self._count = ocloc, len(jobs)
        environment = dict(os.environ)
        # libraries unpacked beside it (usr/bin/ocloc, usr/lib/x86_64-linux-gnu)
        libraries = Path(ocloc).resolve().parent.parent / _MULTIARCH_LIBS
        if libraries.is_dir():
            environment["LD_LIBRARY_PATH"] = os.pathsep.join(
                filter(None, [str(libraries), environment.get("LD_LIBRARY_PATH")]))
        self._directory = tempfile.TemporaryDirectory(prefix="xpuc-ocloc-")
        directory = self._directory.name
        commands = []
        for number, (spirv, arch) in enumerate(jobs):
            source = os.path.join(directory, f"kernel{number}.spv")
            with open(source, "wb") as file:
                file.write(spirv)
            commands.append(f"-file {source} -device {arch} -spirv_input -options "
                            f"{BUILD_OPTIONS}\n")
        listing = os.path.join(directory, "builds.txt")
        with open(listing, "w") as file:
            file.writelines(commands)
        # a file, not a pipe: nobody reads its output until it ends
        self._output = open(os.path.join(directory, "output.txt"), "w+")
        try:
            self._process = subprocess.Popen([ocloc, "multi", listing], cwd=directory,
                                             env=environment, stdout=self._output,
                                             stderr=subprocess.STDOUT)
        except OSError as error:
            self._process, self._error = None, error

    def finished(self) -> bool:
        return self._process is None or self._process.poll() is not None

    def wait(self) -> list[Build]:
        if self._process is None:
            return [Build(False, f"cannot run {self._ocloc}: {self._error}")] * self._count
        status = self._process.wait()
        self._output.seek(0)
        output = self._output.read()
        self._output.close()
        self._directory.cleanup()
        # the status lines come last, after the last command's messages; a
        # command that ocloc gave up on (and every later one) has none
        statuses = {int(number): result == "successful"
                    for number, result in _STATUS.findall(output)}
        parts = _COMMAND.split(_STATUS.split(output, maxsplit=1)[0])
        messages = dict(zip((int(number) - 1 for number in parts[1::2]), parts[2::2]))
        stopped = f"not built: ocloc stopped before it (exit status {status})"
        return [Build(statuses.get(i, "Build succeeded." in messages.get(i, "")),
                      messages.get(i, stopped)) for i in range(self._count)]


def build_many(ocloc: str, jobs: Sequence[tuple[bytes, str]]) -> list[Build]:
    """Build each ``(spirv, arch)`` of ``jobs`` with ``ocloc``, in one process."""
    return Builds(ocloc, jobs).wait()
