"""Reliability: bad inputs, device and toolchain faults, leaks and concurrency.

Every case gives the right result or an exception of a documented type: xpuc's
own (``UnsupportedError``, ``DeviceError``, ``XpucError``), or the one Numba
raises for the same call on the CPU (its ``TypingError`` for what it cannot
type), or NumPy's (``MemoryError``, ``ValueError``). Cases that could end
the interpreter rather than raise (device memory limits, a process without
devices, invalid IR between passes, long loops measuring memory) run in a
subprocess; the rest run kernels on data as the other end-to-end tests do.
"""

import dataclasses
import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import dpctl
import numba
import numpy as np
import pytest
from device_support import DEVICE, assemble, offload, run_in_threads
from numba.core.errors import TypingError

import xpuc
from xpuc.array_library import tensor as dpt
from xpuc.frontend import host_lowering

TESTS = Path(__file__).parent


def run_isolated(code: str, env: dict | None = None, timeout: float = 120
                 ) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (tests/ on its path); it must exit 0
    and not die of a signal."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=TESTS,
                            capture_output=True, text=True, timeout=timeout,
                            env={**os.environ, **(env or {})})
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}{result.stderr}"
    return result


@xpuc.jit
def plus_one(a):
    return a + 1


@xpuc.jit
def doubled_into(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = a[i] * 2


@xpuc.jit
def total(a):
    return a.sum()


@xpuc.jit
def rows_into(a, out):
    for i in numba.prange(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] - i + j


def usm(values, usm_type="device"):
    return dpt.asarray(np.asarray(values), usm_type=usm_type, sycl_queue=QUEUE)


QUEUE = dpctl.SyclQueue(DEVICE)


def assert_no_leak():
    gc.collect()  # USM results are freed with their usm_ndarray
    counters = xpuc.stats()
    assert counters["usm_allocs"] == counters["usm_frees"], counters


# ---- bad inputs ------------------------------------------------------------


def _read_only(values):
    values = np.array(values)
    values.flags.writeable = False
    return values


@pytest.mark.parametrize("fn, make_args", [
    (plus_one, lambda: (np.array([1, "a"], dtype=object),)),
    (plus_one, lambda: (np.array(["a", "b"]),)),
    (plus_one, lambda: (np.array(["2026-11-22"], dtype="datetime64[D]"),)),
    (plus_one, lambda: ([1.0, 2.0],)),
    (plus_one, lambda: (None,)),
    # Numba refuses writes to a read-only array while typing
    (doubled_into, lambda: (np.ones(4), _read_only(np.zeros(4)))),
], ids=["object", "str", "datetime64", "list", "None", "read-only output"])
def test_what_numba_cannot_type_is_refused_as_on_the_cpu(fn, make_args):
    with pytest.raises(TypingError):
        fn(*make_args())
    with xpuc.device_context(DEVICE), pytest.raises(TypingError):
        fn(*make_args())


def test_a_read_only_usm_array_cannot_be_written():
    out = dpt.zeros(4, sycl_queue=QUEUE)
    out.flags.writable = False
    with pytest.raises(TypingError, match="readonly"):
        doubled_into(usm(np.ones(4)), out)
    np.testing.assert_array_equal(dpt.asnumpy(out), np.zeros(4))


def test_a_read_only_input_is_fine():
    a = _read_only(np.arange(5.0))
    out = np.zeros(5)
    offload(doubled_into, a, out)
    np.testing.assert_array_equal(out, 2 * np.arange(5.0))


def test_float16_is_refused_as_numba_refuses_it():
    """Numba has no float16 arrays: NotImplementedError, CPU, context and USM alike."""
    half = np.ones(3, dtype=np.float16)
    for call in (lambda: plus_one(half), lambda: offload(plus_one, half),
                 lambda: plus_one(usm(half))):
        with pytest.raises(NotImplementedError, match="float16"):
            call()


@pytest.mark.parametrize("values", [
    np.array([1, 2], dtype="timedelta64[s]"),
    np.array([1 + 2j, 3 - 1j]),
], ids=["timedelta64", "complex128"])
@pytest.mark.parametrize("where", ["numpy", "usm"])
def test_dtypes_a_kernel_does_not_compute_are_refused_or_right(values, where):
    """Numba types these parfors; a kernel computes them right or the
    translator refuses them by name."""
    doubled = xpuc.jit(lambda a: a + a)
    if where == "usm" and values.dtype.kind == "m":
        pytest.skip("the USM array library has no timedelta64")
    try:
        result = (offload(doubled, values) if where == "numpy"
                  else dpt.asnumpy(doubled(usm(values))))
    except xpuc.UnsupportedError as error:
        assert str(values.dtype) in str(error)
    else:
        np.testing.assert_array_equal(result, values + values)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (1,), (1, 1)])
@pytest.mark.parametrize("where", ["numpy", "usm"])
def test_empty_and_size_one_arrays(shape, where):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1
    expected_out = (a - np.arange(shape[0])[:, None] + np.arange(shape[1])
                    if len(shape) == 2 else 2 * a)
    fn = rows_into if len(shape) == 2 else doubled_into
    xpuc.reset_stats()
    if where == "numpy":
        out = np.full(shape, -1.0)
        with xpuc.device_context(DEVICE):
            fn(a, out)
            summed, added = total(a), plus_one(a)
    else:
        device_out = usm(np.full(shape, -1.0))
        fn(usm(a), device_out)
        summed, added = total(usm(a)), dpt.asnumpy(plus_one(usm(a)))
        out = dpt.asnumpy(device_out)
    np.testing.assert_array_equal(out, expected_out)
    np.testing.assert_array_equal(added, a + 1)
    assert summed == a.sum()
    # a parfor over an empty range launches nothing: fn's runs over a's rows,
    # a + 1 over its elements, and the sum's kernel (over its work-items, not
    # the array) always runs
    assert xpuc.stats()["kernel_launches"] == (shape[0] > 0) + (a.size > 0) + 1
    assert_no_leak()


def test_zero_dimensional_arrays():
    """A 0-d array is no parfor in Numba: host code, as on the CPU. Host code
    may read a 0-d array of shared USM but not of device USM (SPEC rule 10)."""
    scalar = np.array(2.5)
    with xpuc.device_context(DEVICE):
        assert plus_one(scalar) == 3.5
    assert plus_one(usm(scalar, "shared")) == 3.5
    with pytest.raises(xpuc.UnsupportedError, match="usm_type='device'"):
        plus_one(usm(scalar))


@xpuc.jit
def scaled_by_the_element_of(x, z):
    for i in numba.prange(x.shape[0]):
        x[i] = x[i] * z[()]


@pytest.mark.parametrize("where", ["numpy", "usm"])
def test_a_zero_dimensional_arrays_element_in_a_parfor_body(where):
    """``z[()]`` in a body reads the 0-d array's one element (Numba's own
    parallel backend cannot type it)."""
    expected = np.arange(4.0) * 2.5
    if where == "numpy":
        x = np.arange(4.0)
        offload(scaled_by_the_element_of, x, np.array(2.5))
    else:
        device_x = usm(np.arange(4.0))
        scaled_by_the_element_of(device_x, usm(np.array(2.5)))
        x = dpt.asnumpy(device_x)
    np.testing.assert_array_equal(x, expected)


@xpuc.jit
def filled_with(out, z):
    out[:] = z  # xpuc's broadcasting store: a loop storing z into each element


@xpuc.jit
def column_and_rows_set_to(out, z):
    out[:, 0] = z
    for i in numba.prange(out.shape[0]):
        out[i, 1] = z


@pytest.mark.parametrize("where", ["numpy", "usm"])
@pytest.mark.parametrize("function", [filled_with, column_and_rows_set_to])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex128])
def test_a_zero_dimensional_array_stored_into_a_view_or_an_element(function, dtype, where):
    """A 0-d array stored into a view or an element stores its one element,
    as NumPy broadcasts it (it was refused as "assigning anything but a
    number")."""
    z = np.array(3 - 2j if dtype is np.complex128 else 3, dtype)
    expected = np.zeros((3, 2), dtype)
    function.py_func(expected, z)
    if where == "numpy":
        out = np.zeros((3, 2), dtype)
        offload(function, out, z)
    else:
        device_out = usm(np.zeros((3, 2), dtype))
        function(device_out, usm(z))
        out = dpt.asnumpy(device_out)
    np.testing.assert_array_equal(out, expected)
    assert (out == z).any()


@pytest.mark.parametrize("where", ["numpy", "usm"])
def test_negative_strides_in_and_out(where):
    base = np.arange(20.0)
    expected = np.zeros(10)
    expected[::-1] = 2 * base[::-2]
    if where == "numpy":
        out = np.zeros(10)
        offload(doubled_into, base[::-2], out[::-1])
    else:
        device_out = usm(np.zeros(10))
        doubled_into(usm(base)[::-2], device_out[::-1])
        out = dpt.asnumpy(device_out)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("where", ["numpy", "usm"])
def test_fortran_ordered_arrays(where):
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    expected = np.stack([a[i] - i + np.arange(4) for i in range(3)])
    if where == "numpy":
        out = np.asfortranarray(np.zeros((3, 4)))
        offload(rows_into, a, out)
        added = offload(plus_one, a)
    else:
        device_out = dpt.asarray(np.zeros((3, 4)), order="F", sycl_queue=QUEUE)
        rows_into(dpt.asarray(a, order="F", sycl_queue=QUEUE), device_out)
        out = dpt.asnumpy(device_out)
        added = dpt.asnumpy(plus_one(dpt.asarray(a, order="F", sycl_queue=QUEUE)))
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(added, a + 1)


@pytest.mark.parametrize("where", ["numpy", "usm"])
def test_interleaved_views_of_one_array(where):
    """Input and output views whose byte extents overlap but whose elements do
    not: the kernel writes the odd elements from the even ones, and the rest
    of the array stays as it was. (Views that share elements between a read
    and a write in one prange are a data race, as with Numba's parallel=True.)"""
    base = np.arange(10.0)
    expected = base.copy()
    expected[1::2] = 2 * base[::2]
    if where == "numpy":
        offload(doubled_into, base[::2], base[1::2])
    else:
        device = usm(base)
        doubled_into(device[::2], device[1::2])
        base = dpt.asnumpy(device)
    np.testing.assert_array_equal(base, expected)


def test_an_array_expression_assigned_into_an_overlapping_slice():
    """``a[1:] = a[:-1] + 1`` reads before it writes, as in NumPy."""

    @xpuc.jit
    def shift(a):
        a[1:] = a[:-1] + 1.0

    a = np.zeros(200)
    offload(shift, a)
    expected = np.zeros(200)
    expected[1:] = expected[:-1] + 1.0
    np.testing.assert_array_equal(a, expected)


def test_host_stores_into_a_dict_beside_a_parfor():
    """A store into a dict is host code with no array in it: not a slice
    assignment, not a host access (it crashed the compile with an
    AttributeError)."""

    @xpuc.jit
    def counted(x):
        seen = {}
        seen[hash(x[0])] = 1.0
        return x * 2.0 + len(seen)

    x = np.arange(4000.0)
    np.testing.assert_array_equal(offload(counted, x), x * 2.0 + 1)


@pytest.mark.parametrize("where", ["numpy", "usm"])
def test_arrays_in_a_tuple_argument(where):
    """Arrays passed in a tuple place the call as arguments do: USM arrays in a
    tuple used to miss placement and run host code on device memory."""

    @xpuc.jit
    def add_pair(pair):
        a, b = pair
        return a + b

    a, b = np.arange(5.0), np.ones(5)
    if where == "numpy":
        result = offload(add_pair, (a, b))
    else:
        xpuc.reset_stats()
        result = add_pair((usm(a), usm(b)))
        assert xpuc.stats()["kernel_launches"] == 1
        assert isinstance(result, dpt.usm_ndarray) and result.sycl_queue == QUEUE
        result = dpt.asnumpy(result)
    np.testing.assert_array_equal(result, a + b)
    with pytest.raises(xpuc.ExecutionPlacementError, match=r"pair\[0\]"):
        add_pair((a, usm(b)))


@pytest.mark.xfail(strict=True, reason="Numba's parfor pass drops a prange that writes an array "
                   "unpacked from a tuple argument (numba.njit(parallel=True) leaves it unwritten "
                   "too); xpuc offloads Numba's parfors, so nothing runs")
def test_prange_writing_an_array_unpacked_from_a_tuple():
    @xpuc.jit
    def double_pair(pair):
        a, out = pair
        for i in numba.prange(a.shape[0]):
            out[i] = a[i] * 2

    out = np.zeros(3)
    with xpuc.device_context(DEVICE):
        double_pair((np.ones(3), out))
    np.testing.assert_array_equal(out, 2 * np.ones(3))


def test_scalar_arguments_only():
    """No array, no parfor: host code, in a context or not."""
    with xpuc.device_context(DEVICE):
        assert plus_one(2.0) == 3.0
        assert plus_one(True) == 2


def test_allocation_larger_than_the_device():
    """The function allocates one element more than the device's largest
    allocation. ``np.empty(n)`` is host memory (no USM array shapes it),
    which Numba gets (untouched, so not committed); its device buffer is
    refused, a DeviceError naming the size, with NumPy arguments and with
    USM ones alike; one the host refuses (a petabyte) is Numba's
    MemoryError, as on the CPU. (Copying in a too large argument:
    test_errors.py.)
    Nothing is left allocated, and a small call works after. In a
    subprocess: were an allocation granted, the kernel would write more
    than the machine may hold."""
    run_isolated("""
        import dpctl, numba, numpy as np
        import xpuc
        from xpuc.array_library import tensor as dpt

        @xpuc.jit
        def counting(a, n):
            out = np.empty(n)
            for i in numba.prange(n):
                out[i] = a[0] + i
            return out

        queue = dpctl.SyclQueue("opencl:cpu")
        too_many = queue.sycl_device.max_mem_alloc_size // 8 + 1
        # with host memory in place the kernel would write it all
        xpuc.runtime.use_system_memory(False)
        xpuc.reset_stats()
        try:
            with xpuc.device_context(queue):
                counting(np.ones(3), too_many)
        except xpuc.DeviceError as error:
            assert "USM allocation of" in str(error), error
        else:
            raise AssertionError("no error with NumPy arguments")
        try:
            counting(dpt.ones(3, sycl_queue=queue), too_many)
        except xpuc.DeviceError as error:
            assert "USM allocation of" in str(error), error
        else:
            raise AssertionError("no error with USM arguments")
        for args in ((np.ones(3), 2**50 // 8), (dpt.ones(3, sycl_queue=queue), 2**50 // 8)):
            try:
                with xpuc.device_context(queue):
                    counting(*args)
            except MemoryError:
                pass
            else:
                raise AssertionError("a petabyte was allocated")
        stats = xpuc.stats()
        assert stats["usm_allocs"] == stats["usm_frees"], stats
        assert stats["kernel_launches"] == 0, stats
        small = counting(dpt.ones(3, sycl_queue=queue), 4)
        assert (dpt.asnumpy(small) == np.arange(4) + 1.0).all()
    """)


def test_more_work_items_than_dpctl_submits():
    """dpctl submits at most 2^31-1 work-items in a range: a longer 1-D
    parfor is refused with that reason (it used to blame the work-group
    size). A stride-0 view makes it long without memory. The compiler takes
    every global id to be below that most (see gpu_rewrites.bound_global_ids)."""
    assert xpuc.runtime.MAX_WORK_ITEMS == 2**31 - 1
    out = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8),
                                          shape=(xpuc.runtime.MAX_WORK_ITEMS + 1,),
                                          strides=(0,))

    @xpuc.jit
    def fill(out):
        for i in numba.prange(out.shape[0]):
            out[i] = 1

    xpuc.reset_stats()
    with pytest.raises(xpuc.DeviceError, match=r"more than 2\^31-1 work-items"):
        with xpuc.device_context(DEVICE):
            fill(out)
    assert_no_leak()


def test_kernel_index_arithmetic_is_64_bit():
    """Proof by the IR that indices above 2^31 do not wrap: work-item ids,
    the sizes the kernel gets and every element address are i64, and no
    value in the kernel is an i32 (the only i32 are attribute literals)."""

    @xpuc.jit
    def shifted(a, out):
        for i in numba.prange(a.shape[0]):
            for j in range(a.shape[1]):
                out[i, j] = a[i, j] + 1

    offload(shifted, np.ones((3, 4), np.int8), np.ones((3, 4), np.int8))
    text = shifted.inspect_mlir("spirv")
    kernel = text[text.index("spirv.module"):text.index("spirv.EntryPoint")]
    assert "vector<3xi64>" in kernel and "vector<3xi32>" not in kernel
    chains = [line for line in kernel.splitlines() if "spirv.PtrAccessChain" in line]
    assert chains and all(", i64 ->" in line for line in chains)
    literals = kernel.count(" : i32]") + kernel.count("array<i32:")
    assert kernel.count("i32") == literals


def _memory_available() -> int:
    with open("/proc/meminfo") as meminfo:
        fields = dict(line.split(":", 1) for line in meminfo)
    return int(fields["MemAvailable"].split()[0]) * 1024


@pytest.mark.skipif(_memory_available() < 8 * 2**30, reason="needs 8 GB of free memory")
def test_reduction_over_more_than_2_31_elements():
    """2^31+10 int8 elements (2 GB of device USM) summed; the last ten hold 3,
    so an index that wrapped at 32 bits would miss them (about 5 s)."""
    run_isolated("""
        import xpuc
        from xpuc.array_library import tensor as dpt

        n = 2**31 + 10
        a = dpt.ones(n, dtype="i1")
        a[-10:] = 3
        total = xpuc.jit(lambda a: a.sum())(a)
        assert total == n + 20, total
    """, timeout=300)


# ---- device and toolchain faults ---------------------------------------------


def test_without_any_sycl_device():
    """No device visible: the CPU path is untouched; entering a context and
    asking for the default device's queue are DeviceErrors that say so."""
    result = run_isolated("""
        import numpy as np
        import xpuc
        import dpctl

        assert dpctl.get_devices() == []
        add = xpuc.jit(lambda a: a + 1)
        assert (add(np.ones(3)) == 2).all()
        for enter in (lambda: xpuc.device_context("opencl:cpu"),
                      lambda: xpuc.device_context(None)):
            try:
                with enter():
                    add(np.ones(3))
            except xpuc.DeviceError as error:
                assert "available devices: none" in str(error), error
            else:
                raise AssertionError("a context without a device")
        try:
            xpuc.asarray(np.ones(3))
        except xpuc.DeviceError as error:
            print(error)
        assert (add(np.ones(3)) == 2).all()
    """, env={"ONEAPI_DEVICE_SELECTOR": "level_zero:*"})
    assert "no SYCL queue for the default device" in result.stdout


def test_kernel_build_failure_is_a_device_error_with_the_build_log(monkeypatch, tmp_path):
    """A module the driver cannot build (a call to an undefined function, put
    in place of the compiled kernel by a test hook) fails the call with the
    build log; nothing is left allocated, and the next call builds again."""
    unresolved = assemble("unresolved", tmp_path)
    compile_to_spirv = host_lowering.compile_to_spirv

    def with_unresolved_spirv(*args, **kwargs):
        return dataclasses.replace(compile_to_spirv(*args, **kwargs), spirv=unresolved)

    monkeypatch.setattr(host_lowering, "compile_to_spirv", with_unresolved_spirv)
    broken = xpuc.jit(lambda a: a * 3.0)
    xpuc.reset_stats()
    for _ in range(2):
        with pytest.raises(xpuc.DeviceError, match="build log") as error:
            offload(broken, np.ones(4))
        assert "xpuc_test_missing" in str(error.value)  # the unresolved symbol
        assert "<lambda>" in str(error.value)
    assert xpuc.stats()["kernel_launches"] == 0
    assert_no_leak()


def test_invalid_ir_inside_a_stage_is_an_error_naming_stage_and_op():
    """A rewrite inside the gpu stage that leaves an invalid op (arith.addi of
    two index values typed f32) makes the call raise XpucError naming the
    stage and the op; and no pipeline runs on invalid IR, even where its
    passes would drop the op unseen (canonicalize erases an unused one). In
    a subprocess, since a pass given invalid IR could end the process."""
    result = run_isolated("""
        import numpy as np
        from mlir import ir
        import xpuc
        from xpuc.passes import gpu_rewrites, stages

        def add_invalid_op(module):
            function = module.body.operations[0]
            entry = function.regions[0].blocks[0]
            with ir.Location.unknown(), ir.InsertionPoint.at_block_begin(entry):
                index = next(a for a in entry.arguments if str(a.type) == "index")
                ir.Operation.create("arith.addi", results=[ir.F32Type.get()],
                                    operands=[index, index])

        compiler = stages._compiler()
        with compiler.context:
            module = ir.Module.parse("func.func @f(%i: index) { return }")
            add_invalid_op(module)
            try:
                compiler.run(module, ("canonicalize",))
            except ir.MLIRError as error:
                assert "'arith.addi' op" in str(error), error
            else:
                raise AssertionError("a pipeline ran on invalid IR")

        normalize_loops = gpu_rewrites.normalize_loops

        def normalize_and_break(module):
            normalize_loops(module)
            add_invalid_op(module)

        gpu_rewrites.normalize_loops = normalize_and_break
        try:
            with xpuc.device_context("opencl:cpu"):
                xpuc.jit(lambda a: a + 1.0)(np.ones(4))
        except xpuc.XpucError as error:
            print(error)
        else:
            raise AssertionError("invalid IR went through")
    """)
    assert result.stdout.startswith(
        "internal error while mapping the loop onto work-items (the gpu stage): ")
    assert "'arith.addi' op" in result.stdout


# ---- leaks -------------------------------------------------------------------


def test_allocations_are_freed_after_calls_that_fail_midway():
    """A failed launch after a kernel ran, a failed build, and host code
    raising between parfors, with NumPy arguments and USM ones: every USM
    allocation made for the call is freed."""

    @xpuc.jit
    def then_fill(a, out):
        a[:] = a + 1.0  # runs: a is copied in and out
        for i in numba.prange(out.shape[0]):
            out[i] = 1  # refused: more work-items than dpctl submits

    @xpuc.jit
    def then_raise(a, n):
        b = a * 2.0
        if n > 1:
            raise ValueError("n")
        return b

    long_out = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape=(2**31 + 10,),
                                               strides=(0,))
    a = np.zeros(4)
    xpuc.reset_stats()
    with pytest.raises(xpuc.DeviceError, match="work-items"):
        offload(then_fill, a, long_out)
    with pytest.raises(ValueError):
        offload(then_raise, a, 2)
    with pytest.raises(ValueError):
        then_raise(usm(a), 2)
    assert xpuc.stats()["usm_allocs"] > 0
    assert_no_leak()


def test_memory_stays_flat_over_ten_thousand_calls():
    """10,000 offloaded calls (NumPy in a context, and USM) after a warm-up
    grow the process's resident memory by less than 4 MB, and free every
    USM allocation they make (about 4 s)."""
    result = run_isolated("""
        import gc
        import numpy as np
        import dpctl
        import xpuc
        from xpuc.array_library import tensor as dpt

        @xpuc.jit
        def step(a, b):
            c = a * 2.0 + b
            return c.sum(), c

        def resident():
            with open("/proc/self/statm") as statm:
                return int(statm.read().split()[1]) * 4096

        queue = dpctl.SyclQueue("opencl:cpu")
        a, b = np.ones(256), np.arange(256.0)
        usm_a, usm_b = dpt.asarray(a, sycl_queue=queue), dpt.asarray(b, sycl_queue=queue)

        def calls(n):
            for _ in range(n):
                with xpuc.device_context(queue):
                    step(a, b)
                step(usm_a, usm_b)

        calls(500)
        gc.collect()
        before = resident()
        xpuc.reset_stats()
        calls(5000)
        gc.collect()
        stats = xpuc.stats()
        assert stats["kernel_launches"] == 10000, stats
        assert stats["usm_allocs"] == stats["usm_frees"], stats
        print(resident() - before)
    """)
    growth = int(result.stdout.split()[-1])
    assert growth < 4 * 2**20, f"resident memory grew by {growth} bytes"


# ---- concurrency -------------------------------------------------------------


def test_threads_on_their_own_queues_compile_once_and_free_everything():
    """Four threads, each with its own queue (in-order and not), call a fresh
    function with a reduction and an array expression at once, NumPy and
    USM, some calls failing midway: right results, one compile per
    parfor, every allocation freed. (test_device_context.py covers two
    queues shared by six threads.)"""

    @xpuc.jit
    def stats_of(a, n):
        centred = a - a.mean()
        if n < 0:
            raise ValueError("negative")
        return centred, (centred * centred).sum()

    queues = [dpctl.SyclQueue(DEVICE, property="in_order") if k % 2 else
              dpctl.SyclQueue(DEVICE) for k in range(4)]
    data = [np.random.default_rng(k).random(3000) for k in range(4)]
    on_device = [dpt.asarray(values, sycl_queue=queue) for values, queue in zip(data, queues)]
    usm_results = {}

    def worker(k):
        try:
            for round_ in range(5):
                with xpuc.device_context(queues[k]):
                    centred, spread = stats_of(data[k], round_ % 3 - 1 if k % 2 else 1)
                np.testing.assert_allclose(centred, data[k] - data[k].mean())
                np.testing.assert_allclose(spread, ((data[k] - data[k].mean()) ** 2).sum())
                usm_results[k] = stats_of(on_device[k], 1)
        except ValueError:
            pass  # the calls made to fail

    xpuc.reset_stats()
    run_in_threads(worker, 4)
    assert sorted(usm_results) == [0, 2]  # odd threads fail on their first call
    for k, (centred, spread) in usm_results.items():
        assert centred.sycl_queue == queues[k]
        np.testing.assert_allclose(dpt.asnumpy(centred), data[k] - data[k].mean())
        np.testing.assert_allclose(spread, ((data[k] - data[k].mean()) ** 2).sum())
    # three parfors (mean, subtraction, sum of squares), NumPy and USM signatures
    assert xpuc.stats()["kernels_compiled"] == 6
    del centred
    usm_results.clear()
    assert_no_leak()
