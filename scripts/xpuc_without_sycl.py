"""pytest plugin for a machine without dpctl (the CUDA machine, see
cuda-device-tests.sh): the package ``xpuc`` (compiler/) registered without
running its ``__init__``, which loads the SYCL runtime, so that its
dpctl-free modules (abi, errors, passes, nvidia_gpus, cuda_runtime) import.
It goes once ``import xpuc`` works without dpctl (issue 30, item 3)."""

import importlib.util
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent / "compiler"
_spec = importlib.util.spec_from_file_location(
    "xpuc", _PACKAGE / "__init__.py", submodule_search_locations=[str(_PACKAGE)])
sys.modules["xpuc"] = importlib.util.module_from_spec(_spec)
