"""The MLIR lowering (xpuc.passes): each stage of the table, the launch plan,
and the SPIR-V it produces run on the OpenCL CPU device through dpctl.

Inputs are the hand-written linalg-stage modules in tests/data/passes/; each
says in a comment what it computes.
"""

import ctypes
import re
import shutil
import subprocess
import threading
from pathlib import Path

import dpctl
import dpctl.program
import numpy as np
import pytest
from mlir import ir

from xpuc import cli
from xpuc.abi import ArgKind
from xpuc.array_library import tensor as dpt
from xpuc.errors import UnsupportedError, XpucError
from xpuc.passes import (
    STAGES,
    LaunchPlan,
    Lowered,
    Target,
    counted_loops,
    lower,
    read_stage_input,
)
from xpuc.targets import target_for

DATA = Path(__file__).parent / "data" / "passes"
# inputs that lower all the way (linalg_map.mlir does not: see test_unsupported_host_op)
KERNELS = ["math_f32", "math_f64", "int64", "grid2d", "grid3d", "two_loops", "expanded_ops",
           "offsets"]
TARGET = Target()


def source(name: str) -> str:
    return (DATA / f"{name}.mlir").read_text()


_lowered: dict[tuple[str, Target], Lowered] = {}


def lowered(name: str, target: Target = TARGET) -> Lowered:
    """``name`` lowered to SPIR-V, once per target."""
    if (name, target) not in _lowered:
        _lowered[(name, target)] = lower(source(name), target)
    return _lowered[(name, target)]


# --- the stage table ---------------------------------------------------------


def test_stage_table_order():
    assert [stage.name for stage in STAGES] == ["linalg", "gpu", "spirv", "spv"]


@pytest.mark.parametrize("until", [stage.name for stage in STAGES])
def test_lower_stops_after_until(until):
    result = lower(source("math_f32"), TARGET, until=until)
    names = [stage.name for stage in STAGES]
    assert list(result.texts) == names[: names.index(until) + 1]
    assert (result.plan is None) == (until == "linalg")
    assert (result.spirv is None) == (until != "spv")


def test_text_of_a_stage_not_run():
    result = lower(source("math_f32"), TARGET, until="gpu")
    with pytest.raises(XpucError, match="spirv"):
        result.text("spirv")


def test_unknown_stage():
    with pytest.raises(XpucError, match="unknown stage 'ptx'"):
        lower(source("math_f32"), TARGET, until="ptx")


# --- each stage's output -----------------------------------------------------


def test_linalg_stage_is_the_verified_input():
    text = lower(source("grid2d"), TARGET, until="linalg").text("linalg")
    assert "func.func @grid2d" in text and "scf.parallel" in text
    assert "gpu." not in text


@pytest.mark.parametrize(("name", "ndim"), [("math_f32", 1), ("grid2d", 2), ("grid3d", 3)])
def test_gpu_stage(name, ndim):
    result = lowered(name)
    text = result.text("gpu")
    assert "scf.parallel" not in text
    assert text.count("gpu.module @") == 1
    assert text.count("gpu.launch_func") == 1
    (launch,) = result.plan.launches
    assert f"gpu.func @{launch.kernel_name}(" in text
    # one work-item per iteration, by global id, and no fixed work-group size
    assert "known_block_size" not in text and "gpu.block_id" not in text
    assert text.count("gpu.global_id") == ndim
    assert grid_and_block(result.plan, host_params(result.plan))[1] == [(1, 1, 1)]


def test_texts_not_kept_are_lowered_again_on_demand():
    kept = lower(source("math_f32"), TARGET)
    lazy = lower(source("math_f32"), TARGET, keep_texts=False)
    assert lazy.texts is None and lazy.spirv == kept.spirv
    assert lazy.text("gpu") == kept.text("gpu")
    assert lazy.all_texts() == kept.texts
    partial = lower(source("math_f32"), TARGET, until="gpu", keep_texts=False)
    assert partial.has_stage("linalg") and not partial.has_stage("spirv")
    with pytest.raises(XpucError, match="no MLIR kept for stage 'spirv'"):
        partial.text("spirv")


def test_gpu_stage_sinks_constants_and_hoisted_values():
    # math_f64 has a constant and a loop-invariant s*s: both are recomputed in
    # the kernel, so every kernel argument is a function argument
    result = lowered("math_f64")
    (launch,) = result.plan.launches
    assert all(value < result.plan.num_params for value, _ in launch.args)
    assert "arith.mulf" not in host_function(result.text("gpu"))


def test_gpu_stage_argument_kinds():
    # (%a: memref<?xi64>, %mask: memref<?xi8>, %out, %lb: index, %ub: index, %k: i64, %k32: i32);
    # one work-item per iteration needs no bound, so %ub stays on the host
    kinds = {0: ArgKind.PTR, 1: ArgKind.PTR, 2: ArgKind.PTR, 3: ArgKind.I64, 5: ArgKind.I64,
             6: ArgKind.I32}
    (launch,) = lowered("int64").plan.launches
    assert dict(launch.args) == kinds
    (launch,) = lowered("grid2d").plan.launches
    assert dict(launch.args)[5] == ArgKind.F32
    (launch,) = lowered("math_f64").plan.launches
    assert dict(launch.args)[4] == ArgKind.F64


def test_gpu_stage_merges_launches_into_one_gpu_module():
    result = lowered("two_loops")
    text = result.text("gpu")
    assert text.count("gpu.module @") == 1
    names = [launch.kernel_name for launch in result.plan.launches]
    assert len(names) == 2 and len(set(names)) == 2
    for name in names:
        assert f"gpu.func @{name}(" in text


@pytest.mark.parametrize("name", KERNELS)
def test_spirv_stage(name):
    result = lowered(name)
    text = result.text("spirv")
    assert "spirv.module" in text
    assert re.search(r"requires #spirv\.vce<v1\.\d, \[[^]]*\bKernel\b", text)
    assert "spirv.GL." not in text  # GLSL instructions are invalid in OpenCL
    for launch in result.plan.launches:
        assert f'spirv.EntryPoint "Kernel" @{launch.kernel_name}' in text


def test_spirv_stage_uses_opencl_math():
    text = lowered("math_f32").text("spirv")
    for op in ("sin", "exp", "sqrt", "pow"):
        assert f"spirv.CL.{op} " in text


def test_spirv_kernels_fix_no_local_size():
    # the device runtime picks each launch's work-group size
    for name in KERNELS:
        text = lowered(name).text("spirv")
        assert "spirv.EntryPoint" in text and "LocalSize" not in text


def test_spv_stage_is_a_spirv_binary():
    result = lowered("math_f32")
    assert result.spirv[:4] == (0x07230203).to_bytes(4, "little")
    assert "gpu.binary" in result.text("spv")


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="needs spirv-val")
@pytest.mark.parametrize("name", KERNELS)
def test_spirv_val(name, tmp_path):
    binary = tmp_path / f"{name}.spv"
    binary.write_bytes(lowered(name).spirv)
    check = subprocess.run(["spirv-val", "--target-env", "opencl2.1", str(binary)],
                           capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


# --- the target --------------------------------------------------------------


def test_target_caps():
    assert "Float64" in TARGET.spirv_caps and "Float16" not in TARGET.spirv_caps
    assert "Float64" not in Target(fp64=False).spirv_caps
    assert "Float16" in Target(fp16=True).spirv_caps


# --- errors ------------------------------------------------------------------


def test_parse_error_names_the_linalg_stage():
    with pytest.raises(XpucError, match=r"(?s)\(the linalg stage\): .*undeclared SSA value"):
        lower("module { func.func @f() { %0 = arith.addi %x, %x : index\n return } }", TARGET)


def test_verifier_error_names_the_linalg_stage():
    text = "module { func.func @f() { %c = arith.constant 0 : index\n return %c : index } }"
    with pytest.raises(XpucError, match=r"(?s)\(the linalg stage\): .*enclosing function"):
        lower(text, TARGET)


def test_one_function_per_module():
    text = "module { func.func @f() { return }\n func.func @g() { return } }"
    with pytest.raises(XpucError, match=r"^internal error while structuring the loop "
                                        r"\(the linalg stage\): expected one func.func"):
        lower(text, TARGET)


def test_unsupported_host_op():
    # the loop bound comes from memref.dim, which a bare device pointer cannot answer
    with pytest.raises(XpucError, match=r"\(the gpu stage\): host op 'memref\.dim'"):
        lower(source("linalg_map"), TARGET)


def test_unsupported_host_arithmetic():
    text = source("math_f32").replace(
        "scf.parallel (%i) = (%lb) to (%ub)",
        "%ub2 = arith.shli %ub, %c1 : index\n    scf.parallel (%i) = (%lb) to (%ub2)")
    with pytest.raises(XpucError, match=r"\(the gpu stage\): host op 'arith\.shli'"):
        lower(text, TARGET)


def test_four_dimensional_loop():
    text = """module { func.func @f(%a: memref<?xf32>, %n: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%n, %n, %n, %n)
          step (%c1, %c1, %c1, %c1) {
        %x = memref.load %a[%i] : memref<?xf32>
        memref.store %x, %a[%i] : memref<?xf32>
        scf.reduce
      }
      return } }"""
    with pytest.raises(XpucError, match=r"\(the gpu stage\): .*1 to 3 dimensions"):
        lower(text, TARGET)


def test_f64_without_fp64():
    """Refused as the user's code: no stage's name leads, what the stage did ends it."""
    with pytest.raises(UnsupportedError, match=r"^the kernel uses f64 .*no fp64.*"
                                               r" \(while lowering to SPIR-V\)$"):
        lower(source("math_f64"), Target(fp64=False))


# --- failures that reproduce themselves ----------------------------------------


def reproducer_of(error: XpucError) -> Path:
    command = str(error).splitlines()[-1]
    assert command.startswith("reproduce with: xpuc opt "), str(error)
    return Path(command.removeprefix("reproduce with: xpuc opt "))


def test_a_failed_stage_writes_its_input_and_the_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XPUC_REPRODUCER_DIR", str(tmp_path))
    target = Target(vector_lanes=4)
    with pytest.raises(XpucError, match=r"\(the gpu stage\): host op 'memref\.dim'") as failure:
        lower(source("linalg_map"), target)
    path = reproducer_of(failure.value)
    assert path.parent == tmp_path
    # the gpu stage's input: what the linalg stage made, with the target recorded
    recorded = read_stage_input(str(path))
    assert (recorded.stage, recorded.stages, recorded.target) == ("gpu", "parfor", target)
    assert recorded.text == lower(source("linalg_map"), target, until="linalg").text("linalg")
    # the command fails the same way
    assert cli.main(["opt", str(path)]) == 1
    assert "(the gpu stage): host op 'memref.dim'" in capsys.readouterr().err


def test_a_failed_first_stage_reproduces_from_the_source(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XPUC_REPRODUCER_DIR", str(tmp_path))
    text = "module { func.func @f() { return }\n func.func @g() { return } }"
    with pytest.raises(XpucError, match=r"\(the linalg stage\): expected one func.func"
                       ) as failure:
        lower(text, TARGET)
    assert read_stage_input(str(reproducer_of(failure.value))).text == text
    assert cli.main(["opt", str(reproducer_of(failure.value))]) == 1
    assert "expected one func.func per module, found 2" in capsys.readouterr().err


def test_an_unsupported_construct_needs_no_reproducer(tmp_path, monkeypatch):
    monkeypatch.setenv("XPUC_REPRODUCER_DIR", str(tmp_path))
    with pytest.raises(UnsupportedError) as failure:
        lower(source("math_f64"), Target(fp64=False))
    assert "reproduce with" not in str(failure.value)
    assert list(tmp_path.iterdir()) == []


def test_opt_runs_one_stage_of_a_plain_file(tmp_path, capsys):
    linalg = tmp_path / "grid2d.mlir"
    linalg.write_text(lower(source("grid2d"), TARGET, until="linalg").text("linalg"))
    assert cli.main(["opt", "--stage", "gpu", "--device", "opencl:cpu", str(linalg)]) == 0
    device_target = target_for(dpctl.SyclDevice("opencl:cpu"))
    assert capsys.readouterr().out == lower(source("grid2d"), device_target,
                                            until="gpu").text("gpu")
    assert cli.main(["opt", str(linalg)]) == 1
    assert "records no stage" in capsys.readouterr().err


def test_lowering_in_threads():
    # one MLIR context per thread: concurrent lowerings give the same binary
    expected = lower(source("grid3d"), TARGET).spirv
    results = []

    def work():
        results.extend(lower(source("grid3d"), TARGET).spirv for _ in range(5))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 20


# --- running the kernels -----------------------------------------------------


def _div(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def _cmp(predicate: str, a: int, b: int) -> int:
    if predicate.startswith("u"):
        a, b = a % 2**64, b % 2**64
    return int({"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
                "ge": a >= b}[predicate.lstrip("su")])


_HOST_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": _div,
    "rem": lambda a, b: a - b * _div(a, b),
    "ceildiv": lambda a, b: -(-a // b),
    "floordiv": lambda a, b: a // b,
    "min": min,
    "max": max,
    "select": lambda c, a, b: a if c else b,
    "copy": lambda a: a,
}


def evaluate_plan(plan: LaunchPlan, params: list) -> list:
    """The plan's values: ``params`` (the function's arguments), then each op's."""
    assert len(params) == plan.num_params
    values = list(params)
    for op in plan.ops:
        operands = [values[n] for n in op.operands]
        if op.opcode == "const":
            values.append(op.attr)
        elif op.opcode == "cmp":
            values.append(_cmp(op.attr, *operands))
        else:
            values.append(_HOST_OPS[op.opcode](*operands))
    assert len(values) == plan.value_count()
    return values


def host_params(plan: LaunchPlan) -> list:
    """Placeholder arguments (1 each) for plans whose sizes do not matter."""
    return [1] * plan.num_params


def grid_and_block(plan: LaunchPlan, params: list) -> tuple[list, list]:
    values = evaluate_plan(plan, params)
    grids = [tuple(values[n] for n in launch.grid) for launch in plan.launches]
    blocks = [tuple(values[n] for n in launch.block) for launch in plan.launches]
    return grids, blocks


def host_function(text: str) -> str:
    """The host func.func of a gpu-stage module (everything before the gpu.module)."""
    return text.split("gpu.module")[0]


_CTYPES = {ArgKind.I8: ctypes.c_int8, ArgKind.I32: ctypes.c_int32,
           ArgKind.I64: ctypes.c_int64, ArgKind.F32: ctypes.c_float,
           ArgKind.F64: ctypes.c_double}


@pytest.fixture(scope="module")
def queue():
    try:
        return dpctl.SyclQueue("opencl:cpu")
    except dpctl.SyclQueueCreationError:
        pytest.skip("no OpenCL CPU device")


def run(queue, result: Lowered, params: list) -> None:
    """Launch ``result`` as the runtime does: evaluate the plan, then run each
    kernel on global size grid * block, leaving the work-group size to SYCL.
    Arrays in ``params`` are ``usm_ndarray``."""
    program = dpctl.program.create_program_from_spirv(queue, result.spirv)
    values = evaluate_plan(result.plan, params)
    grids, blocks = grid_and_block(result.plan, params)
    for launch, grid, block in zip(result.plan.launches, grids, blocks, strict=True):
        # get_sycl_kernel of a missing name gives a kernel whose launch crashes
        assert program.has_sycl_kernel(launch.kernel_name)
        kernel = program.get_sycl_kernel(launch.kernel_name)
        args = [values[n].usm_data if kind == ArgKind.PTR else _CTYPES[kind](values[n])
                for n, kind in launch.args]
        global_size = [g * b for g, b in zip(grid, block, strict=True)]
        if 0 in global_size:
            continue  # as the runtime does: SYCL rejects some empty ranges
        # SYCL ranges list the fastest dimension last: x (OpenCL dimension 0,
        # GlobalInvocationId.x) goes last; no local size, as the runtime does
        queue.submit(kernel, args, global_size[::-1]).wait()


def device(queue, array: np.ndarray) -> dpt.usm_ndarray:
    return dpt.asarray(array, sycl_queue=queue)


def host(array: dpt.usm_ndarray) -> np.ndarray:
    return dpt.asnumpy(array)


SENTINEL = -7


# (lb, ub) over arrays of 1000 elements: full, offset, one, empty, and ub < lb
RANGES_1D = [(0, 1000), (3, 1000), (0, 1), (0, 0), (500, 200)]


@pytest.mark.parametrize(("lb", "ub"), RANGES_1D)
def test_run_math_f32(queue, lb, ub):
    rng = np.random.default_rng(1)
    a = rng.uniform(-3, 3, 1000).astype(np.float32)
    b = rng.uniform(0.1, 2, 1000).astype(np.float32)
    out = np.full(1000, SENTINEL, np.float32)
    s = np.float32(0.75)
    d_out = device(queue, out)
    run(queue, lowered("math_f32"), [device(queue, a), device(queue, b), d_out, lb, ub, s])
    expected = out.copy()
    x, y = a[lb:ub], b[lb:ub]
    expected[lb:ub] = np.sin(x) * s + np.exp(y) + np.sqrt(np.abs(x)) + y ** np.float32(1.5)
    np.testing.assert_allclose(host(d_out), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("lb", "ub"), RANGES_1D)
def test_run_math_f64(queue, lb, ub):
    from math import erf

    rng = np.random.default_rng(2)
    a = rng.uniform(-3, 3, 1000)
    out = np.full(1000, SENTINEL, np.float64)
    s = 1.25
    d_out = device(queue, out)
    run(queue, lowered("math_f64"), [device(queue, a), d_out, lb, ub, s])
    expected = out.copy()
    x = a[lb:ub]
    expected[lb:ub] = (np.tanh(x) + np.arctan2(x, s * s) + np.vectorize(erf, otypes=[np.float64])(x)
                       + np.floor(x * s) + np.cos(x) + np.log(1 + np.abs(x))
                       + np.abs(x) ** s)
    np.testing.assert_allclose(host(d_out), expected, rtol=1e-12, atol=1e-12)


def test_run_expanded_ops(queue):
    a = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 8.0, 27.0, -64.0, 0.3, -0.7, 10.0, -10.0,
                  1e-3, 700.0, 1e300, -1e300, 1e-300, 5e-324, np.inf, -np.inf, np.nan])
    a = np.concatenate([a, np.random.default_rng(4).uniform(-1e4, 1e4, 1000)])
    finite = np.isfinite(a) & (np.abs(a) < 1e15)
    outputs = [device(queue, np.zeros_like(a)) for _ in range(3)]
    q = device(queue, np.zeros(a.size, np.int64))
    run(queue, lowered("expanded_ops"), [device(queue, a), *outputs, q, a.size, -7])
    e, t, c = map(host, outputs)
    with np.errstate(over="ignore", invalid="ignore"):
        np.testing.assert_allclose(e, np.exp2(a), rtol=1e-14)
        np.testing.assert_array_equal(t, np.trunc(a))
        np.testing.assert_array_equal(np.signbit(t), np.signbit(np.trunc(a)))
        np.testing.assert_allclose(c, np.cbrt(a), rtol=5e-16, atol=0)  # 2 ulp
        xi = (a[finite] * 1000).astype(np.int64)
    np.testing.assert_array_equal(host(q)[finite], xi // -7)


@pytest.mark.parametrize(("lb", "ub", "step", "off"),
                         [(-5, 5, 1, 10), (-7, 20, 3, 10), (4, 300, 5, 0), (5, 2, 2, 0),
                          (-20, -3, 1, 20), (0, 1, 7, 0)])
def test_run_offsets(queue, lb, ub, step, off):
    # normalized to run from 0 by 1, the loop keeps its negative indices and steps
    out = np.full(400, SENTINEL, np.int64)
    d_out = device(queue, out)
    run(queue, lowered("offsets"), [d_out, lb, ub, step, off])
    indices = np.arange(lb, ub, step)
    out[indices + off] = indices
    np.testing.assert_array_equal(host(d_out), out)


@pytest.mark.parametrize(("lb", "ub"), RANGES_1D)
def test_run_int64(queue, lb, ub):
    rng = np.random.default_rng(3)
    a = rng.integers(-10**12, 10**12, 1000, dtype=np.int64)
    mask = rng.integers(0, 2, 1000, dtype=np.int8)
    out = np.full(1000, SENTINEL, np.int64)
    k, k32 = -123456789, -42
    d_out = device(queue, out)
    run(queue, lowered("int64"),
        [device(queue, a), device(queue, mask), d_out, lb, ub, k, k32])
    expected = out.copy()
    x = a[lb:ub]
    quotient = np.sign(x) * (np.abs(x) // 3)  # C division truncates
    value = x * k + quotient - np.fmod(x, 5) + np.arange(lb, ub)
    expected[lb:ub] = np.where(mask[lb:ub] != 0, value, k32)
    np.testing.assert_array_equal(host(d_out), expected)


@pytest.mark.parametrize(("lb0", "n0", "n1"),
                         [(0, 37, 53), (5, 37, 53), (0, 1, 1), (0, 0, 53), (0, 37, 0)])
def test_run_grid2d(queue, lb0, n0, n1):
    a = np.arange(n0 * n1, dtype=np.float32)
    out = np.full(n0 * n1, SENTINEL, np.float32)
    s = np.float32(0.5)
    d_out = device(queue, out)
    run(queue, lowered("grid2d"), [device(queue, a), d_out, lb0, n0, n1, s])
    expected = out.reshape(n0, n1).copy()
    i, j = np.meshgrid(np.arange(n0), np.arange(n1), indexing="ij")
    full = a.reshape(n0, n1) * s + j + 1000 * i
    expected[lb0:] = full[lb0:]
    np.testing.assert_array_equal(host(d_out), expected.ravel())


@pytest.mark.parametrize(("n0", "lb1", "n1", "n2"),
                         [(5, 0, 7, 11), (5, 2, 7, 11), (1, 0, 1, 1), (0, 0, 7, 11),
                          (5, 0, 7, 0), (3, 0, 40, 70)])
def test_run_grid3d(queue, n0, lb1, n1, n2):
    shape = (n0, n1, n2)
    a = np.arange(n0 * n1 * n2, dtype=np.int64)
    out = np.full(a.size, SENTINEL, np.int64)
    d_out = device(queue, out)
    run(queue, lowered("grid3d"), [device(queue, a), d_out, n0, lb1, n1, n2])
    expected = out.reshape(shape).copy()
    i, j, k = np.meshgrid(*map(np.arange, shape), indexing="ij")
    full = a.reshape(shape) + k + 100 * j + 10000 * i
    expected[:, lb1:] = full[:, lb1:]
    np.testing.assert_array_equal(host(d_out), expected.ravel())


@pytest.mark.parametrize(("n0", "n1"), [(37, 53), (1, 1), (0, 5)])
def test_run_two_launches(queue, n0, n1):
    a = np.linspace(-1, 1, n0 * n1)
    b, c = np.zeros_like(a), np.zeros_like(a)
    d_b, d_c = device(queue, b), device(queue, c)
    run(queue, lowered("two_loops"), [device(queue, a), d_b, d_c, n0, n1, a.size])
    np.testing.assert_array_equal(host(d_b), 2 * a)
    np.testing.assert_array_equal(host(d_c), 2 * a + 1)


# A counted loop as lift-cf-to-scf leaves it: the counter (%j) from %start
# while below %stop by STEP, a sum carried beside it; ``{before}`` replaces
# the before-region's ops and ``{use}`` follows the loop.
WHILE_LOOP = """
func.func @f(%start: i64, %stop: i64, %a: memref<?xf64>) -> f64 {{
  %zero = arith.constant 0.0 : f64
  %step = arith.constant {step} : i64
  %r:3 = scf.while (%sum = %zero, %j = %start) : (f64, i64) -> (i64, f64, i64) {{
    {before}
    scf.condition(%more) %next, %sum, %j : i64, f64, i64
  }} do {{
  ^bb0(%next: i64, %sum: f64, %j: i64):
    %k = arith.index_cast %j : i64 to index
    %x = memref.load %a[%k] : memref<?xf64>
    %s = arith.addf %sum, %x : f64
    scf.yield %s, %next : f64, i64
  }}
  {use}
  return %r#1 : f64
}}
"""
COUNTING = ("%more = arith.cmpi slt, %j, %stop : i64\n"
            "    %next = arith.addi %j, %step : i64")


def counted(step: int = 1, before: str = COUNTING, use: str = "") -> str:
    """The loop of WHILE_LOOP after counted_loops.to_for_loops, verified."""
    with ir.Context():
        module = ir.Module.parse(WHILE_LOOP.format(step=step, before=before, use=use))
        counted_loops.to_for_loops(module)
        module.operation.verify()
        return str(module)


def test_a_counted_loop_becomes_an_scf_for():
    text = counted(step=2)
    assert "scf.while" not in text
    loop = re.search(r"%(\d+) = scf.for %\w+ = %arg0 to %arg1 step %c2_i64\w* "
                     r"iter_args\(%\w+ = %cst\) -> \(f64\)\s*: i64", text)
    assert loop and f"return %{loop.group(1)} : f64" in text
    assert "arith.addi" not in text  # the counter's increment, now the loop's own


@pytest.mark.parametrize("step, before, use", [
    (-1, COUNTING.replace("slt", "sgt"), ""),  # counts down
    (0, COUNTING, ""),  # never ends
    (1, COUNTING.replace("slt", "ult"), ""),  # an unsigned bound
    (1, "%more = arith.cmpi slt, %j, %stop : i64\n    %next = arith.muli %j, %step : i64", ""),
    (1, COUNTING + "\n    %more2 = arith.cmpi slt, %j, %stop : i64", ""),  # more in its test
    (1, COUNTING, "%last = arith.addi %r#2, %r#0 : i64"),  # its last index is read after
])
def test_a_loop_that_does_not_count_stays_an_scf_while(step, before, use):
    assert "scf.while" in counted(step, before, use)
    assert "scf.for" not in counted(step, before, use)
