"""The C runtime (libxpuc_runtime.so) through its ctypes binding, xpuc.runtime.

Kernels come from tests/data/kernels.spvasm, assembled with spirv-as, so these
tests need no part of the compiler.
"""

import itertools
import threading
from pathlib import Path

import dpctl
import numpy as np
import pytest
from device_support import assemble

import xpuc
from xpuc import runtime as rt
from xpuc.abi import Status
from xpuc.array_library import tensor as dpt
from xpuc.errors import DeviceError

_hashes = itertools.count(1)


def fresh_hash() -> int:
    """A SPIR-V hash no other launch used, so the module is built anew."""
    return 0x5EED_0000_0000_0000 + next(_hashes)


@pytest.fixture(scope="module")
def spirv(tmp_path_factory) -> bytes:
    return assemble("kernels", tmp_path_factory.mktemp("spirv"))


@pytest.fixture(scope="module")
def sycl_queue() -> dpctl.SyclQueue:
    return dpctl.SyclQueue("opencl:cpu")


@pytest.fixture
def queue(sycl_queue, copying_host_arrays) -> rt.Queue:
    """The CPU device's queue, copying host arrays as other devices need: the
    buffer tests check those copies."""
    rt.reset_stats()
    return rt.queue_handle(sycl_queue)


@pytest.fixture
def device_name(sycl_queue) -> str:
    return sycl_queue.sycl_device.name


def ptr(array: np.ndarray) -> int:
    return array.ctypes.data


def assert_counts(**expected: int) -> None:
    """The runtime's counters named in ``expected`` have those values."""
    current = rt.stats()
    assert {name: current[name] for name in expected} == expected


# ---- library, queues ---------------------------------------------------------


def test_library_and_symbols():
    assert Path(rt.LIBRARY_PATH).name == "libxpuc_runtime.so"
    symbols = rt.symbol_addresses()
    for name in (
        "xpuc_call_begin",
        "xpuc_call_end",
        "xpuc_buffer_acquire",
        "xpuc_buffer_release",
        "xpuc_launch",
        "xpuc_last_error",
    ):
        assert isinstance(symbols[name], int) and symbols[name] != 0


def test_stats_keys_and_reset(queue):
    assert rt.stats() == {
        "kernel_launches": 0,
        "kernel_builds": 0,
        "kernel_cache_hits": 0,
        "h2d_bytes": 0,
        "d2h_bytes": 0,
        "d2d_bytes": 0,
        "usm_allocs": 0,
        "usm_frees": 0,
        "host_parfors": 0,
        "device_waits": 0,
    }


def test_queue_handle_is_cached_per_queue_object(sycl_queue, queue):
    assert rt.queue_handle(sycl_queue) is queue
    assert queue.sycl_queue is sycl_queue
    other = rt.queue_handle(dpctl.SyclQueue("opencl:cpu"))
    assert other is not queue and other.handle != queue.handle


def test_queue_close(sycl_queue):
    queue = rt.Queue(sycl_queue)
    queue.close()
    queue.close()
    with pytest.raises(DeviceError, match="closed"):
        _ = queue.handle


# ---- USM memory and copies ---------------------------------------------------


@pytest.mark.parametrize(
    "kind, name",
    [(rt.USM_DEVICE, "device"), (rt.USM_SHARED, "shared"), (rt.USM_HOST, "host")],
)
def test_usm_alloc_free(queue, sycl_queue, kind, name):
    pointer = rt.usm_alloc(queue, 64, kind)
    assert pointer
    memory = dpctl.memory.as_usm_memory(_UsmView(pointer, 64, sycl_queue))
    assert memory.get_usm_type() == name
    assert_counts(usm_allocs=1, usm_frees=0)
    rt.usm_free(queue, pointer, 64, kind)
    assert_counts(usm_allocs=1, usm_frees=1)


def test_freed_usm_is_reused_by_the_same_request(queue, sycl_queue):
    first = rt.usm_alloc(queue, 1000)
    rt.usm_free(queue, first, 1000)
    assert rt.usm_alloc(queue, 1000) == first  # the same block, no SYCL allocation
    # another kind or a larger size needs a block of its own
    shared = rt.usm_alloc(queue, 1000, rt.USM_SHARED)
    larger = rt.usm_alloc(queue, 4096)
    assert len({first, shared, larger}) == 3
    memory = dpctl.memory.as_usm_memory(_UsmView(shared, 1000, sycl_queue))
    assert memory.get_usm_type() == "shared"
    for pointer, nbytes, kind in ((first, 1000, rt.USM_DEVICE), (shared, 1000, rt.USM_SHARED),
                                  (larger, 4096, rt.USM_DEVICE)):
        rt.usm_free(queue, pointer, nbytes, kind)
    assert_counts(usm_allocs=4, usm_frees=4)


def huge_pages_advised(address: int) -> bool:
    """Whether the mapping holding ``address`` may take transparent huge pages
    (THPeligible in /proc/self/smaps: with THP in "madvise" mode, only memory
    advised MADV_HUGEPAGE may)."""
    eligible = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            start, end = (int(bound, 16) for bound in fields[0].split("-"))
            eligible = start <= address < end
        elif eligible and fields[0] == "THPeligible:":
            return fields[1] == "1"
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.fixture
def huge_pages_on_advice():
    mode = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not mode.exists() or "[never]" in mode.read_text():
        pytest.skip("transparent huge pages are off on this machine")


@pytest.mark.parametrize("kind", [rt.USM_DEVICE, rt.USM_SHARED, rt.USM_HOST])
def test_large_usm_blocks_of_a_cpu_device_ask_for_huge_pages(queue, huge_pages_on_advice,
                                                            kind):
    nbytes = 64 << 20
    pointer = rt.usm_alloc(queue, nbytes, kind)
    try:
        assert huge_pages_advised(pointer)
        assert huge_pages_advised(pointer + nbytes - 1)
    finally:
        rt.usm_free(queue, pointer, nbytes, kind)


def test_asarray_copies_numpy_data_into_memory_advised_huge_pages(sycl_queue,
                                                                  huge_pages_on_advice):
    data = np.arange(8 << 20, dtype=np.float64).reshape(-1, 8)
    for source in (data, np.asfortranarray(data), data[::2]):
        copy = xpuc.asarray(source, queue=sycl_queue)
        assert huge_pages_advised(copy.usm_data._pointer)
        assert copy.flags.f_contiguous == (source.flags.f_contiguous
                                           and not source.flags.c_contiguous)
        np.testing.assert_array_equal(dpt.asnumpy(copy), source)


def test_usm_advice_checks_its_arguments(queue):
    with pytest.raises(DeviceError, match="needs a queue and a block"):
        rt.usm_advise(queue, 0, 4096)


def test_freed_usm_is_not_reused_on_another_context(queue, sycl_queue):
    device = sycl_queue.sycl_device
    other = rt.Queue(dpctl.SyclQueue(dpctl.SyclContext([device]), device))
    pointer = rt.usm_alloc(queue, 512)
    rt.usm_free(queue, pointer, 512)
    elsewhere = rt.usm_alloc(other, 512)
    assert elsewhere != pointer
    rt.usm_free(other, elsewhere, 512)


class _UsmView:
    """Just enough of __sycl_usm_array_interface__ for dpctl to inspect a pointer."""

    def __init__(self, pointer: int, nbytes: int, queue: dpctl.SyclQueue) -> None:
        self.__sycl_usm_array_interface__ = {
            "data": (pointer, False),
            "shape": (nbytes,),
            "strides": None,
            "typestr": "|u1",
            "version": 1,
            "syclobj": queue,
        }


def test_usm_alloc_zero_bytes_and_bad_kind(queue):
    pointer = rt.usm_alloc(queue, 0)
    assert pointer
    rt.usm_free(queue, pointer, 0)
    with pytest.raises(DeviceError, match="unknown USM kind 7"):
        rt.usm_alloc(queue, 8, 7)
    assert_counts(usm_allocs=1, usm_frees=1)


def test_copies_both_ways(queue):
    source = np.arange(100, dtype=np.float64)
    result = np.zeros_like(source)
    device = rt.usm_alloc(queue, source.nbytes)
    rt.copy_to_device(queue, device, ptr(source), source.nbytes)
    rt.copy_to_host(queue, ptr(result), device, source.nbytes)
    rt.copy_to_device(queue, device, ptr(source), 0)  # zero bytes: a no-op
    rt.usm_free(queue, device, source.nbytes)
    np.testing.assert_array_equal(result, source)
    assert_counts(h2d_bytes=800, d2h_bytes=800)


def test_copy_with_bad_arguments(queue):
    with pytest.raises(DeviceError, match="bad arguments"):
        rt.copy_to_host(queue, 0, 0, 8)


def test_device_copy_within_a_call(queue):
    """Device memory to device memory on the call's queue, counted apart
    from the copies to and from the host."""
    source = np.arange(100, dtype=np.float64)
    result = np.zeros_like(source)
    first, second = rt.usm_alloc(queue, source.nbytes), rt.usm_alloc(queue, source.nbytes)
    rt.copy_to_device(queue, first, ptr(source), source.nbytes)
    rt.call_begin(queue)
    try:
        rt.device_copy(second, first, source.nbytes)
        rt.device_copy(second, first, 0)  # zero bytes: a no-op
    finally:
        rt.call_end()
    rt.copy_to_host(queue, ptr(result), second, source.nbytes)
    for pointer in (first, second):
        rt.usm_free(queue, pointer, source.nbytes)
    np.testing.assert_array_equal(result, source)
    assert_counts(h2d_bytes=800, d2h_bytes=800, d2d_bytes=800)


def test_device_copy_outside_a_call_or_with_bad_arguments(queue):
    pointer = rt.usm_alloc(queue, 64)
    try:
        with pytest.raises(DeviceError, match="xpuc_device_copy outside a call"):
            rt.device_copy(pointer, pointer, 64)
        rt.call_begin(queue)
        try:
            for dst, nbytes in ((0, 8), (pointer, -1)):
                with pytest.raises(DeviceError, match=rf"bad arguments to xpuc_device_copy "
                                                      rf"\({nbytes} bytes\)"):
                    rt.device_copy(dst, pointer, nbytes)
        finally:
            rt.call_end()
    finally:
        rt.usm_free(queue, pointer, 64)
    assert_counts(d2d_bytes=0)


# ---- calls and their buffers -------------------------------------------------


def test_host_arrays_are_used_in_place_on_a_device_that_can(sycl_queue):
    """The CPU device has usm_system_allocations: a buffer is the host memory
    itself, with nothing allocated, copied or registered."""
    assert sycl_queue.sycl_device.has_aspect_usm_system_allocations
    queue = rt.queue_handle(sycl_queue)
    rt.reset_stats()
    host = np.arange(10, dtype=np.int64)
    rt.call_begin(queue)
    try:
        rt.call_register(ptr(host), host.nbytes)
        assert rt.buffer_acquire(ptr(host), host.nbytes, copy_in=True) == ptr(host)
        assert rt.buffer_acquire(ptr(host[3:]), 8, copy_in=False) == ptr(host[3:])
        rt.buffer_release(ptr(host), host.nbytes, copy_out=True)
        rt.host_access(ptr(host), host.nbytes, writes=True)
    finally:
        rt.call_end()
    assert_counts(h2d_bytes=0, d2h_bytes=0, usm_allocs=0, usm_frees=0)


def test_buffers_are_reused_within_a_call(queue):
    host = np.arange(10, dtype=np.int64)
    rt.call_begin(queue)
    device = rt.buffer_acquire(ptr(host), host.nbytes, copy_in=True)
    assert rt.buffer_acquire(ptr(host), host.nbytes, copy_in=False) == device
    # Stand in for a kernel: change the device copy, then copy it back.
    rt.copy_to_device(queue, device, ptr(host * 2), host.nbytes)
    rt.buffer_release(ptr(host), host.nbytes, copy_out=True)
    assert_counts(usm_allocs=1, usm_frees=0)
    rt.call_end()
    np.testing.assert_array_equal(host, np.arange(10) * 2)
    assert rt.stats() == {
        "kernel_launches": 0,
        "kernel_builds": 0,
        "kernel_cache_hits": 0,
        "h2d_bytes": 160,  # acquire's copy-in and the stand-in kernel
        "d2h_bytes": 80,
        "d2d_bytes": 0,
        "usm_allocs": 1,
        "usm_frees": 1,
        "host_parfors": 0,
        # the caller's queue at call_begin, and the three copies
        "device_waits": 4,
    }


def test_buffer_grows_and_keeps_device_contents(queue):
    host = np.zeros(8, dtype=np.int64)
    rt.call_begin(queue)
    small = rt.buffer_acquire(ptr(host), 32, copy_in=False)
    rt.copy_to_device(queue, small, ptr(np.arange(4, dtype=np.int64)), 32)
    rt.buffer_acquire(ptr(host), 64, copy_in=False)
    rt.buffer_release(ptr(host), 32, copy_out=True)
    rt.call_end()
    np.testing.assert_array_equal(host, [0, 1, 2, 3, 0, 0, 0, 0])
    assert_counts(usm_allocs=2, usm_frees=2)


def test_nested_calls_free_at_the_outermost_end(queue, sycl_queue):
    host = np.ones(4)
    rt.call_begin(queue)
    device = rt.buffer_acquire(ptr(host), host.nbytes, copy_in=True)
    # Another queue on the same context and device may nest.
    inner = rt.Queue(dpctl.SyclQueue(sycl_queue.sycl_context, sycl_queue.sycl_device))
    rt.call_begin(inner)
    assert rt.buffer_acquire(ptr(host), host.nbytes, copy_in=False) == device
    rt.call_end()
    assert_counts(usm_frees=0)
    assert rt.buffer_acquire(ptr(host), host.nbytes, copy_in=False) == device
    rt.call_end()
    assert_counts(usm_allocs=1, usm_frees=1)
    with pytest.raises(DeviceError, match="xpuc_call_begin was not called"):
        rt.call_end()


def test_nesting_on_another_context_is_refused(queue, sycl_queue, device_name):
    device = sycl_queue.sycl_device
    elsewhere = rt.Queue(dpctl.SyclQueue(dpctl.SyclContext([device]), device))
    rt.call_begin(queue)
    try:
        with pytest.raises(DeviceError, match="cannot nest") as error:
            rt.call_begin(elsewhere)
        assert device_name in str(error.value)
    finally:
        rt.call_end()  # the refused begin opened no call
    with pytest.raises(DeviceError):
        rt.call_end()


def test_call_enter_begins_on_the_named_queue(queue):
    host = np.ones(4)
    rt.call_queue(queue)
    assert rt._lib.xpuc_call_enter() == 0  # what compiled code's entry calls first
    try:
        assert rt.buffer_acquire(ptr(host), host.nbytes, copy_in=True)
    finally:
        rt.call_end()
    assert_counts(usm_allocs=1, usm_frees=1)
    with pytest.raises(DeviceError, match="xpuc_call_begin was not called"):
        rt.call_end()


def test_call_enter_nests_in_a_begun_call(queue, sycl_queue):
    host = np.ones(4)
    other = rt.Queue(dpctl.SyclQueue(dpctl.SyclContext([sycl_queue.sycl_device]),
                                     sycl_queue.sycl_device))
    rt.call_queue(other)  # another context: a begin there could not nest
    rt.call_begin(queue)
    try:
        device = rt.buffer_acquire(ptr(host), host.nbytes, copy_in=True)
        assert rt._lib.xpuc_call_enter() == 0
        assert rt.buffer_acquire(ptr(host), host.nbytes, copy_in=False) == device
        rt.call_end()
        assert_counts(usm_frees=0)  # the outer call holds the buffer
    finally:
        rt.call_end()
        rt.call_queue(None)
    assert_counts(usm_allocs=1, usm_frees=1)


def test_call_enter_without_a_named_queue_fails(sycl_queue):
    queue = rt.Queue(sycl_queue)
    rt.call_queue(queue)
    queue.close()  # unnames it
    assert rt._lib.xpuc_call_enter() == Status.ERR_INVALID
    assert "no queue to run on" in rt.last_error()
    with pytest.raises(DeviceError, match="xpuc_call_begin was not called"):
        rt.call_end()  # the failed enter opened no call


def test_zero_byte_buffers(queue):
    host = np.empty(0)
    rt.call_begin(queue)
    assert rt.buffer_acquire(ptr(host), 0, copy_in=True)
    rt.buffer_release(ptr(host), 0, copy_out=True)
    rt.call_end()
    assert_counts(usm_allocs=1, usm_frees=1, h2d_bytes=0, d2h_bytes=0)


def test_buffers_outside_a_call_or_not_acquired(queue):
    host = np.ones(4)
    with pytest.raises(DeviceError, match="xpuc_buffer_acquire outside a call"):
        rt.buffer_acquire(ptr(host), host.nbytes, copy_in=True)
    rt.call_begin(queue)
    try:
        with pytest.raises(DeviceError, match="did not acquire"):
            rt.buffer_release(ptr(host), host.nbytes, copy_out=True)
        rt.buffer_acquire(ptr(host), 8, copy_in=True)
        with pytest.raises(DeviceError, match="has only 8 bytes on the device"):
            rt.buffer_release(ptr(host), host.nbytes, copy_out=True)
    finally:
        rt.call_end()


def test_call_end_frees_after_an_error(queue):
    a, b = np.ones(16), np.ones(4)
    rt.call_begin(queue)
    rt.buffer_acquire(ptr(a), a.nbytes, copy_in=True)
    rt.buffer_acquire(ptr(b), b.nbytes, copy_in=False)
    with pytest.raises(DeviceError):
        rt.launch(b"not SPIR-V", "add", [], (1,))
    rt.call_end()
    assert_counts(usm_allocs=2, usm_frees=2)


def test_calls_are_per_thread(queue):
    host = np.ones(4)
    errors = []

    def other_thread():
        try:
            rt.buffer_acquire(ptr(host), host.nbytes, copy_in=True)
        except DeviceError as error:
            errors.append(str(error))

    rt.call_begin(queue)
    try:
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    finally:
        rt.call_end()
    assert len(errors) == 1 and "outside a call" in errors[0]


# ---- launches ------------------------------------------------------------------


def run_add(queue, spirv: bytes, n: int, spirv_hash: int, global_size: int) -> None:
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, dtype=np.float32)
    c = np.zeros(n, dtype=np.float32)
    rt.call_begin(queue)
    try:
        args = [
            (rt.ARG_PTR, rt.buffer_acquire(ptr(a), a.nbytes, copy_in=True)),
            (rt.ARG_PTR, rt.buffer_acquire(ptr(b), b.nbytes, copy_in=True)),
            (rt.ARG_PTR, rt.buffer_acquire(ptr(c), c.nbytes, copy_in=False)),
            (rt.ARG_I64, n),
        ]
        rt.launch(spirv, "add", args, (global_size,), spirv_hash_value=spirv_hash)
        rt.buffer_release(ptr(c), c.nbytes, copy_out=True)
    finally:
        rt.call_end()
    np.testing.assert_array_equal(c, a + b)


def test_launch_builds_once_then_hits_the_cache(queue, spirv):
    spirv_hash = fresh_hash()
    run_add(queue, spirv, 1000, spirv_hash, global_size=1024)  # 24 items out of range
    assert_counts(kernel_launches=1, kernel_builds=1, kernel_cache_hits=0)
    run_add(queue, spirv, 1000, spirv_hash, global_size=1000)
    assert_counts(kernel_launches=2, kernel_builds=1, kernel_cache_hits=1)
    assert_counts(usm_allocs=6, usm_frees=6)


def test_module_is_built_once_across_threads(queue, spirv):
    spirv_hash = fresh_hash()
    errors = []

    def worker():
        try:
            run_add(queue, spirv, 256, spirv_hash, global_size=256)
        except Exception as error:  # noqa: BLE001  (reported below)
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert_counts(kernel_launches=4, kernel_builds=1, kernel_cache_hits=3)


@xpuc.kernel
def _nothing():
    pass


def test_a_module_built_ahead_is_found_by_its_launch(queue, sycl_queue):
    with xpuc.device_context(sycl_queue):
        _nothing[1]()
    ((name, spirv),) = _nothing.inspect_spirv().items()
    rt.reset_stats()
    spirv_hash = fresh_hash()
    assert rt._lib.xpuc_build_ahead(queue.handle, spirv, len(spirv), spirv_hash) == Status.OK
    assert_counts(kernel_builds=1, kernel_launches=0)
    rt.call_begin(queue)
    try:
        rt.launch(spirv, name, [], (1,), spirv_hash_value=spirv_hash)
    finally:
        rt.call_end()
    assert_counts(kernel_launches=1, kernel_builds=1, kernel_cache_hits=1)
    # built already: nothing more to do
    assert rt._lib.xpuc_build_ahead(queue.handle, spirv, len(spirv), spirv_hash) == Status.OK
    assert_counts(kernel_builds=1)


def test_a_module_that_does_not_build_ahead_says_why(queue):
    module = bytes(range(24))
    assert rt._lib.xpuc_build_ahead(queue.handle, module, 24, fresh_hash()) == Status.ERR_BUILD
    assert "malformed module" in rt.last_error()
    assert rt._lib.xpuc_build_ahead(None, module, 24, 0) == Status.ERR_INVALID


def test_kernels_are_cached_per_context_and_device(queue, sycl_queue, spirv):
    # a queue on another context needs its own build; one on the same context
    # and device (another queue object, wrapped anew) finds the first build
    device = sycl_queue.sycl_device
    spirv_hash = fresh_hash()
    run_add(queue, spirv, 64, spirv_hash, global_size=64)
    elsewhere = rt.Queue(dpctl.SyclQueue(dpctl.SyclContext([device]), device))
    run_add(elsewhere, spirv, 64, spirv_hash, global_size=64)
    assert_counts(kernel_launches=2, kernel_builds=2, kernel_cache_hits=0)
    same_place = rt.Queue(dpctl.SyclQueue(sycl_queue.sycl_context, device))
    run_add(same_place, spirv, 64, spirv_hash, global_size=64)
    run_add(elsewhere, spirv, 64, spirv_hash, global_size=64)
    assert_counts(kernel_launches=4, kernel_builds=2, kernel_cache_hits=2)


def test_kernel_cache_holds_many_modules(queue, spirv):
    hashes = [fresh_hash() for _ in range(40)]
    for spirv_hash in hashes + hashes:
        run_add(queue, spirv, 8, spirv_hash, global_size=8)
    assert_counts(kernel_launches=80, kernel_builds=40, kernel_cache_hits=40)


@pytest.mark.parametrize("local_size", [None, (4, 3), (2, 1)])
def test_launch_2d_reverses_ranges_for_sycl(queue, spirv, local_size):
    width, height = 8, 3
    out = np.zeros((height, width), dtype=np.int64)
    rt.call_begin(queue)
    try:
        device = rt.buffer_acquire(ptr(out), out.nbytes, copy_in=False)
        rt.launch(
            spirv,
            "iota2d",
            [(rt.ARG_PTR, device), (rt.ARG_I64, width)],
            (width, height),
            local_size,
        )
        rt.buffer_release(ptr(out), out.nbytes, copy_out=True)
    finally:
        rt.call_end()
    y, x = np.indices((height, width))
    np.testing.assert_array_equal(out, x + 1000 * y)


def test_launch_passes_every_scalar_kind(queue, spirv):
    out = np.zeros(5, dtype=np.float64)
    rt.call_begin(queue)
    try:
        device = rt.buffer_acquire(ptr(out), out.nbytes, copy_in=False)
        args = [
            (rt.ARG_PTR, device),
            (rt.ARG_I8, -5),
            (rt.ARG_I32, -70000),
            (rt.ARG_I64, -(2**40)),
            (rt.ARG_F32, 1.5),
            (rt.ARG_F64, -2.25),
        ]
        rt.launch(spirv, "scalars", args, (1,))
        rt.buffer_release(ptr(out), out.nbytes, copy_out=True)
    finally:
        rt.call_end()
    np.testing.assert_array_equal(out, [-5, -70000, -(2**40), 1.5, -2.25])


def launch_wg4(queue, spirv: bytes, global_size, local_size) -> np.ndarray:
    out = np.zeros(8, dtype=np.int64)
    rt.call_begin(queue)
    try:
        device = rt.buffer_acquire(ptr(out), out.nbytes, copy_in=True)
        rt.launch(spirv, "wg4", [(rt.ARG_PTR, device)], global_size, local_size)
        rt.buffer_release(ptr(out), out.nbytes, copy_out=True)
    finally:
        rt.call_end()
    return out


def test_fixed_work_group_size(queue, spirv, device_name):
    np.testing.assert_array_equal(launch_wg4(queue, spirv, (8,), (4,)), np.arange(8))
    with pytest.raises(DeviceError, match="launch of kernel 'wg4' failed") as error:
        launch_wg4(queue, spirv, (8,), (2,))
    assert device_name in str(error.value)
    assert_counts(usm_allocs=2, usm_frees=2)


def test_global_size_not_a_multiple_of_local_size(queue, spirv):
    message = r"not a multiple of local size \(global size \(6\), local size \(4\)\)"
    with pytest.raises(DeviceError, match=message):
        launch_wg4(queue, spirv, (6,), (4,))


def test_empty_launch_runs_nothing(queue, spirv):
    np.testing.assert_array_equal(launch_wg4(queue, spirv, (0,), (4,)), np.zeros(8))
    assert_counts(kernel_launches=0, kernel_builds=0)


def test_build_failure_names_device_kernel_hash_and_log(queue, tmp_path, device_name):
    unresolved = assemble("unresolved", tmp_path)
    rt.call_begin(queue)
    try:
        with pytest.raises(DeviceError) as error:
            rt.launch(
                unresolved, "calls_missing", [], (1,), spirv_hash_value=0xDEADBEEF
            )
    finally:
        rt.call_end()
    message = str(error.value)
    assert message.startswith(
        "xpuc: build of SPIR-V module 00000000deadbeef (224 bytes, for kernel "
        f"'calls_missing') failed on device '{device_name}': build log:"
    )
    assert "xpuc_test_missing" in message  # the unresolved symbol, from the log
    assert_counts(kernel_builds=1, kernel_launches=0)


@pytest.mark.parametrize(
    "mangle, reason",
    [
        (lambda spirv: b"not SPIR-V", "not a whole number of words"),
        (lambda spirv: bytes(64), "no SPIR-V magic number"),
        # Intel's OpenCL runtime hangs on the first and crashes on the others.
        (lambda spirv: spirv[:20] + bytes(44), "zero word count"),
        (lambda spirv: spirv[:-40] + b"\xff\xff\xff\x7f", "running past the end"),
        (lambda spirv: spirv[:-8], "does not end with OpFunctionEnd"),
    ],
)
def test_malformed_spirv_is_refused(queue, spirv, device_name, mangle, reason):
    rt.call_begin(queue)
    try:
        with pytest.raises(DeviceError, match=f"malformed module: .*{reason}") as error:
            rt.launch(mangle(spirv), "add", [], (1,))
    finally:
        rt.call_end()
    assert f"for kernel 'add') failed on device '{device_name}'" in str(error.value)


def test_unknown_kernel_name(queue, spirv, device_name):
    rt.call_begin(queue)
    try:
        with pytest.raises(
            DeviceError, match="no kernel 'nope' in SPIR-V module"
        ) as error:
            rt.launch(spirv, "nope", [], (1,))
    finally:
        rt.call_end()
    assert device_name in str(error.value)


def test_call_launch_is_a_launch_in_a_call_of_its_own(queue, sycl_queue, spirv):
    n = 8
    a, b = (dpt.asarray(np.arange(n, dtype=np.float32) * k, sycl_queue=sycl_queue)
            for k in (1, 2))
    c = dpt.zeros(n, dtype=np.float32, sycl_queue=sycl_queue)
    add = rt.KernelLaunch(spirv, "add", [rt.ARG_PTR] * 3 + [rt.ARG_I64])
    add([a._pointer, b._pointer, c._pointer, n], (n,), queue=queue)
    np.testing.assert_array_equal(dpt.asnumpy(c), np.arange(n) * 3.0)
    assert_counts(kernel_launches=1)
    with pytest.raises(DeviceError, match="xpuc_call_begin was not called"):
        rt.call_end()  # its call ended
    nope = rt.KernelLaunch(spirv, "nope", [])
    with pytest.raises(DeviceError, match="no kernel 'nope' in SPIR-V module"):
        nope([], (1,), queue=queue)
    with pytest.raises(DeviceError, match="xpuc_call_begin was not called"):
        rt.call_end()  # ended after the failed launch too


def test_launch_without_call_begin(spirv):
    with pytest.raises(DeviceError, match="xpuc_launch outside a call"):
        rt.launch(spirv, "add", [], (1,))


def test_launch_with_bad_arguments(queue, spirv):
    rt.call_begin(queue)
    try:
        with pytest.raises(DeviceError, match="'add' .* takes 4 arguments, not 1"):
            rt.launch(spirv, "add", [(rt.ARG_PTR, 0)], (1,))
        with pytest.raises(DeviceError, match="at most 256"):
            rt.launch(spirv, "add", [(rt.ARG_I64, 0)] * 257, (1,))
        with pytest.raises(DeviceError, match="unknown kind 9"):
            rt.launch(spirv, "add", [(9, 0)], (1,))
        with pytest.raises(DeviceError, match="all zero or all positive"):
            rt.launch(
                spirv, "iota2d", [(rt.ARG_PTR, 0), (rt.ARG_I64, 1)], (8, 3), (4, 0)
            )
        with pytest.raises(DeviceError, match="negative size"):
            rt.launch(spirv, "iota2d", [(rt.ARG_PTR, 0), (rt.ARG_I64, 1)], (8, -3))
        with pytest.raises(DeviceError, match="4 dimensions"):
            rt.launch(spirv, "add", [], (1, 1, 1, 1))
    finally:
        rt.call_end()
