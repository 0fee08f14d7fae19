"""passes/carried_products.py: a while loop's float arithmetic on the values
it passes to its next iteration, recomputed there, is carried instead."""

import pytest
from mlir import ir

from xpuc.passes.carried_products import carry_products
from xpuc.passes.ir_queries import ops_named

# Mandelbrot's loop as the gpu stage has it (rotated: the test squares the
# new x and y, the next body squares them again); ``{op}`` is what the test
# computes from them
LOOP = """
func.func @escape(%cx: f64, %cy: f64, %limit: i64) -> i64 {{
  %zero = arith.constant 0.0 : f64
  %four = arith.constant 4.0 : f64
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %r:3 = scf.while (%x = %zero, %y = %zero, %n = %c0) : (f64, f64, i64) -> (f64, f64, i64) {{
    %xx = arith.mulf %x, %x : f64
    %yy = arith.mulf %y, %y : f64
    %d = arith.subf %xx, %yy : f64
    %nx = arith.addf %d, %cx : f64
    %ny = arith.addf %y, %cy : f64
    %nn = arith.addi %n, %c1 : i64
    %more = arith.cmpi slt, %nn, %limit : i64
    %go = scf.if %more -> (i1) {{
      %a = {op} %nx, %nx : f64
      %b = arith.mulf %ny, %ny : f64
      %s = arith.addf %a, %b : f64
      %in = arith.cmpf ole, %s, %four : f64
      scf.yield %in : i1
    }} else {{
      %false = arith.constant false
      scf.yield %false : i1
    }}
    scf.condition(%go) %nx, %ny, %nn : f64, f64, i64
  }} do {{
  ^bb0(%x: f64, %y: f64, %n: i64):{after}
    scf.yield %x, {y}, %n : f64, f64, i64
  }}
  return %r#2 : i64
}}
"""


@pytest.fixture(autouse=True)
def context():
    with ir.Context(), ir.Location.unknown():
        yield


def carried(op: str = "arith.mulf", after: str = "", y: str = "%y"
            ) -> tuple[ir.Module, ir.Operation]:
    """The module after ``carry_products``, and its loop."""
    module = ir.Module.parse(LOOP.format(op=op, after=after, y=y))
    carry_products(module)
    assert module.operation.verify()
    [loop] = ops_named(module.operation, "scf.while")
    return module, loop


def test_squares_of_the_next_values_are_carried():
    _module, loop = carried()
    before = loop.regions[0].blocks[0]
    # x and y, their squares, the count
    assert len(before.arguments) == 5 and len(loop.operands) == 5
    # the squares once an iteration, in the test, which no longer branches to them
    squares = ops_named(loop, "arith.mulf")
    assert len(squares) == 2
    assert all(square.parent.operation == loop for square in squares)
    # the first squares are the initial values', before the loop
    assert [ir.Value(v).owner.name for v in loop.operands[3:]] == ["arith.mulf", "arith.mulf"]
    subtract = ops_named(loop, "arith.subf")[0]
    assert list(subtract.operands) == list(before.arguments[3:])


def test_a_division_is_not_carried():
    """It might trap where the short-circuit test would not have run it (and
    the body's product is then recomputed as before)."""
    _module, loop = carried(op="arith.divf")
    assert len(loop.regions[0].blocks[0].arguments) == 4  # y * y carried, x / x not
    assert len(ops_named(loop, "arith.divf")) == 1


def test_values_the_after_region_changes_are_not_carried():
    """The next iteration's y is the after region's -y: y * y there is not
    the test's ny * ny (x * x still is)."""
    _module, loop = carried(after="\n    %negated = arith.negf %y : f64", y="%negated")
    assert len(loop.regions[0].blocks[0].arguments) == 4
    assert len(ops_named(loop, "arith.mulf")) == 3


def test_values_passed_on_unchanged_are_left_alone():
    """x * x of an x each iteration passes on as it is: no later value to
    carry (the loop's invariant, not its recurrence)."""
    module = ir.Module.parse("""
    func.func @f(%x0: f64, %m: i64) -> f64 {
      %c0 = arith.constant 0 : i64
      %c1 = arith.constant 1 : i64
      %r:2 = scf.while (%x = %x0, %n = %c0) : (f64, i64) -> (f64, i64) {
        %xx = arith.mulf %x, %x : f64
        %nn = arith.addi %n, %c1 : i64
        %more = arith.cmpi slt, %nn, %m : i64
        scf.condition(%more) %x, %nn : f64, i64
      } do {
      ^bb0(%x: f64, %n: i64):
        scf.yield %x, %n : f64, i64
      }
      return %r#0 : f64
    }""")
    carry_products(module)
    assert module.operation.verify()
    [loop] = ops_named(module.operation, "scf.while")
    assert len(loop.regions[0].blocks[0].arguments) == 2
