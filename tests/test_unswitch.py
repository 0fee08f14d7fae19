"""Kernels split at a branch on ``argument == 1`` (passes/unswitch.py), the
host launching the side whose condition holds."""

from __future__ import annotations

import re

import numpy as np
import pytest
from device_support import launched_kernels
from mlir import ir

import xpuc
from xpuc.array_library import tensor as dpt
from xpuc.passes.ir_queries import ops_named, symbol_name
from xpuc.passes.unswitch import split_on_unit_arguments, unit_variant


def split(condition: str, branch_in_loop: bool = False) -> list[str]:
    """The kernels (as text) after splitting one that branches on ``condition``
    (an i1 named %cond, computed from %a, %b, %x and the constant %c1)."""
    branch = """
        %r = scf.if %cond -> index {
          %t = arith.addi %a, %b : index
          scf.yield %t : index
        } else {
          %e = arith.muli %a, %b : index
          scf.yield %e : index
        }
        memref.store %r, %out[%x] : memref<?xindex>"""
    if branch_in_loop:
        branch = f"scf.for %j = %x to %b step %c1 {{ {branch} }}"
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(f"""
        gpu.module @k {{
          gpu.func @k(%a: index, %b: index, %out: memref<?xindex>) kernel {{
            %x = gpu.global_id x
            %c1 = arith.constant 1 : index
            {condition}
            {branch}
            gpu.return
          }}
        }}""")
        split_on_unit_arguments(module)
        module.operation.verify()
        kernels = ops_named(module.operation, "gpu.func")
        if len(kernels) == 2:
            assert unit_variant(kernels[0]) == ("k_unit", (0, 1))
            assert symbol_name(kernels[1]) == "k_unit"
        return [str(kernel) for kernel in kernels]


BOTH_ONE = """
    %p = arith.cmpi eq, %a, %c1 : index
    %q = arith.cmpi eq, %c1, %b : index
    %cond = arith.andi %p, %q : i1"""


def test_a_branch_on_arguments_being_one_splits_the_kernel():
    kernel, unit = split(BOTH_ONE)
    # each keeps its side, without the branch or its test
    assert "arith.muli" in kernel and "arith.addi" not in kernel
    assert "arith.addi" in unit and "arith.muli" not in unit
    assert not any("scf.if" in k or "arith.cmpi" in k for k in (kernel, unit))


@pytest.mark.parametrize("condition", [
    "%cond = arith.cmpi ne, %a, %c1 : index",  # not equality
    "%c2 = arith.constant 2 : index\n%cond = arith.cmpi eq, %a, %c2 : index",  # not 1
    "%cond = arith.cmpi eq, %x, %c1 : index",  # not an argument: differs between work-items
    "%p = arith.cmpi eq, %a, %c1 : index\n%q = arith.cmpi eq, %x, %c1 : index\n"
    "%cond = arith.andi %p, %q : i1",  # one side of the conjunction is not
    "%p = arith.cmpi eq, %a, %c1 : index\n%q = arith.cmpi eq, %b, %c1 : index\n"
    "%cond = arith.ori %p, %q : i1",  # a disjunction
])
def test_other_branches_stay(condition):
    (kernel,) = split(condition)
    assert "scf.if" in kernel


def test_a_branch_inside_a_loop_stays():
    (kernel,) = split(BOTH_ONE, branch_in_loop=True)
    assert "scf.if" in kernel


@xpuc.jit
def interior_average(a, out):
    out[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])


@pytest.mark.parametrize("step", [1, 2])
@pytest.mark.parametrize("usm", [True, False], ids=["usm", "numpy"])
def test_the_host_launches_the_side_of_the_strides(step, usm, capfd):
    base = np.random.default_rng(5).uniform(-1, 1, (40, 61))
    a, out = base[:, ::step], np.zeros_like(base)[:, ::step]
    expected = out.copy()
    interior_average.py_func(a, expected)
    if usm:
        a, out = xpuc.asarray(base)[:, ::step], xpuc.asarray(np.zeros_like(base))[:, ::step]
    names = launched_kernels(capfd, lambda: interior_average(a, out))
    # one launch, of the side for the strides (on USM arrays the parfors before
    # it in the numbering are the overlap copies of a's views, compiled, not run)
    assert len(names) == 1 and re.fullmatch(
        r"interior_average_parfor\d+_kernel" + ("_unit" if step == 1 else ""), names[0])
    np.testing.assert_allclose(dpt.asnumpy(out) if usm else out, expected, rtol=1e-15)
