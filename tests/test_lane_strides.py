"""How kernels' accesses move across work-items (passes/lane_strides.py), and
the kernels that walk rows left unvectorized across work-items on a device that
vectorizes them."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlir import ir

from xpuc.passes import Target, lower
from xpuc.passes.ir_queries import ops_named
from xpuc.passes.lane_strides import Stride, access_strides, walks_rows

DATA = Path(__file__).parent / "data" / "passes"


def kernel(body: str, args: str = "%a: memref<?xf32>, %b: memref<?xf32>, %m: index") -> str:
    """A gpu.module whose one kernel runs ``body`` with %x, %y its global ids."""
    return f"""
    gpu.module @k {{
      gpu.func @k({args}) kernel {{
        %x = gpu.global_id x
        %y = gpu.global_id y
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %f0 = arith.constant 0.0 : f32
        {body}
        gpu.return
      }}
    }}"""


def strides_and_verdict(body: str) -> tuple[list[Stride], bool]:
    """The strides of ``body``'s accesses, and whether it ``walks_rows``."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(kernel(body))
        (func,) = ops_named(module.operation, "gpu.func")
        return [stride for _, stride in access_strides(func)], walks_rows(func)


U, ONE, OTHER = Stride.UNIFORM, Stride.UNIT, Stride.OTHER


@pytest.mark.parametrize("index, stride", [
    ("%i = arith.addi %x, %m : index", ONE),              # a[x + m]
    ("%i = arith.subi %x, %c1 : index", ONE),             # a[x - 1]
    ("%i = arith.subi %m, %x : index", OTHER),            # a[m - x]: backwards
    ("%i = arith.muli %x, %m : index", OTHER),            # a[x * m]: a row
    ("%i = arith.addi %x, %x : index", OTHER),            # a[2x]
    ("%i = arith.muli %y, %m : index", U),                # y is the same in a row of x
    ("%t = arith.muli %y, %m : index\n%i = arith.addi %t, %x : index", ONE),
    ("%t = arith.index_cast %x : index to i64\n%i = arith.index_cast %t : i64 to index", ONE),
    ("%t = arith.divui %x, %m : index\n%i = arith.addi %t, %c0 : index", OTHER),
])
def test_stride_of_an_index(index, stride):
    strides, _ = strides_and_verdict(f"{index}\n%v = memref.load %a[%i] : memref<?xf32>")
    assert strides == [stride]


def test_loop_carried_index():
    # the loop's variable is the same in all work-items; what it carries from
    # a work-item dependent start moves as that start does
    strides, _ = strides_and_verdict("""
        %r = scf.for %j = %c0 to %m step %c1 iter_args(%p = %x) -> (index) {
          %v = memref.load %a[%j] : memref<?xf32>
          %w = memref.load %a[%p] : memref<?xf32>
          %n = arith.addi %p, %m : index
          scf.yield %n : index
        }""")
    assert strides == [U, ONE]


def test_divergent_branch_result():
    strides, _ = strides_and_verdict("""
        %c = arith.cmpi ult, %x, %m : index
        %i = scf.if %c -> (index) { scf.yield %c0 : index } else { scf.yield %c0 : index }
        %v = memref.load %a[%i] : memref<?xf32>""")
    assert strides == [OTHER]


ROW_WALK = """
    %row = arith.muli %x, %m : index
    scf.for %j = %c0 to %m step %c1 {{
      %k = arith.addi %row, %j : index
      %v = memref.load %a[%k] : memref<?xf32>
      {more}
    }}"""


@pytest.mark.parametrize("more, verdict", [
    ("", True),  # row sums
    ("memref.store %v, %b[%k] : memref<?xf32>", True),  # row scaling
    # a shared element in the loop: pairwise distances, k-means
    ("%s = memref.load %b[%j] : memref<?xf32>", False),
    # a contiguous one: the vector load serves it
    ("%s = memref.load %b[%x] : memref<?xf32>", False),
    # the walk is not in an innermost loop: Mandelbrot's pixels around its iterations
    ("scf.for %t = %c0 to %m step %c1 { %q = arith.addi %t, %c1 : index }", False),
])
def test_walks_rows(more, verdict):
    _, walks = strides_and_verdict(ROW_WALK.format(more=more))
    assert walks is verdict


def test_a_kernel_without_loops_does_not_walk_rows():
    _, walks = strides_and_verdict("""
        %i = arith.muli %x, %m : index
        %v = memref.load %a[%i] : memref<?xf32>""")
    assert walks is False


def test_private_arrays_are_not_accesses():
    strides, _ = strides_and_verdict("""
        %p = memref.alloca() : memref<4xf32>
        %v = memref.load %p[%c0] : memref<4xf32>
        %w = memref.load %a[%x] : memref<?xf32>""")
    assert strides == [ONE]


@pytest.mark.parametrize("vectorizes, hinted", [(True, True), (False, False)])
def test_row_walking_kernel_gets_a_vec_type_hint(vectorizes, hinted):
    lowered = lower((DATA / "row_sums.mlir").read_text(),
                    Target(vectorizes_work_items=vectorizes))
    assert "xpuc.walks_rows" in lowered.text("gpu")
    spirv = lowered.text("spirv")
    assert ('spirv.ExecutionMode @row_sums_kernel "VecTypeHint", 65538' in spirv) is hinted


def test_map_kernel_gets_no_hint():
    lowered = lower((DATA / "offsets.mlir").read_text(), Target(vectorizes_work_items=True))
    assert "xpuc.walks_rows" not in lowered.text("gpu")
    assert "VecTypeHint" not in lowered.text("spirv")


def test_divergent_loop_result():
    # each work-item leaves the loop after a number of steps of its own
    strides, _ = strides_and_verdict("""
        %r = scf.for %j = %c0 to %x step %c1 iter_args(%p = %c0) -> (index) {
          %n = arith.addi %p, %c1 : index
          scf.yield %n : index
        }
        %v = memref.load %a[%r] : memref<?xf32>""")
    assert strides == [OTHER]
