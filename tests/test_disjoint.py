"""Kernels that walk rows get a copy that assumes its arrays disjoint
(passes/disjoint.py), which the host launches only when they are."""

from __future__ import annotations

import array
from pathlib import Path

import dpctl
import numba
import numpy as np
import pytest
from device_support import DEVICE, launched_kernels
from mlir import ir

import xpuc
from xpuc.array_library import tensor as dpt
from xpuc.passes import Target, lower
from xpuc.passes.disjoint import add_disjoint_variants, declare_noalias, written_arguments
from xpuc.passes.ir_queries import ops_named
from xpuc.passes.launch_plan import KernelChoice
from xpuc.targets import target_for

DATA = Path(__file__).parent / "data" / "passes"


def kernel_module(body: str, attributes: str = "attributes {xpuc.walks_rows}") -> str:
    """A kernel of two arrays running ``body`` in a loop over %j."""
    return f"""
    gpu.module @k {{
      gpu.func @k(%a: memref<?xf32>, %b: memref<?xf32>, %m: index) kernel {attributes} {{
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        scf.for %j = %c0 to %m step %c1 {{
          {body}
        }}
        gpu.return
      }}
    }}"""


def written_and_copies(body: str, **kwargs) -> tuple[list[int], list[str]]:
    """What ``body`` may write, and the kernels after add_disjoint_variants."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(kernel_module(body, **kwargs))
        (kernel,) = ops_named(module.operation, "gpu.func")
        written = written_arguments(kernel)
        add_disjoint_variants(module)
        return written, [str(k.attributes["sym_name"]) for k in
                         ops_named(module.operation, "gpu.func")]


LOAD = "%v = memref.load %a[%j] : memref<?xf32>\n"


@pytest.mark.parametrize("body, written, copied", [
    (LOAD, [], False),  # nothing written
    (LOAD + "memref.store %v, %b[%j] : memref<?xf32>", [1], True),
    (LOAD + "memref.store %v, %a[%j] : memref<?xf32>", [0], True),
    # a use other than a load's memref may write: counted as a write
    (LOAD + "%r = memref.atomic_rmw addf %v, %b[%j] : (f32, memref<?xf32>) -> f32", [1], True),
    ("%s = memref.subview %b[%j][1][1] : memref<?xf32> to memref<1xf32, strided<[1], "
     "offset: ?>>", [1], True),
    # written in a loop around another: that inner loop has no store to vectorize
    (LOAD + "memref.store %v, %b[%j] : memref<?xf32>\n"
     "scf.for %t = %c0 to %m step %c1 { %u = memref.load %a[%t] : memref<?xf32> }", [1], False),
])
def test_written_arguments_and_copies(body, written, copied):
    found, kernels = written_and_copies(body)
    assert found == written
    assert kernels == (['"k"', '"k_disjoint"'] if copied else ['"k"'])


def test_only_kernels_that_walk_rows_are_copied():
    _, kernels = written_and_copies(LOAD + "memref.store %v, %b[%j] : memref<?xf32>",
                                    attributes="")
    assert kernels == ['"k"']


def test_a_kernel_of_one_array_is_not_copied():
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse("""
        gpu.module @k {
          gpu.func @k(%a: memref<?xf32>, %m: index) kernel attributes {xpuc.walks_rows} {
            %c0 = arith.constant 0 : index
            %c1 = arith.constant 1 : index
            scf.for %j = %c0 to %m step %c1 {
              %v = memref.load %a[%j] : memref<?xf32>
              memref.store %v, %a[%j] : memref<?xf32>
            }
            gpu.return
          }
        }""")
        add_disjoint_variants(module)
        assert len(ops_named(module.operation, "gpu.func")) == 1


def noalias_parameters(spirv: bytes) -> list[int]:
    """Ids that ``OpDecorate id FuncParamAttr NoAlias`` decorates."""
    words = array.array("I", spirv)
    found, offset = [], 5
    while offset < len(words):
        count, opcode = words[offset] >> 16, words[offset] & 0xFFFF
        if opcode == 71 and list(words[offset + 2:offset + 4]) == [38, 4]:
            found.append(words[offset + 1])
        offset += count
    return found


@pytest.mark.parametrize("vectorizes", [True, False])
def test_row_doubles_copy_through_the_stages(vectorizes):
    lowered = lower((DATA / "row_doubles.mlir").read_text(),
                    Target(vectorizes_work_items=vectorizes))
    (launch,) = lowered.plan.launches
    if not vectorizes:
        # a device that keeps vectorizing across work-items has no use for it
        assert launch.choices == () and noalias_parameters(lowered.spirv) == []
        return
    assert launch.choices == (KernelChoice("row_doubles_kernel_disjoint", disjoint=True),)
    # the kernel reads a (argument 1) and writes out (argument 2)
    kinds = [kind for _, kind in launch.args]
    assert launch.written == (2,) and kinds[1] == kinds[2] == 0
    spirv_text = lowered.text("spirv")
    restrict = "!spirv.ptr<f32, CrossWorkgroup> {spirv.decoration = #spirv.decoration<Restrict>}"
    base, copy = spirv_text.split("spirv.func @row_doubles_kernel_disjoint(")
    assert restrict not in base and copy.split("\n")[0].count(restrict) == 2
    # the binary declares the copy's two pointers NoAlias, nothing else
    assert len(noalias_parameters(lowered.spirv)) == 2


@pytest.mark.parametrize("source", ["offsets.mlir", "row_sums.mlir"])
def test_declare_noalias_leaves_modules_without_restrict_alone(source):
    # a map, and a row walk that stores outside its loop: no copies
    lowered = lower((DATA / source).read_text(), Target(vectorizes_work_items=True))
    assert not any(choice.disjoint for choice in lowered.plan.launches[0].choices)
    assert declare_noalias(lowered.spirv) == lowered.spirv


# -- on the device: which kernel runs, and what it computes ---------------------

@xpuc.jit
def running_rows(a, out):
    # in place (out is a), each row is a running count: what a copy that
    # assumed a and out disjoint gets wrong once its loop is vectorized
    for i in numba.prange(a.shape[0]):
        for j in range(1, a.shape[1]):
            out[i, j] = a[i, j - 1] + 1.0


@xpuc.jit
def sum_rows_of_two(a, b, out):
    for i in numba.prange(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] + 2.0 * b[i, j]


def rows(shape: tuple[int, int], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape)


# (a, out) of running_rows from one base array of 37 x 203, and the kernel
# that runs: the host compares the bytes each view spans, so views whose rows
# interleave count as overlapping; views with a unit stride along their rows
# run the kernel's copy for them (unswitch.py), and its disjoint copy
VIEWS = {
    "in place": (lambda x: x, lambda x: x, ""),
    # out[i, j] is a[i, j + 2]: a recurrence of distance 2 along each row
    "overlapping views": (lambda x: x[:, :-2], lambda x: x[:, 2:], "_unit"),
    "interleaved views": (lambda x: x[:, :101], lambda x: x[:, 102:], "_unit"),
    "views of separate rows": (lambda x: x[:18], lambda x: x[19:], "_disjoint"),
    "disjoint views": (lambda x: x[:18, 1:], lambda x: x[19:, 1:], "_unit_disjoint"),
}


@pytest.mark.parametrize("case", list(VIEWS))
@pytest.mark.parametrize("usm", [True, False], ids=["usm", "numpy"])
def test_the_copy_runs_only_on_disjoint_arrays(case, usm, capfd):
    *views, suffix = VIEWS[case]
    base = rows((37, 203))
    expected = base.copy()
    numba.njit(running_rows.py_func)(*(view(expected) for view in views))
    on_device = xpuc.asarray(base) if usm else base.copy()
    names = launched_kernels(capfd, lambda: running_rows(*(view(on_device) for view in views)))
    assert names == ["running_rows_parfor0_kernel" + suffix]
    np.testing.assert_array_equal(dpt.asnumpy(on_device) if usm else on_device, expected)


@pytest.mark.parametrize("usm", [True, False], ids=["usm", "numpy"])
def test_separate_arrays_run_the_copy(usm, capfd):
    a, out = rows((37, 101)), np.zeros((37, 101))
    expected = out.copy()
    expected[:, 1:] = a[:, :-1] + 1.0
    if usm:
        a, out = xpuc.asarray(a), xpuc.asarray(out)
    names = launched_kernels(capfd, lambda: running_rows(a, out))
    assert names == ["running_rows_parfor0_kernel_disjoint"]
    np.testing.assert_array_equal(dpt.asnumpy(out) if usm else out, expected)


def test_rows_shorter_than_a_vector_run_the_kernel(capfd):
    # the copy's vector loop would not run over them (see runs_disjoint_copy)
    lanes = target_for(dpctl.SyclDevice(DEVICE)).vector_lanes
    for width, copy_runs in ((lanes - 1, False), (lanes, True)):
        a, out = rows((9, width)), np.zeros((9, width))
        expected = out.copy()
        expected[:, 1:] = a[:, :-1] + 1.0
        names = launched_kernels(capfd, lambda a=a, out=out: running_rows(a, out))
        assert names == ["running_rows_parfor0_kernel" + ("_disjoint" if copy_runs else "")]
        np.testing.assert_array_equal(out, expected)


def test_arrays_only_read_may_overlap(capfd):
    # a and b are one array, which the kernel only reads: the copy may run
    a, out = xpuc.asarray(rows((37, 101))), xpuc.asarray(np.zeros((37, 101)))
    names = launched_kernels(capfd, lambda: sum_rows_of_two(a, a, out))
    assert names == ["sum_rows_of_two_parfor0_kernel_disjoint"]
    np.testing.assert_allclose(dpt.asnumpy(out), 3.0 * dpt.asnumpy(a), rtol=1e-15)
    # one written: not
    names = launched_kernels(capfd, lambda: sum_rows_of_two(a, out, out))
    assert names == ["sum_rows_of_two_parfor0_kernel"]
    np.testing.assert_allclose(dpt.asnumpy(out), 7.0 * dpt.asnumpy(a), rtol=1e-15)


def test_no_trace_when_off(capfd):
    a, out = xpuc.asarray(rows((3, 4))), xpuc.asarray(np.zeros((3, 4)))
    with xpuc.device_context(DEVICE):
        running_rows(a, out)
    assert "xpuc: launched" not in capfd.readouterr().err
