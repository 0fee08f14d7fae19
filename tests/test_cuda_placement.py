"""Where calls with CUDA arrays run, without a GPU: arrays that offer
``__cuda_array_interface__`` or DLPack on a CUDA device place a call on
their device, and mixtures raise the placement errors the SYCL path raises,
naming both sides. The CUDA devices here are fakes (``CudaDevice.open``
patched) and so are the arrays, whose pointers nothing may read: every
error comes before any compile or launch. Compiles for ``sm_90`` check
the types compiled code gives CUDA arrays; the PTX is validated by ptxas
(tests/conftest.py)."""

import gc
import pickle
import sys

import numba
import numpy as np
import pytest

import xpuc
from xpuc import cuda_runtime, device, dlpack
from xpuc.frontend.cuda_arrays import (
    CudaArray,
    CudaArrayArgument,
    cuda_array_type,
    is_cuda_array,
)

NOWHERE = 0xDEAD0000  # no memory of any device: a fake's data, never read


class FakeCudaArray:
    """What CuPy's arrays offer a consumer, describing no memory."""

    __module__ = "cupy"  # the library whose arrays a call would return

    def __init__(self, shape, ordinal=0, typestr="<f8", strides=None, mask=None):
        self.ordinal = ordinal
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": typestr, "data": (NOWHERE, False), "version": 3,
            "strides": strides, "stream": 1, "mask": mask}

    def __dlpack_device__(self):
        return (dlpack.KDL_CUDA, self.ordinal)


class CpuTensor:
    """A PyTorch CPU tensor's manners: the attribute is there, and refuses."""

    @property
    def __cuda_array_interface__(self):
        raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor type")

    def __dlpack_device__(self):
        return (dlpack.KDL_CPU, 0)


@pytest.fixture(autouse=True)
def fake_devices(monkeypatch):
    """cuda:N opens as a fake device named after N (no driver call)."""
    monkeypatch.setattr(cuda_runtime.CudaDevice, "open", classmethod(
        lambda cls, ordinal: cls(ordinal, 0, f"Fake GPU {ordinal}", (9, 0))))
    device.cuda_queue.cache_clear()
    yield
    device.cuda_queue.cache_clear()
    xpuc.set_default_device(None)


@xpuc.jit
def add(a, b):
    return a + b


def has_sycl() -> bool:
    try:
        import dpctl  # noqa: F401
    except ImportError:
        return False
    return True


needs_sycl = pytest.mark.skipif(not has_sycl(), reason="no dpctl: no SYCL device to mix with")


def test_what_counts_as_a_cuda_array():
    assert is_cuda_array(FakeCudaArray((3,)))
    assert not is_cuda_array(CpuTensor())
    assert not is_cuda_array(np.ones(3))
    assert not is_cuda_array(3.0)

    class DLPackOnCuda:
        def __dlpack_device__(self):
            return (dlpack.KDL_CUDA_MANAGED, 1)

    assert is_cuda_array(DLPackOnCuda())


def test_cuda_arrays_on_two_devices_are_refused_naming_both():
    with pytest.raises(xpuc.ExecutionPlacementError,
                       match=r"^add: CUDA arrays on different devices: a on cuda:0 \(Fake GPU "
                             r"0\), b on cuda:1 \(Fake GPU 1\) \(different devices\); copy one "
                             r"to the other's device"):
        add(FakeCudaArray((4,), 0), FakeCudaArray((4,), 1))


def test_numpy_and_cuda_arrays_are_refused_naming_both():
    with pytest.raises(xpuc.ExecutionPlacementError,
                       match=r"^add: cannot mix NumPy arrays \(b\) with CUDA arrays \(a\): copy "
                             r"them to the GPU"):
        add(FakeCudaArray((4,)), np.ones(4))
    # inside a CUDA device context too (rule 6)
    with xpuc.device_context("cuda:0"):
        with pytest.raises(xpuc.ExecutionPlacementError, match=r"NumPy arrays \(a\) with CUDA "
                                                               r"arrays \(b\)"):
            add(np.ones(4), FakeCudaArray((4,)))


def test_a_cuda_array_on_another_device_than_the_context_is_refused():
    with xpuc.device_context("cuda:0"):
        with pytest.raises(xpuc.ExecutionPlacementError,
                           match=r"^add: a is on cuda:1 \(Fake GPU 1\), but the active device "
                                 r"context is cuda:0 \(Fake GPU 0\) \(different devices\); a "
                                 r"call with CUDA arrays runs on their device"):
            add(FakeCudaArray((4,), 1), FakeCudaArray((4,), 1))


def test_arrays_in_tuples_and_keywords_take_part():
    @xpuc.jit
    def first(pair, scale=None):
        return pair[0]

    with pytest.raises(xpuc.ExecutionPlacementError,
                       match=r"pair\[0\] on cuda:0 \(Fake GPU 0\), pair\[1\] on cuda:1"):
        first((FakeCudaArray((2,), 0), FakeCudaArray((2,), 1)))
    with pytest.raises(xpuc.ExecutionPlacementError,
                       match=r"cannot mix NumPy arrays \(scale\) with CUDA arrays \(pair\[0\]"):
        first((FakeCudaArray((2,)), 1.0), scale=np.ones(2))


@needs_sycl
def test_cuda_and_usm_arrays_are_refused_naming_both():
    from xpuc.array_library import tensor

    usm = tensor.ones(4)
    with pytest.raises(xpuc.ExecutionPlacementError,
                       match=r"^add: cannot mix CUDA arrays \(a\) with USM arrays \(b\): they are "
                             r"on different devices, cuda:0 \(Fake GPU 0\) and opencl:cpu"):
        add(FakeCudaArray((4,)), usm)
    with pytest.raises(xpuc.ExecutionPlacementError,
                       match=r"^add: cannot mix USM arrays \(a\) with CUDA arrays \(b\)"):
        add(usm, FakeCudaArray((4,)))


@needs_sycl
def test_cuda_arrays_inside_a_sycl_context_and_usm_arrays_inside_a_cuda_one_are_refused():
    from xpuc.array_library import tensor

    with xpuc.device_context("opencl:cpu"):
        with pytest.raises(xpuc.ExecutionPlacementError,
                           match=r"^add: a is on cuda:0 \(Fake GPU 0\), but the active device "
                                 r"context is opencl:cpu"):
            add(FakeCudaArray((4,)), FakeCudaArray((4,)))
    with xpuc.device_context("cuda:0"):
        with pytest.raises(xpuc.ExecutionPlacementError,
                           match=r"^add: a is on opencl:cpu.*, but the active device context is "
                                 r"cuda:0 \(Fake GPU 0\) \(different devices\); move it there"):
            add(tensor.ones(4), tensor.ones(4))


@pytest.mark.parametrize(("interface", "message"), [
    ({"strides": (12,)}, r"add: a: its strides \(12,\) \(bytes\) are not whole elements of "
                         r"float64"),
    ({"mask": (NOWHERE, False)}, r"add: a: a masked __cuda_array_interface__ cannot be "
                                 r"offloaded"),
])
def test_what_compiled_code_cannot_take_is_refused_naming_the_argument(interface, message):
    array = FakeCudaArray((4,))
    array.__cuda_array_interface__.update(interface)
    with pytest.raises(ValueError, match=message):
        add(array, FakeCudaArray((4,)))


@pytest.mark.parametrize(("shape", "strides", "typestr", "expected"), [
    ((5, 3), None, "<f4", "cuda_array(float32, 2d, C)"),
    ((5, 3), (8, 40), "<f8", "cuda_array(float64, 2d, F)"),
    ((5, 3), (48, 16), "<f8", "cuda_array(float64, 2d, A)"),
    ((5, 1), (8, 800), "<i8", "cuda_array(int64, 2d, C)"),  # any stride on an axis of 1
    ((0, 3), (8, 8), "|b1", "cuda_array(bool, 2d, C)"),
])
def test_numba_types_cuda_arrays_by_dtype_rank_and_layout(shape, strides, typestr, expected):
    argument = CudaArrayArgument.of(FakeCudaArray(shape, strides=strides, typestr=typestr))
    assert str(numba.typeof(argument)) == expected


def test_a_read_only_cuda_array_is_typed_read_only():
    array = FakeCudaArray((3,))
    array.__cuda_array_interface__["data"] = (NOWHERE, True)
    assert not numba.typeof(CudaArrayArgument.of(array)).mutable


def test_a_call_with_cuda_arrays_is_placed_on_their_device_with_the_arguments_typed():
    from xpuc.placement import place

    placement = place(add.py_func, (FakeCudaArray((4,), 1), FakeCudaArray((4,), 1)), {})
    assert placement.queue is device.cuda_queue(1)
    assert placement.kind == "CUDA" and placement.reason == "CUDA arguments on cuda:1 (Fake GPU 1)"
    assert [type(a) for a in placement.args] == [CudaArrayArgument] * 2
    # the arguments themselves untouched: a result that is one comes back as it
    assert placement.args[0].source.__cuda_array_interface__["data"][0] == NOWHERE


def test_functions_on_cuda_arrays_compile_for_an_nvidia_architecture():
    """Types only, as compiled for sm_90: arrays made from CUDA arrays are
    CUDA arrays, views of them too; the kernels' PTX is validated by ptxas."""

    @xpuc.jit
    def scaled_tail(a, b):
        first = a[0]  # one element, which the host copies
        return (a + b)[1:] * first

    vector = cuda_array_type(np.dtype("float64"), 1, "C", False)
    dispatcher, _ = scaled_tail._for_device("sm_90")
    dispatcher.compile((vector, vector))
    result = dispatcher.overloads[(vector, vector)].signature.return_type
    assert str(result) == "cuda_array(float64, 1d, C)"
    assert ".entry" in scaled_tail.inspect_lowered((vector, vector))[0].ptx.decode()


def test_host_code_using_cuda_array_elements_is_refused_naming_the_array():
    @xpuc.jit
    def host_loop(a):
        total = 0.0
        for x in a:  # host code over every element
            total += x
        return total

    vector = cuda_array_type(np.dtype("float64"), 1, "C", False)
    dispatcher, _ = host_loop._for_device("sm_90")
    with pytest.raises(xpuc.UnsupportedError,
                       match=r"test_cuda_placement.py:\d+: host code uses elements of the CUDA "
                             r"array 'a', which the host cannot access; do this in a parfor "
                             r"\(prange or an array expression\)$"):
        dispatcher.compile((vector,))


def test_offload_to_and_the_default_device_take_cuda_names():
    placement = xpuc.offload_to("cuda:1")
    assert placement.queue is device.cuda_queue(1)
    assert repr(placement) == "xpuc.offload_to('cuda:1 (Fake GPU 1)')"
    assert pickle.loads(pickle.dumps(placement)).queue is placement.queue
    xpuc.set_default_device("cuda")
    assert xpuc.get_current_queue() is device.cuda_queue(0)
    with xpuc.device_context("cuda:1") as queue:
        assert xpuc.get_current_queue() is queue is device.cuda_queue(1)


def test_asarray_onto_a_cuda_device_is_refused_naming_the_libraries():
    with pytest.raises(ValueError, match=r"xpuc.asarray makes SYCL USM arrays, and cuda:0 "
                                         r"\(Fake GPU 0\) is a CUDA device: make arrays there "
                                         r"with a CUDA array library"):
        xpuc.asarray(np.ones(3), queue="cuda:0")


def test_a_cuda_result_offers_both_protocols():
    """Described on host memory, which only the protocols' readers see."""
    host = np.arange(12.0).reshape(3, 4)[:, ::2]
    result = CudaArray(host.ctypes.data, host.shape, host.strides, host.dtype, 2, host)
    assert result.__dlpack_device__() == (dlpack.KDL_CUDA, 2)
    assert result.__cuda_array_interface__ == {
        "shape": (3, 2), "typestr": "<f8", "data": (host.ctypes.data, False), "version": 3,
        "stream": None, "strides": (32, 16)}
    tensor = dlpack.read_capsule(result.__dlpack__())
    assert (tensor.pointer, tensor.device, tensor.shape, tensor.strides, tensor.dtype) == (
        host.ctypes.data, (dlpack.KDL_CUDA, 2), (3, 2), (4, 2), np.dtype("float64"))
    contiguous = CudaArray(host.ctypes.data, (3,), (8,), host.dtype, 0, host)
    assert contiguous.__cuda_array_interface__["strides"] is None
    with pytest.raises(BufferError, match="never copied"):
        result.__dlpack__(copy=True)
    with pytest.raises(BufferError, match=r"on cuda:2, not DLPack device \(2, 0\)"):
        result.__dlpack__(dl_device=(2, 0))


def test_dlpack_capsules_are_read_and_released():
    array = np.arange(6, dtype=np.int32).reshape(2, 3)
    references = sys.getrefcount(array)
    tensor = dlpack.read_capsule(array.__dlpack__())
    assert (tensor.pointer, tensor.device, tensor.shape, tensor.strides, tensor.dtype) == (
        array.ctypes.data, (dlpack.KDL_CPU, 0), (2, 3), (3, 1), np.dtype("int32"))
    assert sys.getrefcount(array) > references  # the producer holds it for the consumer
    del tensor
    gc.collect()
    assert sys.getrefcount(array) == references  # the deleter ran
    with pytest.raises(ValueError, match="not an unused DLPack capsule"):
        capsule = array.__dlpack__()
        dlpack.read_capsule(capsule)
        dlpack.read_capsule(capsule)


def key(args):
    from xpuc.placement import keyed_arguments

    return keyed_arguments(args)[0]


def test_call_plans_key_cuda_arrays_by_class_device_stream_and_type():
    """Calls with CUDA arrays of a class placement has met skip placement
    after the first: their key says all that placement and compiling read,
    and the arguments come with it as compiled code takes them, each array's
    interface read once."""
    from xpuc.placement import keyed_arguments, place

    class Unmet(FakeCudaArray):
        pass

    unmet = Unmet((4,))
    assert keyed_arguments((unmet,)) == (None, (unmet,))  # never placed: its class unknown
    place(add.py_func, (FakeCudaArray((4,)), FakeCudaArray((4,))), {})
    array = FakeCudaArray((4,))
    first, placed = keyed_arguments((array, 2.0))
    assert first == (FakeCudaArray, 0, 0, "<f8", 1, "C", False, float)
    assert type(placed[0]) is CudaArrayArgument and placed[0].source is array
    assert placed[0].shape == (4,) and placed[1] == 2.0
    assert key((FakeCudaArray((7,)), 2.0)) == first  # the shape is no part of it
    assert key((FakeCudaArray((4,), 1), 2.0)) != first
    assert key((FakeCudaArray((4,), typestr="<f4"), 2.0)) != first
    assert key((FakeCudaArray((4, 2), strides=(8, 32)),)) != key((FakeCudaArray((4, 2)),))
    on_a_stream = FakeCudaArray((4,))
    on_a_stream.__cuda_array_interface__["stream"] = 0x5000
    assert key((on_a_stream, 2.0)) != first
    legacy = FakeCudaArray((4,))  # None and 1 both name the legacy default stream
    legacy.__cuda_array_interface__["stream"] = None
    assert key((legacy, 2.0)) == first
    masked = FakeCudaArray((4,), mask=(NOWHERE, False))
    assert key((masked,)) is None  # placement refuses it, naming it


def test_cuda_arrays_run_on_the_stream_they_name_and_wait_for_the_others(monkeypatch):
    """A call runs on the first CUDA array's stream (CuPy's current one, as
    its interface names it) and waits for the work on the other arrays'
    streams of the device; arrays that name the legacy default stream, or
    none, run where a device context's calls run."""
    from xpuc.placement import place

    waited = []
    monkeypatch.setattr(cuda_runtime.CudaDevice, "synchronize",
                        lambda self, stream: waited.append((self.ordinal, stream)))
    a, b, c = (FakeCudaArray((4,)) for _ in range(3))
    a.__cuda_array_interface__["stream"] = 0x5000
    c.__cuda_array_interface__["stream"] = 0x6000
    placement = place(add.py_func, (a, b, c), {})
    assert placement.queue is device.cuda_queue(0).on_stream(0x5000)
    assert placement.queue.device == device.cuda_queue(0).device
    assert placement.waited == (device.cuda_queue(0), device.cuda_queue(0).on_stream(0x6000))
    assert waited == [(0, 0), (0, 0x6000)]
    assert place(add.py_func, (b, b), {}).queue is device.cuda_queue(0)
    with xpuc.device_context("cuda:0"):  # one device: its streams' queues are equivalent
        assert place(add.py_func, (a, b), {}).queue is device.cuda_queue(0).on_stream(0x5000)


def test_arrays_whose_interface_names_no_stream_run_on_their_librarys(monkeypatch):
    """PyTorch's interface (version 2) names no stream: its tensors are used
    on torch's current stream of their device; another library's such arrays
    on the legacy default stream."""
    import types

    from xpuc.placement import place

    class FakeTensor(FakeCudaArray):
        __module__ = "torch"

        def __init__(self, shape):
            super().__init__(shape)
            del self.__cuda_array_interface__["stream"]
            self.device = "cuda:0"

    class Unnamed(FakeCudaArray):
        __module__ = "somelib"

        def __init__(self, shape):
            super().__init__(shape)
            del self.__cuda_array_interface__["stream"]

    current = types.SimpleNamespace(cuda_stream=0x7000)
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(
        current_stream=lambda device: current if device == "cuda:0" else None))
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert place(add.py_func, (FakeTensor((4,)),) * 2, {}).queue is device.cuda_queue(
        0).on_stream(0x7000)
    assert key((FakeTensor((4,)),))[2] == 0x7000  # the plans' key names it too
    current.cuda_stream = 0  # torch's default stream: the legacy one
    assert place(add.py_func, (FakeTensor((4,)),) * 2, {}).queue is device.cuda_queue(0)
    assert place(add.py_func, (Unnamed((4,)),) * 2, {}).queue is device.cuda_queue(0)
