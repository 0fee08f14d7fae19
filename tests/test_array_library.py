"""The USM array library of the environment (dpctl.tensor with dpctl 0.21,
dpnp.tensor with dpnp 0.20), arrays known only by their USM interface, dpnp
arrays in and out, and DLPack in and out of xpuc (docs/spec.md, "Array
libraries"). Every test runs on both supported stacks."""

import subprocess
import sys
import textwrap

import dpctl
import dpnp
import numpy as np
import pytest

import xpuc
from xpuc import array_library
from xpuc.array_library import find_tensor_library
from xpuc.array_library import tensor as dpt

DEVICE = "opencl:cpu"


@xpuc.jit
def fma(a, b, c):
    return a * b + c


# ---- which library ---------------------------------------------------------------

def test_the_library_is_the_one_dpnp_arrays_are_made_of():
    assert type(dpnp.arange(3.0).get_array()) is array_library.usm_ndarray
    has_dpctl_tensor = int(dpctl.__version__.split(".")[1]) <= 21
    assert array_library.tensor.__name__ == (
        "dpctl.tensor" if has_dpctl_tensor else "dpnp.tensor")


def test_the_first_library_present_is_taken():
    assert find_tensor_library(("xpuc_test_absent.tensor", "json")) is sys.modules["json"]


def test_without_a_library_the_error_says_what_to_install(monkeypatch):
    # each stack has one of the two: hiding it leaves none
    monkeypatch.setitem(sys.modules, array_library.tensor.__name__, None)
    with pytest.raises(ImportError) as info:
        find_tensor_library()
    assert "dpctl==0.22.1 dpnp==0.20.0" in str(info.value)
    assert "dpctl==0.21.1 dpnp==0.19.1" in str(info.value)


def test_a_library_that_fails_to_import_is_not_skipped(tmp_path, monkeypatch):
    (tmp_path / "xpuc_test_broken").mkdir()
    (tmp_path / "xpuc_test_broken" / "__init__.py").write_text(
        "import xpuc_test_missing_dependency\n")
    monkeypatch.syspath_prepend(tmp_path)
    with pytest.raises(ModuleNotFoundError, match="xpuc_test_missing_dependency"):
        find_tensor_library(("xpuc_test_broken", "json"))


# ---- imported when first needed ------------------------------------------------

def run_child(code: str) -> str:
    """``code`` run by a fresh interpreter, its output (a fresh one: this
    process imported the library long ago)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_numpy_arrays_in_a_context_never_import_the_library():
    # dpnp.tensor imports all of dpnp: 0.6 s of every import of xpuc, once
    assert run_child(f"""
        import sys
        import numpy as np
        import xpuc

        @xpuc.jit
        def add(a, b):
            return a + b

        with xpuc.device_context({DEVICE!r}):
            total = add(np.arange(4.0), np.ones(4)).sum()
        print(total, xpuc.stats()["kernel_launches"],
              any(name in sys.modules for name in ("dpnp", "dpctl.tensor", "dpnp.tensor")))
    """) == "10.0 1 False"


def test_usm_arrays_of_a_library_imported_after_xpuc_are_known():
    # Numba learns their type when xpuc first meets one, as arguments of
    # jit functions and kernels, and its planned calls take them from then on
    assert run_child(f"""
        import numpy as np
        import xpuc

        @xpuc.jit
        def add(a, b):
            return a + b

        @xpuc.kernel
        def double(a):
            i = xpuc.get_global_id(0)
            a[i] *= 2.0

        from xpuc.array_library import tensor as dpt
        import dpnp

        x = dpt.asarray(np.arange(4.0), device={DEVICE!r})
        y = dpnp.ones(4, device={DEVICE!r})
        double[4](x)
        results = [add(x, x), add(x, x), add(y, y), add(y, y)]
        print([float(dpt.sum(r) if isinstance(r, dpt.usm_ndarray) else r.sum())
               for r in results], type(results[2]).__module__.split(".")[0],
              xpuc.stats()["kernel_launches"])
    """) == "[24.0, 24.0, 8.0, 8.0] dpnp 5"


def test_placement_error_is_the_librarys_when_first_raised():
    assert run_child(f"""
        import numpy as np
        import xpuc

        @xpuc.jit
        def add(a, b):
            return a + b

        from xpuc.array_library import tensor as dpt
        other = dpt.asarray([1.0], device={DEVICE!r})
        try:
            with xpuc.device_context({DEVICE!r}):
                add(np.ones(1), other)
        except Exception as error:
            print(type(error) is xpuc.ExecutionPlacementError,
                  type(error).__module__.split(".")[0])
    """) in ("True dpctl", "True dpnp")


# ---- arrays in, arrays out ---------------------------------------------------------

class UsmInterfaceOnly:
    """An array known only by ``__sycl_usm_array_interface__`` (no
    ``sycl_queue``, no array library class)."""

    def __init__(self, array) -> None:
        self.array = array  # owns the memory
        self.__sycl_usm_array_interface__ = array.__sycl_usm_array_interface__


def test_an_array_known_by_its_usm_interface_alone():
    a = dpt.arange(6.0, sycl_queue=dpctl.SyclQueue(DEVICE))
    result = fma(UsmInterfaceOnly(a), a, UsmInterfaceOnly(a))
    assert type(result) is array_library.usm_ndarray
    np.testing.assert_array_equal(dpt.asnumpy(result), np.arange(6.0) ** 2 + np.arange(6.0))


def test_dpnp_in_dpnp_out_and_usm_ndarray_in_usm_ndarray_out():
    a = dpnp.arange(5.0)
    assert isinstance(fma(a, a, a), dpnp.ndarray)
    assert isinstance(fma(a.get_array(), a, a), dpnp.ndarray)
    # not dpnp's, although on dpnp 0.20 usm_ndarray's module is dpnp's too
    usm = a.get_array()
    result = fma(usm, UsmInterfaceOnly(usm), usm)
    assert type(result) is array_library.usm_ndarray
    np.testing.assert_array_equal(dpt.asnumpy(result), np.arange(5.0) ** 2 + np.arange(5.0))


# ---- DLPack in -------------------------------------------------------------------------

class DLPackOnly:
    """An array offered through DLPack alone (as another library's would be)."""

    def __init__(self, array) -> None:
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_asarray_of_usm_memory_through_dlpack_shares_it():
    source = dpt.arange(8.0, sycl_queue=dpctl.SyclQueue(DEVICE))
    result = xpuc.asarray(DLPackOnly(source))
    assert type(result) is array_library.usm_ndarray
    assert result._pointer == source._pointer
    assert result.sycl_device == source.sycl_device
    # on another queue of the same device and context: still no copy
    queue = dpctl.SyclQueue(source.sycl_context, source.sycl_device)
    on_queue = xpuc.asarray(DLPackOnly(source), queue=queue)
    assert on_queue._pointer == source._pointer and on_queue.sycl_queue == queue


def test_asarray_of_a_dpnp_array_shares_its_memory():
    source = dpnp.arange(8.0)
    result = xpuc.asarray(source)
    assert result._pointer == source.get_array()._pointer


def test_asarray_of_host_memory_through_dlpack_copies_it_to_the_device():
    values = np.arange(12.0).reshape(3, 4)
    queue = dpctl.SyclQueue(DEVICE)
    result = xpuc.asarray(DLPackOnly(values), queue=queue, usm_type="shared")
    assert type(result) is array_library.usm_ndarray
    assert result.usm_type == "shared" and result.sycl_queue == queue
    np.testing.assert_array_equal(dpt.asnumpy(result), values)
    # the result computes like any USM array
    np.testing.assert_array_equal(dpt.asnumpy(fma(result, result, result)),
                                  values * values + values)


class OnUnreachableDevice:
    """A DLPack producer whose memory is on a CUDA device (kDLCUDA = 2)."""

    def __dlpack__(self, **kwargs):
        raise AssertionError("xpuc.asarray must not ask for the data")

    def __dlpack_device__(self):
        return (2, 0)


def test_asarray_refuses_memory_no_sycl_queue_reaches():
    with pytest.raises(ValueError, match=r"DLPack device type 2 .*np\.from_dlpack"):
        xpuc.asarray(OnUnreachableDevice())


def test_asarray_refuses_dlpack_without_a_device():
    class NoDevice:
        def __dlpack__(self, **kwargs):
            raise AssertionError("not reached")

    with pytest.raises(TypeError, match="no __dlpack_device__"):
        xpuc.asarray(NoDevice())


# ---- DLPack out ----------------------------------------------------------------------

def test_results_go_to_other_libraries_through_dlpack():
    queue = dpctl.SyclQueue(DEVICE)
    a = xpuc.asarray(np.arange(6.0), queue=queue, usm_type="shared")
    result = fma(a, a, a)
    expected = np.arange(6.0) ** 2 + np.arange(6.0)
    # SYCL consumers share the memory
    assert dpnp.from_dlpack(result).get_array()._pointer == result._pointer
    assert xpuc.asarray(DLPackOnly(result), usm_type="shared")._pointer == result._pointer
    # NumPy asks for host memory; dpctl's export copies there (it reports its
    # arrays as oneAPI memory, even shared USM on the CPU device)
    host = np.from_dlpack(result, device="cpu")
    np.testing.assert_array_equal(host, expected)
    with pytest.raises(BufferError):
        np.from_dlpack(result, device="cpu", copy=False)
