"""lit configuration: each test is a Python module that ``xpuc compile`` reads,
its RUN lines piping the output into (Python) FileCheck."""

import os
import shlex
import shutil
import sys

import lit.formats

config.name = "xpuc"  # noqa: F821 (lit provides ``config``)
# lit's internal shell (it has ``not``): lit 23 refuses the external one
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".py"]  # noqa: F821
# Inputs: modules the tests import, not tests
config.excludes = ["lit.cfg.py", "Inputs"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821


def _filecheck() -> str:
    """The Python filecheck installed with this interpreter, else on PATH,
    else run as a module of this interpreter."""
    beside = os.path.join(os.path.dirname(sys.executable), "filecheck")
    found = beside if os.access(beside, os.X_OK) else shutil.which("filecheck")
    return shlex.quote(found) if found else f"{shlex.quote(sys.executable)} -m filecheck"


# the interpreter running lit is the one with xpuc installed
config.substitutions.append(  # noqa: F821
    ("%xpuc", f"{shlex.quote(sys.executable)} -m xpuc.cli"))
# substitution patterns are regular expressions: match the command word only,
# not a path or file name that contains it
config.substitutions.append(  # noqa: F821
    (r"(?<![\w/.-])(FileCheck|filecheck)(?![\w/.-])", _filecheck()))

if shutil.which("spirv-val") and shutil.which("spirv-dis"):
    config.available_features.add("spirv-tools")  # noqa: F821

# lit runs tests in a clean environment: keep what chooses and finds devices
for name, value in os.environ.items():
    if name == "OCL_ICD_FILENAMES" or name.startswith(("SYCL_", "ONEAPI_", "NUMBA_")):
        config.environment[name] = value  # noqa: F821
# the CHECK lines describe code for the OpenCL CPU device (its work-group
# sizes, fp64): make it the default device whatever else the machine has
config.environment["ONEAPI_DEVICE_SELECTOR"] = "opencl:cpu"  # noqa: F821
