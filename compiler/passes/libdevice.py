"""Where NVIDIA's libdevice is: the bitcode library of math functions
(``__nv_exp``...) that the nvvm stage links into every CUDA kernel module,
so that math matches NumPy instead of becoming the hardware's approximations
(``math.exp`` on float64 became ``ex2.approx.f32`` without it)."""

from __future__ import annotations

import functools
import glob
import importlib.util
import os

from ..errors import XpucError

# CUDA_HOME: a toolkit chosen by the user; the PyPI wheel (the cuda extra's
# nvidia-nvvm, which CUDA 13 installs under nvidia/cu13); the toolkit's usual place
_TOOLKIT_VARIABLES = ("CUDA_HOME", "CUDA_PATH")
_DEFAULT_TOOLKIT = "/usr/local/cuda"
_IN_TOOLKIT = os.path.join("nvvm", "libdevice", "libdevice.*.bc")


@functools.cache
def libdevice_path() -> str:
    """The path of libdevice's bitcode, or an XpucError saying where it was sought."""
    roots = [os.environ[name] for name in _TOOLKIT_VARIABLES if os.environ.get(name)]
    spec = importlib.util.find_spec("nvidia")
    if spec is not None and spec.submodule_search_locations:
        # newest CUDA first: nvidia/cu13 before nvidia/cu12
        roots += [path for location in spec.submodule_search_locations
                  for path in sorted(glob.glob(os.path.join(location, "cu*")), reverse=True)]
    roots.append(_DEFAULT_TOOLKIT)
    for root in roots:
        found = sorted(glob.glob(os.path.join(root, _IN_TOOLKIT)))
        if found:
            return found[-1]
    raise XpucError("no libdevice (nvvm/libdevice/libdevice.*.bc) under "
                    f"{', '.join(roots)}: install xpuc[cuda] (PyPI's nvidia-nvvm) or set "
                    "CUDA_HOME to a CUDA toolkit")
