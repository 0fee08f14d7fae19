"""USM arrays in and out (SPEC rules 2-4, 6, 7, 10): kernels run on the arrays'
queue with no copies, outputs are USM of the coerced usm_type, and placements
that leave the device ambiguous are refused before any work."""

import itertools
import re

import dpctl
import numba
import numpy as np
import pytest
from device_support import still_computing
from numba.core import ir, types
from numba.core.typing.typeof import Purpose

import xpuc
from xpuc.array_library import tensor as dpt
from xpuc.dispatcher import _exact_types
from xpuc.frontend.host_access import DeviceElementRead, insert_host_accesses
from xpuc.frontend.usm import DeviceUSMArray, USMArray
from xpuc.placement import USM_TYPES

QUEUE = dpctl.SyclQueue("opencl:cpu")


@xpuc.jit
def fma(a, b, c):
    return a * b + c


@xpuc.jit
def smooth(a, out):
    for i in numba.prange(1, a.shape[0] - 1):
        out[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1]


@xpuc.jit
def doubled_like(a):
    out = np.empty_like(a)
    for i in numba.prange(a.shape[0]):
        out[i] = 2 * a[i]
    return out


@xpuc.jit
def total(a):
    return a.sum()


@xpuc.jit
def first_element(a):
    b = a + 1.0
    return b[0]


@xpuc.jit
def shape_only(a):
    n = a.shape[0]
    return a * n


@xpuc.jit
def identity(a):
    return a


def usm(values, usm_type="device", queue=QUEUE):
    return dpt.asarray(np.asarray(values), usm_type=usm_type, sycl_queue=queue)


def address(array) -> int:
    return array.__sycl_usm_array_interface__["data"][0]


def run(fn, *args, d2h_bytes=0):
    """``fn(*args)`` with the stats reset, checking that it ran on the device
    and copied nothing (but ``d2h_bytes`` of reduction partials)."""
    xpuc.reset_stats()
    result = fn(*args)
    stats = xpuc.stats()
    assert stats["kernel_launches"] > 0, "nothing ran on the device"
    assert stats["h2d_bytes"] == 0 and stats["d2h_bytes"] == d2h_bytes, "arguments were copied"
    return result


@pytest.mark.parametrize("usm_type", USM_TYPES)
def test_usm_in_usm_out_without_a_context(usm_type):
    a = np.linspace(0, 1, 1001, dtype=np.float32)
    result = run(fma, usm(a, usm_type), usm(a, usm_type), usm(a, usm_type))
    assert isinstance(result, dpt.usm_ndarray)
    assert result.usm_type == usm_type
    assert result.sycl_queue == QUEUE
    np.testing.assert_allclose(dpt.asnumpy(result), a * a + a, rtol=1e-6)


@pytest.mark.parametrize("first,second", list(itertools.product(USM_TYPES, repeat=2)))
def test_output_takes_the_coerced_usm_type(first, second):
    a = np.arange(16.0)
    result = run(fma, usm(a, first), usm(a, second), usm(a, second))
    # device < shared < host: the smallest kind present
    expected = "device" if "device" in (first, second) else (
        "shared" if "shared" in (first, second) else "host")
    assert result.usm_type == expected
    np.testing.assert_array_equal(dpt.asnumpy(result), a * a + a)


def test_prange_writes_a_usm_output_argument():
    a = np.random.default_rng(0).random(257)
    src, out = usm(a), usm(np.zeros_like(a))
    run(smooth, src, out)
    expected = np.zeros_like(a)
    smooth.py_func(a, expected)
    np.testing.assert_allclose(dpt.asnumpy(out), expected)


def test_usm_arrays_reach_kernels_with_no_runtime_lookup():
    # used in place: host code hands their pointers to the launch, without
    # asking the runtime per parfor whether they are USM
    src, out = usm(np.arange(9.0)), usm(np.zeros(9))
    run(smooth, src, out)
    dispatcher, _ = smooth._for_device(QUEUE.sycl_device)
    usm_builds = [llvm for signature, llvm in dispatcher.inspect_llvm().items()
                  if all(isinstance(t, USMArray) for t in signature)]
    assert usm_builds
    for llvm in usm_builds:
        assert "@xpuc_launch(" in llvm
        assert "@xpuc_buffer_acquire(" not in llvm and "@xpuc_buffer_release(" not in llvm
    np.testing.assert_array_equal(dpt.asnumpy(out)[1:-1], np.arange(1.0, 8.0))


def test_views_with_offsets_and_strides():
    grid = np.arange(60.0).reshape(6, 10)
    device_grid = usm(grid)
    for index in (np.s_[1:-1, 1:-1], np.s_[::-1, ::2], np.s_[2:, ::-3]):
        view = device_grid[index]
        result = run(fma, view, view, view)
        np.testing.assert_array_equal(dpt.asnumpy(result), grid[index] ** 2 + grid[index])
    transposed = dpt.permute_dims(device_grid, (1, 0))
    result = run(fma, transposed, transposed, transposed)
    np.testing.assert_array_equal(dpt.asnumpy(result), grid.T ** 2 + grid.T)


def test_write_into_a_strided_usm_view():
    a = np.arange(40.0)
    out = usm(np.zeros(80))
    run(smooth, usm(a), out[::2])
    expected = np.zeros(40)
    smooth.py_func(a, expected)
    np.testing.assert_array_equal(dpt.asnumpy(out)[::2], expected)
    assert not dpt.asnumpy(out)[1::2].any()


def test_empty_like_of_a_usm_array_is_usm():
    a = usm(np.arange(10, dtype=np.int64), "shared")
    result = run(doubled_like, a)
    assert isinstance(result, dpt.usm_ndarray) and result.usm_type == "shared"
    np.testing.assert_array_equal(dpt.asnumpy(result), 2 * np.arange(10))


def test_reduction_result_is_a_scalar():
    a = usm(np.arange(1000, dtype=np.int64))
    # the host combines the work-items' partial sums: a buffer the kernel
    # writes in place on a device that can use host memory, else copied back
    partials = 0 if a.sycl_device.has_aspect_usm_system_allocations else \
        xpuc.frontend.parfor_reductions.REDUCTION_WORK_ITEMS * 8
    result = run(total, a, d2h_bytes=partials)
    assert not isinstance(result, dpt.usm_ndarray)
    assert result == 499500


def test_returning_an_argument_returns_it():
    a = usm(np.arange(5.0))
    assert identity(a) is a


@xpuc.jit
def tail_view(a):
    return a[1:]


def test_returning_a_view_of_an_argument_shares_its_memory():
    a = usm(np.arange(5.0))
    view = tail_view(a)
    assert view is not a and view.shape == (4,)
    assert view._pointer == a._pointer + a.itemsize
    np.testing.assert_array_equal(dpt.asnumpy(view), np.arange(1.0, 5.0))
    del a  # the view keeps the memory alive
    np.testing.assert_array_equal(dpt.asnumpy(view), np.arange(1.0, 5.0))


class SuaiOnly:
    """Any object exposing ``__sycl_usm_array_interface__`` (as dpnp does)."""

    def __init__(self, array):
        self._array = array
        self.__sycl_usm_array_interface__ = array.__sycl_usm_array_interface__

    @property
    def sycl_queue(self):
        return self._array.sycl_queue


def test_any_object_with_the_usm_array_interface():
    a = usm(np.arange(8.0))
    result = run(fma, SuaiOnly(a), SuaiOnly(a), SuaiOnly(a))
    assert isinstance(result, dpt.usm_ndarray)
    np.testing.assert_array_equal(dpt.asnumpy(result), np.arange(8.0) ** 2 + np.arange(8.0))


def test_dpnp_in_dpnp_out():
    dpnp = pytest.importorskip("dpnp")
    a = dpnp.arange(10.0)
    result = run(fma, a, a, a)
    assert isinstance(result, dpnp.ndarray)
    np.testing.assert_array_equal(dpnp.asnumpy(result), np.arange(10.0) ** 2 + np.arange(10.0))


def test_usm_memory_is_freed_with_the_result():
    a = usm(np.arange(100.0))
    xpuc.reset_stats()
    result = fma(a, a, a)
    assert xpuc.stats()["usm_allocs"] == 1 and xpuc.stats()["usm_frees"] == 0
    del result
    assert xpuc.stats()["usm_frees"] == 1


# ---- dispatch ------------------------------------------------------------------

def test_argument_types_without_typeof_agree_with_numba():
    plain = usm(np.arange(12.0).reshape(3, 4))
    read_only = usm(np.arange(4, dtype=np.int32), "host")
    read_only.flags.writable = False
    values = [plain, plain.T, plain[:, ::2], usm(np.arange(3.0), "shared"), read_only,
              1.5, np.float32(1.5), np.float64(1.5), np.int32(-3), np.int64(5), np.uint32(3),
              np.uint64(2**64 - 1), np.bool_(True), True, False, 0, -7, 2**63 - 1, -(2**63) + 1]
    assert _exact_types(values) == tuple(numba.typeof(v, Purpose.argument) for v in values)
    # what Numba types otherwise (or not at all) goes through its dispatcher
    for other in (np.arange(3.0), np.float16(1.0), (plain,), 2**63, -(2**63), "text", None):
        assert _exact_types([plain, other]) is None


@xpuc.jit
def scaled(a, s):
    return a * s


def test_calls_with_new_argument_types_compile_them():
    floats, ints = usm(np.arange(4.0)), usm(np.arange(4, dtype=np.int64))
    for a, s in ((floats, 2.0), (floats, 3), (ints, 2), (ints, 0.5), (floats[::2], True),
                 (floats, 2.0)):
        expected = dpt.asnumpy(a) * s
        result = run(scaled, a, s)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(dpt.asnumpy(result), expected)


# ---- queue rules (3, 6) ------------------------------------------------------

def test_equivalent_queues_mix():
    other = dpctl.SyclQueue("opencl:cpu")
    assert other is not QUEUE
    a = np.arange(6.0)
    result = run(fma, usm(a), usm(a, queue=other), usm(a))
    assert result.sycl_queue == QUEUE  # the first array's queue
    np.testing.assert_array_equal(dpt.asnumpy(result), a * a + a)


@pytest.mark.parametrize("in_order", [False, True], ids=["out-of-order", "in-order"])
def test_a_call_waits_for_the_work_on_its_queue(in_order):
    """xpuc submits to a queue of its own; without waiting for the caller's
    queue first, these calls read unfinished results."""
    queue = dpctl.SyclQueue("opencl:cpu", property="in_order" if in_order else [])
    values = np.random.default_rng(0).random(4_000_000)
    expected = np.sin(np.cos(np.sin(values))) * 2.0 + 1.0
    for _ in range(3):
        pending = still_computing(values, queue)
        np.testing.assert_allclose(dpt.asnumpy(run(fma, pending, 2.0, 1.0)), expected)


def test_a_call_waits_for_the_work_on_equivalent_queues():
    """The call runs on its first array's queue; the second array is still
    being made on another, equivalent, queue."""
    other = dpctl.SyclQueue("opencl:cpu")
    values = np.random.default_rng(1).random(4_000_000)
    first = usm(np.ones_like(values))
    expected = np.sin(np.cos(np.sin(values))) + 1.0
    for _ in range(3):
        pending = still_computing(values, other)
        np.testing.assert_allclose(dpt.asnumpy(run(fma, first, pending, first)), expected)


def test_non_equivalent_queues_are_refused():
    in_order = dpctl.SyclQueue("opencl:cpu", property="in_order")
    a, b = usm(np.arange(4.0)), usm(np.arange(4.0), queue=in_order)
    xpuc.reset_stats()
    with pytest.raises(xpuc.ExecutionPlacementError,
                       match=r"fma: USM arrays on different queues: a on opencl:cpu.*b on "):
        fma(a, b, a)
    assert xpuc.stats()["kernel_launches"] == 0


@pytest.mark.parametrize("in_context", [False, True])
def test_numpy_mixed_with_usm_is_refused(in_context):
    out = np.zeros(8)
    xpuc.reset_stats()
    with pytest.raises(xpuc.ExecutionPlacementError,
                       match=r"smooth: cannot mix NumPy arrays \(out\) with USM arrays \(a\)"):
        if in_context:
            with xpuc.device_context(QUEUE):
                smooth(usm(np.arange(8.0)), out)
        else:
            smooth(usm(np.arange(8.0)), out)
    assert xpuc.stats()["kernel_launches"] == 0 and not out.any()


def test_usm_array_on_another_queue_than_the_context():
    in_order = dpctl.SyclQueue("opencl:cpu", property="in_order")
    a = usm(np.arange(4.0))
    with xpuc.device_context(in_order):
        with pytest.raises(xpuc.ExecutionPlacementError,
                           match="a is on opencl:cpu.*active device context is opencl:cpu.*"
                           r"\(one device and context, with different properties"):
            fma(a, a, a)
    with xpuc.device_context(dpctl.SyclQueue("opencl:cpu")):  # equivalent: fine
        result = fma(a, a, a)
    np.testing.assert_array_equal(dpt.asnumpy(result), np.arange(4.0) ** 2 + np.arange(4.0))


def test_parallel_false_with_usm_arguments():
    plain = xpuc.jit(parallel=False)(fma.py_func)
    a = usm(np.arange(4.0))
    with pytest.raises(xpuc.ConflictingOptionsError, match="USM arguments"):
        plain(a, a, a)


# ---- rule 10: host code and device memory -------------------------------------

def test_host_reads_of_device_usm_elements_copy_one_element_each():
    """``b[0]`` of a device array computed by a kernel: one element copied
    back, after the kernel that wrote it."""
    assert run(first_element, usm(np.arange(3.0) + 4), d2h_bytes=8) == 5.0


@xpuc.jit
def corners(m):
    return m[0, 0] + m[-1, -1] * 10 + m[1, 0] * 100


def test_host_reads_of_device_usm_elements_in_2d():
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    xpuc.reset_stats()
    assert corners(usm(m)) == m[0, 0] + m[-1, -1] * 10 + m[1, 0] * 100
    assert xpuc.stats()["d2h_bytes"] == 3 * 4 and xpuc.stats()["h2d_bytes"] == 0


@xpuc.jit
def poke(a, m, value):
    a[0] = 1.5
    a[-1] += value
    m[1, 2] = value  # an int into a float64 element
    return a + 1.0


def test_host_writes_of_device_usm_elements_copy_one_element_each():
    a, m = usm(np.zeros(3)), usm(np.zeros((2, 3)))
    xpuc.reset_stats()
    result = poke(a, m, 7)
    # a[-1] is read, then written
    assert xpuc.stats()["h2d_bytes"] == 3 * 8 and xpuc.stats()["d2h_bytes"] == 8
    np.testing.assert_array_equal(dpt.asnumpy(a), [1.5, 0.0, 7.0])
    np.testing.assert_array_equal(dpt.asnumpy(result), [2.5, 1.0, 8.0])
    np.testing.assert_array_equal(dpt.asnumpy(m), [[0, 0, 0], [0, 0, 7]])


@xpuc.jit
def host_loop_between_parfors(m):
    for i in numba.prange(m.shape[0]):
        for j in range(m.shape[1]):
            m[i, j] = i * 10 + j
    total = 0.0
    for k in range(m.shape[0]):  # a serial host loop: one element each way a turn
        total += m[k, k]
        m[k, 0] = -total
    for i in numba.prange(m.shape[0]):
        m[i, 1] += m[i, 0]
    return total


@pytest.mark.parametrize("usm_type", USM_TYPES)
def test_host_loop_over_usm_elements_between_parfors(usm_type):
    """Host reads see what the kernel before wrote, and the kernel after sees
    the host's writes; device USM is copied one element at a time, shared and
    host USM are read and written in place."""
    m = usm(np.zeros((3, 4)), usm_type)
    expected = np.zeros((3, 4))
    want = host_loop_between_parfors.py_func(expected)
    xpuc.reset_stats()
    assert host_loop_between_parfors(m) == want
    stats = xpuc.stats()
    assert stats["kernel_launches"] == 2
    copied = 3 * 8 if usm_type == "device" else 0
    assert stats["d2h_bytes"] == copied and stats["h2d_bytes"] == copied
    np.testing.assert_array_equal(dpt.asnumpy(m), expected)


def test_library_code_reading_device_usm_elements_is_refused():
    """One element read by library code inlined into a function (Numba's or
    xpuc's source, whose loops one copy per element would make slow) stays
    refused; the same read in the user's code becomes a copy."""
    scope, user = ir.Scope(None, ir.Loc("user.py", 1)), ir.Loc("user.py", 3)
    library = ir.Loc(numba.np.arraymath.__file__, 10)
    a, i, x = (ir.Var(scope, name, user) for name in ("a", "i", "x"))
    typemap = {"a": DeviceUSMArray(types.float64, 1, "C"), "i": types.intp,
               "x": types.float64}
    body = [ir.Assign(ir.Expr.getitem(a, i, user), x, user)]
    insert_host_accesses(typemap, [body])
    assert [type(stmt) for stmt in body] == [DeviceElementRead]
    with pytest.raises(xpuc.UnsupportedError, match="usm_type='device' array 'a'"):
        insert_host_accesses(typemap, [[ir.Assign(ir.Expr.getitem(a, i, library), x, library)]])


def test_other_host_access_to_device_usm_is_refused():
    """What is not one element nor a parfor (rows picked by an index array,
    assigned from host code) is refused at compile time, naming the array and
    the line."""
    @xpuc.jit
    def fill_rows(m, rows):
        m[rows] = 1.0
        return m + 1.0

    line = fill_rows.py_func.__code__.co_firstlineno + 2
    with pytest.raises(xpuc.UnsupportedError,
                       match=rf"test_usm.py:{line}: host code writes elements of the "
                             r"usm_type='device' array 'm'"):
        fill_rows(usm(np.zeros((2, 3))), usm(np.array([0, 1])))


def test_rows_read_through_an_index_array_in_host_code_are_refused():
    """``m[rows]`` copies the rows it picks: host code reading them (and the
    index array) is refused like any other read, not taken for a view."""
    @xpuc.jit
    def picked_rows(m, rows):
        picked = m[rows]
        return picked + 1.0

    line = picked_rows.py_func.__code__.co_firstlineno + 2
    with pytest.raises(xpuc.UnsupportedError,
                       match=rf"test_usm.py:{line}: host code reads elements of the "
                             r"usm_type='device' array 'm'"):
        picked_rows(usm(np.zeros((2, 3))), usm(np.array([0, 1])))


@pytest.mark.parametrize("usm_type", ["shared", "host"])
def test_host_element_access_to_host_accessible_usm(usm_type):
    assert run(first_element, usm(np.arange(3.0) + 4, usm_type)) == 5.0


def test_metadata_of_device_usm_is_fine_in_host_code():
    result = run(shape_only, usm(np.arange(3.0)))
    np.testing.assert_array_equal(dpt.asnumpy(result), np.arange(3.0) * 3)


# ---- xpuc.asarray --------------------------------------------------------------

def test_asarray_copies_numpy_to_the_context_device():
    with xpuc.device_context(QUEUE):
        a = xpuc.asarray(np.arange(5.0), usm_type="shared")
    assert a.usm_type == "shared" and a.sycl_queue == QUEUE
    np.testing.assert_array_equal(dpt.asnumpy(a), np.arange(5.0))


@pytest.mark.parametrize("data", [[1.0, 2.0, 3.0], (1, 2, 3), 7.5])
def test_asarray_copies_host_data_through_the_runtime(data):
    """Lists and scalars go through xpuc's copy, as NumPy arrays do (dpctl's
    can hang under threads, tests/test_threads.py)."""
    xpuc.reset_stats()
    copy = xpuc.asarray(data, queue=QUEUE)
    expected = np.asarray(data)
    assert xpuc.stats()["h2d_bytes"] == expected.nbytes
    np.testing.assert_array_equal(dpt.asnumpy(copy), expected)


def test_asarray_is_zero_copy_on_the_same_device():
    a = usm(np.arange(5.0))
    assert xpuc.asarray(a) is a
    other = dpctl.SyclQueue("opencl:cpu")
    moved = xpuc.asarray(a, queue=other)
    assert address(moved) == address(a) and moved.sycl_queue == other
    suai = xpuc.asarray(SuaiOnly(a))
    assert address(suai) == address(a)


def test_asarray_copies_to_another_usm_type():
    a = usm(np.arange(5.0))
    shared = xpuc.asarray(a, usm_type="shared")
    assert shared.usm_type == "shared" and address(shared) != address(a)
    np.testing.assert_array_equal(dpt.asnumpy(shared), np.arange(5.0))


def test_asarray_rejects_an_unknown_usm_type():
    with pytest.raises(ValueError, match=re.escape("usm_type must be one of")):
        xpuc.asarray(np.arange(3.0), usm_type="pinned")


def test_host_allocated_result_comes_back_as_usm():
    @xpuc.jit
    def fill(a):
        out = np.empty(a.shape[0])
        for i in numba.prange(a.shape[0]):
            out[i] = a[i] + 1
        return out

    a = usm(np.arange(6.0), "shared")
    result = fill(a)
    assert isinstance(result, dpt.usm_ndarray) and result.usm_type == "shared"
    assert result.sycl_queue == QUEUE
    np.testing.assert_array_equal(dpt.asnumpy(result), np.arange(6.0) + 1)
