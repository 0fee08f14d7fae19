"""Every op the frontend emits carries the location of the user's code it was
translated from, and an error in a later stage names the user's file and
line."""

import inspect
import math

import numba
import numpy as np
import pytest
from device_support import DEVICE, offload
from mlir import ir

import xpuc
from xpuc.passes import math_expansions


def source_lines(fn) -> range:
    lines, first = inspect.getsourcelines(fn)
    return range(first, first + len(lines))


def file_locations(location: ir.Location) -> list[ir.Location]:
    """The file locations a location is made of (a call site's, a fusion's)."""
    if location.is_a_file():
        return [location]
    if location.is_a_callsite():
        return file_locations(location.callee) + file_locations(location.caller)
    if location.is_a_fused():
        return [part for child in location.locations for part in file_locations(child)]
    if location.is_a_name():
        return file_locations(location.child_loc)
    return []


def assert_every_op_is_located(module_text: str, fn) -> None:
    """Each op of ``module_text`` (but the module) is at a line of ``fn``."""
    lines = source_lines(fn)
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(module_text)
        unlocated = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            places = file_locations(op.location)
            if op.name != "builtin.module" and not any(
                    place.filename == __file__ and place.start_line in lines for place in places):
                unlocated.append(f"{op.name} at {op.location}")
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
    assert unlocated == []


@xpuc.jit
def branchy(a, out, threshold):
    total = 0.0
    for i in numba.prange(a.shape[0]):
        if a[i] > threshold:
            out[i] = math.sin(a[i])
        else:
            acc = 0.0
            for j in range(3):
                acc += a[i] * j
            out[i] = acc
        total += out[i]
    return total + np.float64(1e-05)


@xpuc.kernel
def tiled(a, out):
    i = xpuc.get_global_id(0)
    tile = xpuc.local.array(8, np.float64)
    tile[xpuc.get_local_id(0)] = a[i]
    xpuc.barrier()
    if i % 2 == 0:
        xpuc.atomic.add(out, 0, tile[0])  # a float atomic: a compare-exchange loop


def test_every_op_of_a_parfor_carries_the_users_line():
    a = np.linspace(-1, 1, 64)
    offload(branchy, a, np.zeros(64), 0.25)
    for lowered in branchy.inspect_lowered():
        assert_every_op_is_located(lowered.source, branchy.py_func)


@xpuc.jit
def scaled_view(a, out):
    out[:] = a * 2.0


def test_every_op_of_a_parfor_on_views_carries_the_users_line():
    # views: a kernel per innermost stride, chosen by an scf.if (loop_nest.py)
    offload(scaled_view, np.ones((6, 8))[:, ::2], np.zeros((6, 4)))
    for lowered in scaled_view.inspect_lowered():
        assert "scf.if" in lowered.source
        assert_every_op_is_located(lowered.source, scaled_view.py_func)


def test_every_op_of_a_kernel_carries_the_users_line():
    with xpuc.device_context(DEVICE):
        tiled[xpuc.NdRange(16, 8)](np.ones(16), np.zeros(1))
    (compiled,) = tiled._lowered(None)
    assert_every_op_is_located(compiled.lowered.source, tiled.py_func)


def test_an_error_in_a_later_stage_names_the_users_line(monkeypatch):
    """A rewrite of the spirv stage that leaves an invalid op where math.sin
    was: the verifier's error names the line of math.sin in the user's file."""

    def invalid(x: ir.Value) -> ir.Value:
        # an integer add of floats: invalid, at the location of the op it replaces
        return ir.Operation.create("arith.addi", results=[x.type], operands=[x, x]).result

    monkeypatch.setitem(math_expansions._EXPANSIONS, "math.sin", invalid)

    @xpuc.jit
    def sines(a):
        return np.sin(a) + 1.0

    lines, first = inspect.getsourcelines(sines.py_func)
    line = first + next(k for k, text in enumerate(lines) if "np.sin" in text)
    with pytest.raises(xpuc.XpucError, match=rf'(?s)\(the spirv stage\): .*"{__file__}":{line}:'):
        offload(sines, np.ones(8))
