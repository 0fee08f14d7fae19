"""xpuc where dpctl and dpnp are not installed (the CUDA machine's case):
each test runs a fresh process whose imports of dpctl and dpnp fail as an
absent package's do."""

import subprocess
import sys
import textwrap

# a meta path finder that reports dpctl and dpnp (and their modules) missing
_HIDE_SYCL = textwrap.dedent("""
    import importlib.abc, sys

    class HideSycl(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in ("dpctl", "dpnp"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, HideSycl())
""")


def _run_without_sycl(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _HIDE_SYCL + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=600)


def test_import_and_cpu_calls_need_no_dpctl():
    """import xpuc, then a jit function on NumPy arrays outside any device
    context: Numba's CPU build, as with dpctl (SPEC rule 1)."""
    result = _run_without_sycl("""
        import sys
        import numpy as np
        import numba
        import xpuc

        @xpuc.jit
        def scaled(a):
            out = np.empty_like(a)
            for i in numba.prange(a.shape[0]):
                out[i] = 2.0 * a[i]
            return out

        a = np.arange(10.0)
        assert (scaled(a) == 2.0 * a).all()
        print(sorted(m for m in sys.modules if m.partition(".")[0] in ("dpctl", "dpnp")))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_sycl_device_without_dpctl_is_an_error_saying_so():
    result = _run_without_sycl("""
        import xpuc

        try:
            with xpuc.device_context("opencl:cpu"):
                pass
        except xpuc.DeviceError as error:
            print(error)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ("xpuc: SYCL devices need dpctl, which is not installed: "
                                     "pip install dpctl==0.22.1 dpnp==0.20.0")


def test_placement_errors_without_a_usm_library_are_xpucs_own():
    """No dpctl, no dpnp: ExecutionPlacementError is xpuc's class, and a
    placement error (CUDA arrays on two devices, here fakes on fake devices)
    is one."""
    result = _run_without_sycl("""
        import xpuc
        from xpuc import cuda_runtime, errors

        cuda_runtime.CudaDevice.open = classmethod(
            lambda cls, ordinal: cls(ordinal, 0, f"GPU {ordinal}", (9, 0)))

        class OnDevice:
            def __init__(self, ordinal):
                self.ordinal = ordinal
                self.__cuda_array_interface__ = {
                    "shape": (2,), "typestr": "<f8", "data": (0xDEAD0000, False),
                    "version": 3}

            def __dlpack_device__(self):
                return (2, self.ordinal)

        @xpuc.jit
        def add(a, b):
            return a + b

        assert xpuc.ExecutionPlacementError is errors.ExecutionPlacementError
        try:
            add(OnDevice(0), OnDevice(1))
        except xpuc.ExecutionPlacementError as error:
            print(error)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("add: CUDA arrays on different devices: a on cuda:0 (GPU 0), "
                                    "b on cuda:1 (GPU 1)")
