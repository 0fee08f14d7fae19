"""print() in kernels and parfor bodies (SPEC "Explicit kernels"): the
device's printf, one line per call, items as Python separates them."""

import numba
import numpy as np
import pytest

import xpuc
from xpuc.errors import UnsupportedError

DEVICE = "opencl:cpu"


def printed_lines(capfd: pytest.CaptureFixture) -> list[str]:
    # work-items print in any order
    return sorted(capfd.readouterr().out.splitlines())


@xpuc.kernel
def print_scalars(small, big, halves, flags, z):
    i = xpuc.get_global_id(0)
    print("item", i, small[i], big[i], halves[i], flags[i], z[i], "100%")


def test_a_kernel_prints_each_kind_of_scalar(capfd):
    small = np.array([-7, 3], dtype=np.int8)
    big = np.array([2**63 - 1, 2**64 - 1], dtype=np.uint64)
    halves = np.array([0.5, -1.25e-20], dtype=np.float32)
    flags = np.array([True, False])
    z = np.array([1 + 2j, 3 - 0.5j])
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        print_scalars[2](small, big, halves, flags.astype(np.bool_), z)
    assert xpuc.stats()["kernel_launches"] == 1
    assert printed_lines(capfd) == [
        "item 0 -7 9223372036854775807 0.5 True (1+2j) 100%",
        "item 1 3 18446744073709551615 -1.25e-20 False (3-0.5j) 100%",
    ]


@xpuc.kernel
def print_nothing(a):
    print()
    print("only text")


def test_print_with_no_values_prints_its_line(capfd):
    with xpuc.device_context(DEVICE):
        print_nothing[1](np.zeros(1))
    assert printed_lines(capfd) == ["", "only text"]


@xpuc.jit
def print_in_prange(a):
    for i in numba.prange(a.shape[0]):
        print("row", i, a[i] * 2.0)


def test_a_parfor_body_prints_on_the_device(capfd):
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        print_in_prange(np.array([1.5, 2.0, 3.0]))
    assert xpuc.stats()["kernel_launches"] == 1
    assert printed_lines(capfd) == ["row 0 3", "row 1 4", "row 2 6"]


@xpuc.kernel
def print_array(a):
    print("a is", a)


def test_printing_an_array_is_refused_naming_it():
    with xpuc.device_context(DEVICE), pytest.raises(UnsupportedError) as error:
        print_array[1](np.zeros(3))
    message = str(error.value)
    assert "test_print.py" in message and "'a'" in message
    assert "only scalars and string constants print on a device" in message


@xpuc.jit
def print_where_odd(a):
    for i in numba.prange(a.shape[0]):
        if i % 2 == 1:
            print('odd "item"', i, a[i] > 1.0)


def test_a_print_in_a_branch_prints_where_taken(capfd):
    with xpuc.device_context(DEVICE):
        print_where_odd(np.array([5.0, 0.5, 1.0, 3.0]))
    assert printed_lines(capfd) == ['odd "item" 1 False', 'odd "item" 3 True']


@numba.njit
def report(i, value):
    print("at", i, "value", value)


@xpuc.kernel
def print_from_a_device_function(a):
    i = xpuc.get_global_id(0)
    report(i, a[i])


def test_a_device_function_prints(capfd):
    with xpuc.device_context(DEVICE):
        print_from_a_device_function[2](np.array([7, 8], dtype=np.int32))
    assert printed_lines(capfd) == ["at 0 value 7", "at 1 value 8"]


@xpuc.kernel
def print_unpacked(a):
    t = (1, 2)
    print(*t)


def test_print_of_unpacked_arguments_is_refused():
    with xpuc.device_context(DEVICE), pytest.raises(UnsupportedError, match=r"print\(\*args\)"):
        print_unpacked[1](np.zeros(1))
