"""Error paths: what cannot be offloaded is refused by name and line (SPEC rule
9), conflicting options are refused (rule 7), device names are checked."""

import textwrap

import numba
import numpy as np
import pytest
from device_support import offload

import xpuc
from xpuc.passes import Target

DEVICE = "opencl:cpu"


def _line_of(fn, text):
    import inspect

    lines, first = inspect.getsourcelines(fn.py_func)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_unsupported_callee_is_named():
    @xpuc.jit
    def gamma(a, out):
        for i in numba.prange(a.shape[0]):
            out[i] = np.spacing(a[i])

    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as info:
        gamma(np.ones(10) * 2, np.ones(10))
    assert "spacing" in str(info.value)
    assert f"{__file__}:{_line_of(gamma, 'np.spacing')}" in str(info.value)


def test_explicit_parallel_false_conflicts_with_offload():
    @xpuc.jit(parallel=False)
    def add(a):
        return a + 1

    np.testing.assert_array_equal(add(np.zeros(3)), np.ones(3))  # fine on the CPU
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.ConflictingOptionsError):
        add(np.zeros(3))


def test_unknown_device_is_a_device_error():
    with pytest.raises(xpuc.DeviceError) as info:
        with xpuc.device_context("level_zero:gpu:7"):
            pass
    assert "level_zero:gpu:7" in str(info.value)


def test_errors_share_a_base_and_placement_error_is_the_array_librarys():
    import dpctl

    from xpuc.array_library import tensor as dpt

    for cls in (xpuc.UnsupportedError, xpuc.ConflictingOptionsError, xpuc.DeviceError):
        assert issubclass(cls, xpuc.XpucError)
    # what dpctl.tensor or dpnp.tensor raises for arrays on two queues is xpuc's class
    first, second = dpctl.SyclQueue("opencl:cpu"), dpctl.SyclQueue("opencl:cpu")
    with pytest.raises(xpuc.ExecutionPlacementError):
        dpt.asarray([1.0], sycl_queue=first) + dpt.asarray([1.0], sycl_queue=second)


def test_object_mode_is_refused():
    with pytest.raises(xpuc.ConflictingOptionsError):
        xpuc.jit(forceobj=True)(lambda a: a)


@pytest.mark.usefixtures("copying_host_arrays")
def test_runtime_failure_in_compiled_code_is_a_device_error():
    """An allocation larger than the device: the compiled host code's runtime
    call fails, and the call raises DeviceError with the runtime's message.
    (Copying the view in needs one; used in place, its 2**45-byte stride would
    read memory it does not own, as on the CPU.)"""

    @xpuc.jit
    def double(a):
        return a * 2.0

    base = np.ones(4)
    huge = np.lib.stride_tricks.as_strided(base, shape=(2,), strides=(2**45,))
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.DeviceError) as info:
        double(huge)
    import dpctl

    message = str(info.value)
    assert "USM allocation" in message
    assert dpctl.SyclDevice(DEVICE).name in message
    assert "double" in message
    counters = xpuc.stats()
    assert counters["usm_allocs"] == counters["usm_frees"]
    assert counters["kernel_launches"] == 0


def test_pipeline_class_is_refused():
    from numba.core.compiler import Compiler

    with pytest.raises(xpuc.ConflictingOptionsError):
        xpuc.jit(pipeline_class=Compiler)(lambda a: a)


def test_float64_on_a_device_without_fp64(monkeypatch):
    """Rule 11: refused while compiling, naming the line, before any build."""
    monkeypatch.setattr(xpuc.targets, "target_for",
                        lambda device: Target(fp64=False))

    @xpuc.jit
    def scale(a):
        return a * 2.0

    line = _line_of(scale, "return a * 2.0")
    xpuc.reset_stats()
    with pytest.raises(xpuc.UnsupportedError,
                       match=rf"test_errors.py:{line}: .*uses f64.*the device has no fp64"):
        offload(scale, np.arange(3.0))
    assert xpuc.stats()["kernel_builds"] == 0
    # float32 throughout needs no fp64 (a float literal is float64 in Numba)
    square = xpuc.jit(lambda a: a * a)
    a = np.arange(3.0, dtype=np.float32)
    np.testing.assert_array_equal(offload(square, a), a * a)


def test_slice_with_a_variable_step_is_refused():
    @xpuc.jit
    def every(a, out, step):
        for i in numba.prange(out.shape[0]):
            out[i] = a[i, ::step].sum()

    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as info:
        every(np.ones((3, 4)), np.zeros(3), 2)
    assert "slice with a variable step" in str(info.value)
    assert f"{__file__}:{_line_of(every, 'out[i] =')}" in str(info.value)




def test_complex_operation_without_a_rule_is_refused():
    @xpuc.jit
    def sines(a, out):
        for i in numba.prange(a.shape[0]):
            out[i] = np.sin(a[i])

    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as info:
        sines(np.ones(4, np.complex128), np.zeros(4, np.complex128))
    assert "call to numpy.sin on complex numbers" in str(info.value)
    assert f"{__file__}:{_line_of(sines, 'out[i] =')}" in str(info.value)


def _times_a_0d_array(a, z):
    for i in numba.prange(a.shape[0]):
        a[i] = a[i] * z


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_a_0d_array_as_an_operand_is_refused_by_name_at_its_use(dtype):
    """Real or complex, the refusal names the user's array and the line that
    uses it, not the translator's value nor the line defining it."""
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as info:
        xpuc.jit(_times_a_0d_array)(np.ones(4, dtype), np.array(2.0))
    line = _times_a_0d_array.__code__.co_firstlineno + 2
    assert str(info.value) == (f"{__file__}:{line}: 'z' is an array here, where a parfor body "
                               "needs a number")


def test_array_assigned_in_the_loop_and_read_after_it_is_refused():
    @xpuc.jit
    def last_row(m):
        row = m[0]
        for i in numba.prange(m.shape[0]):
            row = m[i]
        return row.sum()

    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as info:
        last_row(np.ones((3, 4)))
    assert "variable 'row' assigned in the loop and read after it" in str(info.value)


def test_outer_variable_assigned_in_some_iterations_is_refused():
    # Numba's CPU backend fails on this too (a typing error in its lowering)
    @xpuc.jit
    def last_above(a, limit):
        found = -1.0
        for i in numba.prange(a.shape[0]):
            if a[i] > limit:
                found = a[i]
        return found

    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as info:
        last_above(np.ones(4), 0.5)
    assert "variable(s) found from before the loop assigned in it" in str(info.value)


def test_array_assigned_to_a_row_in_a_body_is_refused():
    @xpuc.jit
    def copy_rows(x, y, sz):
        for i in numba.pndindex(sz):
            x[i] = y[0]

    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as info:
        copy_rows(np.zeros((4, 3)), np.ones((4, 3)), 4)
    assert "assigning anything but a number to an array element or slice" in str(info.value)


@pytest.mark.parametrize(("body", "named"), [
    ('word = "abc"\n            out[i] = len(word)', "'word'"),
    ('out[i] = len("de")', "the constant 'de' is a str here"),
])
def test_messages_name_the_users_variables_never_numbas_temporaries(body, named):
    namespace = {"numba": numba}
    exec(textwrap.dedent(f"""
        def lengths(a, out):
            for i in numba.prange(a.shape[0]):
                {body}
        """), namespace)
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as info:
        xpuc.jit(namespace["lengths"])(np.ones(3), np.zeros(3))
    message = str(info.value)
    assert named in message
    assert "$" not in message and "msg." not in message


def _first_items_equal(out, v):
    for i in numba.prange(out.shape[0]):
        out[i] = v[0] == v[0]


@pytest.mark.parametrize("arg, said", [
    ([1.0, 2.0], "variable 'v' of type list(float64)"), ("ab", "variable 'v' of type str"),
    ((1j, 2.0), "item 0 of 'v' of type complex128")], ids=["list", "str", "tuple"])
def test_arguments_a_body_cannot_hold_are_named_in_pythons_words(arg, said):
    """Not by Numba's types (``reflected list(float64)<iv=None>``,
    ``unicode_type``), and a tuple's item as the item it is."""
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as info:
        xpuc.jit(_first_items_equal)(np.zeros(3, np.bool_), arg)
    line = _first_items_equal.__code__.co_firstlineno + 1  # the loop's
    assert str(info.value) == f"{__file__}:{line}: {said} in a parfor"


def _size_mismatch_sum_of_a_method(x, y):
    return x + np.sqrt(y).sum(axis=0)


def _size_mismatch_constructor(x, n):
    return x + np.ones(n)


def _size_mismatch_slice(x, y):
    return x[1:] + y


@pytest.mark.parametrize("fn, args, named", [
    (_size_mismatch_sum_of_a_method, (np.ones(4), np.ones((3, 5))),
     "Sizes of x, np.sqrt(...).sum(...) do not match"),
    (_size_mismatch_constructor, (np.ones(4), 5), "Sizes of x, np.ones(...) do not match"),
    (_size_mismatch_slice, (np.ones(4), np.ones(4)), "Sizes of x[...], y do not match"),
])
def test_size_checks_name_arrays_by_what_computed_them(fn, args, named):
    """Numba's size checks name temporaries (``$34call.5``); xpuc's name the
    user's call, subscript or variable, with the user's line."""
    with xpuc.device_context(DEVICE), pytest.raises(AssertionError) as error:
        xpuc.jit(fn)(*args)
    message = str(error.value)
    assert message.startswith(named), message
    assert message.endswith(f"({fn.__code__.co_firstlineno + 1})")
    assert "$" not in message


def test_device_arrays_as_globals_or_closure_variables_are_refused_by_name():
    """Numba would bake a global array into the code as a constant; a device
    array's memory is not the host's to copy (it failed inside Numba with an
    AttributeError or an untyped-global TypingError)."""
    dpnp = pytest.importorskip("dpnp")
    shared = dpnp.ones(4, usm_type="shared")
    line = _adds_the_global.__code__.co_firstlineno + 1

    for held in (shared, shared.get_array()):
        globals()["_DEVICE_GLOBAL"] = held
        with pytest.raises(xpuc.UnsupportedError) as refusal:
            xpuc.jit(_adds_the_global)(dpnp.ones(4, usm_type="shared"))
        assert str(refusal.value).startswith(
            f"{__file__}:{line}: the global '_DEVICE_GLOBAL' is a device array (")
        assert "pass it to the function as an argument" in str(refusal.value)

    def closure(a):
        return a + shared

    with pytest.raises(xpuc.UnsupportedError, match="the closure variable 'shared' is a device"):
        xpuc.jit(closure)(dpnp.ones(4, usm_type="shared"))

    @xpuc.kernel
    def kernel(a):
        i = xpuc.get_global_id(0)
        a[i] = a[i] + shared[i]

    with pytest.raises(xpuc.UnsupportedError, match="the closure variable 'shared' is a device"):
        kernel[4](dpnp.ones(4, usm_type="shared"))


def _adds_the_global(a):
    return a + _DEVICE_GLOBAL  # noqa: F821 (set by the test)


_TABLE = np.array([1.0, 2.0, 3.0])


def test_a_global_numpy_array_in_a_kernel_is_refused_by_name():
    """Parfors take such arrays as arguments (test_constant_arrays.py); an
    explicit kernel's arguments are the user's."""
    dpnp = pytest.importorskip("dpnp")

    @xpuc.kernel
    def scale(a):
        i = xpuc.get_global_id(0)
        a[i] = a[i] * _TABLE[i % 3]

    with pytest.raises(xpuc.UnsupportedError) as refusal:
        scale[6](dpnp.ones(6, usm_type="shared"))
    line = scale.py_func.__code__.co_firstlineno + 3
    assert str(refusal.value) == (
        f"{__file__}:{line}: a global or closure array read in a kernel, which cannot hold "
        "one as a constant: pass it to the kernel as an argument")


def _rows_plus_rows_of(x, y):
    for i in numba.prange(x.shape[0]):
        x[i, :] = x[i, :] + y[i]


def test_a_size_mismatch_names_the_indexed_operand_as_written():
    """``y[i]`` of another length than ``x``'s rows (NumPy would broadcast one
    of length 1; Numba's array expressions do not): the host's check names
    it as the user wrote it, not "an array"."""
    with xpuc.device_context(DEVICE), pytest.raises(AssertionError) as info:
        xpuc.jit(_rows_plus_rows_of)(np.ones((4, 3)), np.ones((4, 1)))
    line = _rows_plus_rows_of.__code__.co_firstlineno + 2
    assert str(info.value) == (f"{__file__}:{line}: sizes of 'x'.shape[1] and 'y[i]'.shape[0] "
                               "do not match")
