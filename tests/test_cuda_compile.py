"""The CUDA tail of the stage table (gpu -> nvvm -> ptx), without a GPU: the
PTX of the hand-written modules of tests/data/passes for NVIDIA architectures
(tests/conftest.py validates each with ptxas), its kernel ABI and launch
plan, its math (libdevice, never the hardware's approximations) and the
tails of CUDA blocks."""

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from numba.core import types

import xpuc
from xpuc import abi, cli
from xpuc import kernel_api as kapi
from xpuc.abi import ArgKind
from xpuc.errors import UnsupportedError, XpucError
from xpuc.frontend.host_lowering import compile_to_spirv
from xpuc.frontend.kernel_api_calls import KernelApiLaunch
from xpuc.nvidia_gpus import ARCHITECTURES
from xpuc.passes import CUDA_KERNEL_STAGES, CUDA_STAGES, Target, libdevice, lower, stages_for
from xpuc.passes.libdevice import libdevice_path
from xpuc.targets import arch_target

DATA = Path(__file__).parent / "data" / "passes"
KERNELS = ["math_f32", "math_f64", "int64", "grid2d", "grid3d", "two_loops", "expanded_ops",
           "offsets", "row_sums", "row_doubles"]
SM90 = arch_target("sm_90")

try:
    libdevice_path()
except XpucError as error:
    pytest.skip(f"no libdevice: {error}", allow_module_level=True)


def source(name: str) -> str:
    return (DATA / f"{name}.mlir").read_text()


def ptx_of(name: str, target: Target = SM90) -> str:
    """``name`` lowered to PTX, kept in the dump directory for ptxas."""
    return compile_to_spirv(name, source(name), target).ptx.decode()


def kernel_parameters(ptx: str, kernel: str) -> list[str]:
    """The PTX types of ``kernel``'s parameters, in order."""
    entry = re.search(rf"\.entry {kernel}\((.*?)\)", ptx, re.DOTALL)
    return re.findall(r"\.param \.(\w+) ", entry.group(1))


def test_stage_tables_branch_after_gpu():
    assert [stage.name for stage in stages_for(SM90)] == ["linalg", "gpu", "nvvm", "ptx"]
    assert [stage.name for stage in stages_for(SM90, kernel=True)] == ["gpu", "nvvm", "ptx"]
    assert stages_for(SM90) is CUDA_STAGES and stages_for(SM90, kernel=True) is CUDA_KERNEL_STAGES
    assert [stage.name for stage in stages_for(Target())][2:] == ["spirv", "spv"]


@pytest.mark.parametrize("name", KERNELS)
def test_kernels_become_ptx(name):
    ptx = ptx_of(name)
    assert ".target sm_90" in ptx and ".version 8.0" in ptx
    assert ".entry" in ptx


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_every_architecture(arch):
    ptx = ptx_of("grid2d", arch_target(arch))
    assert f".target {arch}" in ptx


def test_unknown_architecture():
    with pytest.raises(ValueError, match=r"unknown NVIDIA GPU architecture 'sm_99' \(known: "
                                         r"sm_75, "):
        arch_target("sm_99")


def test_stages_keep_their_texts():
    lowered = lower(source("math_f32"), SM90)
    assert list(lowered.texts) == ["linalg", "gpu", "nvvm", "ptx"]
    assert "#nvvm.target<chip = \"sm_90\", features = \"+ptx80\"" in lowered.text("gpu")
    assert "nvvm.read.ptx.sreg.tid.x" in lowered.text("nvvm")
    assert lowered.text("ptx") == lowered.ptx.decode()  # --emit ptx shows the PTX itself
    assert lowered.spirv is None


def test_arrays_are_bare_pointers_and_extents_arrive_last():
    """The SPIR-V kernels' ABI (one pointer per array, sizes as separate
    arguments, read off the launch), plus the iteration count of a kernel
    that runs several iterations a thread (coarsening.py) and the range's
    extent: the launch plan passes it, the kernel compares its global id with
    it."""
    lowered = lower(source("math_f32"), SM90)
    (launch,) = lowered.plan.launches
    spirv_launch, = lower(source("math_f32"), Target()).plan.launches
    assert launch.args[:-2] == spirv_launch.args
    (total, total_kind), (extent, kind) = launch.args[-2:]
    assert kind is ArgKind.I64 and extent == launch.grid[0]
    assert total_kind is ArgKind.I64 and total == spirv_launch.grid[0]
    parameters = kernel_parameters(lowered.ptx.decode(), launch.kernel_name)
    ptx_types = {ArgKind.PTR: "u64", ArgKind.I64: "u64", ArgKind.F32: "f32"}
    assert parameters == [ptx_types[kind] for _, kind in launch.args]
    nvvm = lowered.text("nvvm")
    assert re.search(r"llvm.icmp \"ult\" %\d+, %arg\d+ : i64", nvvm)


def test_constant_extents_are_not_passed():
    """A launch over a constant range (a reduction's lanes x groups) guards
    its ids with constants and takes no extra argument."""
    text = """
module {
  func.func @sixteen(%out: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %one = arith.constant 1.0 : f32
    scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
      memref.store %one, %out[%i] : memref<?xf32>
      scf.reduce
    }
    return
  }
}
"""
    lowered = compile_to_spirv("sixteen", text, SM90)
    (launch,) = lowered.plan.launches
    assert [kind for _, kind in launch.args] == [ArgKind.PTR]
    assert re.search(r"arith.cmpi ult, %global_id_x\w*, %c16", lowered.text("nvvm")) is None
    assert "known_grid_size" not in lowered.text("nvvm")
    assert re.search(r"setp.\w+.[su]64\s+%p\d+, %rd\d+, 15;|setp.\w+.[su]64\s+%p\d+, "
                     r"%rd\d+, 16;", lowered.ptx.decode())


def test_kernels_whose_accesses_move_along_x_are_marked_for_warp_wide_blocks():
    """grid2d's accesses (a[i*n1 + j], j along x) move by one element as x
    does: its module has the global the runtime looks up for blocks a warp
    wide; the same loop reading along its columns (a[j*n0 + i]) has none."""
    mark = f"grid2d_kernel{abi.CUDA_X_CONTIGUOUS_SUFFIX}"
    assert re.search(rf"\.visible \.global .*\b{mark} = 1;", ptx_of("grid2d"))
    by_columns = source("grid2d").replace("%row = arith.muli %i, %n1", "%row = arith.muli %j, %n0")
    by_columns = by_columns.replace("%k = arith.addi %row, %j", "%k = arith.addi %row, %i")
    assert abi.CUDA_X_CONTIGUOUS_SUFFIX not in lower(by_columns, SM90).ptx.decode()


def test_math_goes_through_libdevice():
    """float64 exp is libdevice's __nv_exp, never the float32 ex2.approx
    LLVM lowers math.exp to without it; float32 square roots are correctly
    rounded (libdevice's __nv_sqrtf is sqrt.approx unless told otherwise)."""
    f64 = lower(source("math_f64"), SM90)
    assert "llvm.call @__nv_" in f64.text("nvvm")
    assert "__nv_" not in f64.ptx.decode().split(".entry")[1].split("{")[0]
    f32 = lower(source("math_f32"), SM90)
    ptx = f32.ptx.decode()
    assert "sqrt.rn.f32" in ptx and "sqrt.approx" not in ptx


def test_exp_float64_is_exact():
    text = """
module {
  func.func @exp64(%x: memref<?xf64>, %out: memref<?xf64>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %v = memref.load %x[%i] : memref<?xf64>
      %e = math.exp %v : f64
      memref.store %e, %out[%i] : memref<?xf64>
      scf.reduce
    }
    return
  }
}
"""
    ptx = compile_to_spirv("exp64", text, SM90).ptx.decode()
    assert "ex2.approx" not in ptx and "fma.rn.f64" in ptx


ATOMIC_COUNT = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @count(%a: memref<?xi32>, %p: !spirv.ptr<i32, CrossWorkgroup>) kernel {
      %one = arith.constant 1 : i32
      %zero = arith.constant 0 : i64
      %element = spirv.PtrAccessChain %p[%zero] : !spirv.ptr<i32, CrossWorkgroup>, i64
        -> !spirv.ptr<i32, CrossWorkgroup>
      %old = spirv.AtomicIAdd <Device> <None> %element, %one
        : !spirv.ptr<i32, CrossWorkgroup> loc("user.py":7:4)
      gpu.return
    }
  }
}
"""


def test_explicit_kernels_spirv_ops_become_llvm_atomics():
    """The frontend's spirv ops (an array passed again as a pointer for its
    atomics) are translated in the nvvm stage: the pointer a generic one,
    the atomic llvm's, device-scoped as SPIR-V's."""
    lowered = lower(ATOMIC_COUNT, SM90, stages=CUDA_KERNEL_STAGES)
    nvvm = lowered.text("nvvm")
    assert "%arg1: !llvm.ptr" in nvvm
    assert re.search(r'llvm.atomicrmw add %arg1, %\w+ syncscope\("device"\) monotonic '
                     r": !llvm.ptr, i32", nvvm)
    ptx = lowered.ptx.decode()
    assert "atom.global.add.u32" in ptx
    # the range's extents (x, y, z) follow the arguments (guard_kernel_ranges)
    assert kernel_parameters(ptx, "count") == ["u64"] * 5


def test_spirv_ops_without_a_cuda_lowering_are_refused():
    text = ATOMIC_COUNT.replace("AtomicIAdd <Device> <None> %element, %one",
                                "AtomicIIncrement <Device> <None> %element")
    with pytest.raises(UnsupportedError, match=r"^the kernel uses spirv.AtomicIIncrement "
                                               r"\(at user.py:7\), which has no CUDA lowering "
                                               r"\(while lowering to NVVM\)$"):
        lower(text, SM90, stages=CUDA_KERNEL_STAGES)


def test_f64_is_refused_where_the_target_has_no_fp64():
    """XPUC_FP64=0 makes an NVIDIA GPU's Target lack fp64, as it does an Intel
    GPU's: its Python floats are float32, so a kernel that still uses float64
    (here float64 arrays) is refused, as on SPIR-V, rather than run beside
    float32 scalars (Black-Scholes on float64 arrays gave 3.6e3 relative error
    on an H100 so)."""
    no_fp64 = dataclasses.replace(SM90, fp64=False)
    with pytest.raises(UnsupportedError, match=r"^the kernel uses f64 .*but sm_90 has no fp64.*"
                                               r"\(while lowering to NVVM\)$"):
        lower(source("math_f64"), no_fp64)
    assert ".entry" in lower(source("math_f32"), no_fp64).ptx.decode()


def test_libdevice_is_linked():
    assert lower(source("math_f64"), SM90, until="gpu").text("gpu").count(libdevice_path()) == 1


FMA = '''
import xpuc


@xpuc.jit("float32[::1](float32[::1], float32[::1], float32[::1])")
def fma(a, b, c):
    return a * b + c
'''


def test_compile_for_an_nvidia_architecture(tmp_path, capsys):
    path = tmp_path / "fma.py"
    path.write_text(FMA)
    assert cli.main(["compile", str(path), "--arch", "sm_90"]) == 0
    assert capsys.readouterr().out == "fma: 1 signature, 1 kernel for sm_90 (fma_parfor0_kernel)\n"
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "spirv"]) == 0
    assert capsys.readouterr().out.endswith("parfor fma_parfor0 has no spirv stage\n")


def test_spirv_binaries_are_refused_for_an_nvidia_architecture(tmp_path, capsys):
    path = tmp_path / "fma.py"
    path.write_text(FMA)
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "spv", "-o",
                     str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == ("xpuc compile --arch sm_90: an NVIDIA GPU runs PTX, not "
                                       "SPIR-V: print it with --emit ptx\n")
    assert not (tmp_path / "out").exists()


def test_an_unknown_nvidia_architecture_is_refused(tmp_path, capsys):
    path = tmp_path / "fma.py"
    path.write_text(FMA)
    assert cli.main(["compile", str(path), "--arch", "sm_70"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("xpuc compile: unknown architecture 'sm_70' (known: ")
    assert all(arch in error for arch in ARCHITECTURES)


def test_libdevice_of_a_toolkit_named_by_cuda_home(tmp_path, monkeypatch):
    found = tmp_path / "nvvm" / "libdevice" / "libdevice.10.bc"
    found.parent.mkdir(parents=True)
    found.write_bytes(b"BC")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    libdevice.libdevice_path.cache_clear()
    try:
        assert libdevice.libdevice_path() == str(found)
    finally:
        libdevice.libdevice_path.cache_clear()


def test_no_libdevice_says_where_it_looked_and_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(libdevice.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(libdevice, "_DEFAULT_TOOLKIT", str(tmp_path / "cuda"))
    libdevice.libdevice_path.cache_clear()
    try:
        with pytest.raises(XpucError, match=rf"no libdevice \(nvvm/libdevice/libdevice\.\*\.bc\) "
                                            rf"under {tmp_path}/toolkit, {tmp_path}/cuda: "
                                            r"install xpuc\[cuda\] \(PyPI's nvidia-nvvm\)"):
            libdevice.libdevice_path()
    finally:
        libdevice.libdevice_path.cache_clear()


KERNELS_SOURCE = '''
import math

import numpy as np

import xpuc


@xpuc.kernel("void(float32[::1], float32)")
def scale(a, factor):
    i = xpuc.get_global_id(0)
    a[i] = math.exp(a[i]) * factor


@xpuc.kernel("void(float64[::1], float64[::1])")
def reverse_pairs(a, out):
    i = xpuc.get_global_id(0)
    pair = xpuc.private.array(2, np.float64)
    pair[0] = a[2 * i]
    pair[1] = a[2 * i + 1]
    out[2 * i] = pair[1]
    out[2 * i + 1] = pair[0]
'''


def test_explicit_kernels_become_ptx(tmp_path, capsys):
    """Ids, arrays, scalars, math and private arrays (which the frontend puts
    in SPIR-V's Function storage class: the default memory space on CUDA)."""
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS_SOURCE)
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "ptx"]) == 0
    ptx = capsys.readouterr().out
    assert ".visible .entry scale(" in ptx and ".visible .entry reverse_pairs(" in ptx


ATOMIC_PARFORS_SOURCE = '''
import numpy as np
from numba import prange

import xpuc


@xpuc.jit("void(int64[::1], float64[::1], int32[::1], float64[::1])")
def histogram(index, weights, counts, totals):
    for i in prange(index.shape[0]):
        counts[index[i]] += 1
        totals[index[i]] += weights[i]


@xpuc.jit("float32[::1](float32[:, ::1])")
def column_sums(a):
    acc = np.zeros(a.shape[1], np.float32)
    for i in prange(a.shape[0]):
        acc += a[i]
    return acc
'''


def test_parfors_atomic_updates_become_ptx(tmp_path, capsys):
    """Elements several iterations update (SPEC rule 12) and reductions into
    arrays: each one atom.add, the float ones too (SYCL's compare-exchange
    loops on the element's bits made the GPU's float adds,
    nvvm_rewrites.native_float_adds)."""
    path = tmp_path / "updates.py"
    path.write_text(ATOMIC_PARFORS_SOURCE)
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "ptx"]) == 0
    ptx = capsys.readouterr().out
    histogram, column_sums = ptx.split("// xpuc: function column_sums", 1)
    assert histogram.count("atom.global.add.u32") == 1
    assert histogram.count("atom.global.add.f64") == 1
    assert "atom.global.add.f32" in column_sums
    assert ".cas." not in ptx


LOOP_EDGES_SOURCE = '''
from numba import prange

import xpuc


@xpuc.jit("void(float64[:, ::1])")
def shift_rows_right(x):
    for i in prange(x.shape[0]):
        x[i, 1:] = x[i, :-1]


@xpuc.jit("void(float64[:, ::1], int64)")
def stepped_nest(m, step):
    for i in prange(m.shape[0] - 1, -1, -2):
        for j in prange(0, m.shape[1], step):
            m[i, j] = i + j
'''


def test_memmove_stores_and_stepped_pranges_become_ptx(tmp_path, capsys):
    """The loop direction chosen from two views' offsets, and a nested
    prange's trip count computed in the work-item, through the CUDA tail
    (ptxas validates the PTX, tests/conftest.py)."""
    path = tmp_path / "loop_edges.py"
    path.write_text(LOOP_EDGES_SOURCE)
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "ptx"]) == 0
    ptx = capsys.readouterr().out
    shift, nest = ptx.split("// xpuc: function stepped_nest", 1)
    assert shift.count(".entry") == 1 and nest.count(".entry") == 1
    assert "div.s64" in nest  # the trip count of the inner prange's variable step


FLOAT_ATOMICS_SOURCE = '''
import xpuc


@xpuc.kernel("void(float32[::1], float32[::1], float32[::1])")
def float_atomics(x, out, olds):
    i = xpuc.get_global_id(0)
    olds[i] = xpuc.atomic.add(out, 0, x[i])
    xpuc.atomic.max(out, 1, x[i])
'''


def test_only_float_adds_become_the_gpus_own(tmp_path, capsys):
    """A float add (whose old value the kernel reads) is one atom.add; a float
    max stays a compare-exchange loop, PTX having no float atom.max."""
    path = tmp_path / "float_atomics.py"
    path.write_text(FLOAT_ATOMICS_SOURCE)
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "ptx"]) == 0
    ptx = capsys.readouterr().out
    assert ptx.count("atom.global.add.f32") == 1
    assert ptx.count("atom.relaxed.gpu.global.cas.b32") == 1


def test_kernel_api_kernels_become_ptx():
    """A kernel in numba-dpex's kernel API, as call_kernel launches it over an
    NdRange with a local accessor: its group barrier, work-group memory and
    atomic in PTX (which conftest.py validates with ptxas)."""
    @xpuc.kernel
    def work_group_total(nd_item, a, total, partial):
        local = nd_item.get_local_id(0)
        partial[local] = a[nd_item.get_global_id(0)]
        kapi.group_barrier(nd_item.get_group())
        if local == 0:
            group_sum = 0.0
            for k in range(nd_item.get_local_range(0)):
                group_sum += partial[k]
            kapi.AtomicRef(total, index=0).fetch_add(group_sum)

    vector = types.Array(types.float64, 1, "C")
    launch = KernelApiLaunch(kapi.NdItem, ((3, (64,), np.float64),))
    ptx = work_group_total.compile((vector, vector), 1, "sm_90", launch).lowered.ptx.decode()
    assert "bar.sync" in ptx
    assert re.search(r"\.shared \.align \d+ \.b8 \w+\[512\]", ptx)
    assert re.search(r"atom\.global\.add\.f64|atom\.global\.cas\.b64", ptx)


FAST_MATH_SOURCE = '''
import xpuc


@xpuc.jit("float64[::1](float64[::1], float64[::1], float64[::1])"{options})
def multiply_add(a, b, c):
    return a * b + c
'''


@pytest.mark.parametrize(("options", "fused"), [
    ("", False), (", fastmath=True", True), (", fastmath={'contract'}", True),
    (", fastmath={'nnan', 'ninf'}", False)])
def test_fastmath_contracts_multiply_adds(tmp_path, capsys, options, fused):
    """Numba's fastmath reaches the kernels: with 'contract' (or all flags) a
    multiply feeding an add is one fma; without, each rounds as NumPy does."""
    path = tmp_path / "multiply_add.py"
    path.write_text(FAST_MATH_SOURCE.format(options=options))
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "ptx"]) == 0
    ptx = capsys.readouterr().out
    assert ("fma.rn.f64" in ptx) == fused
    assert ("mul.rn.f64" in ptx) == (not fused)


ROW_LOOPS_SOURCE = '''
import math

from numba import prange

import xpuc


@xpuc.jit("void({t}[:, ::1], {t}[:, ::1])")
def pairwise(points, out):
    for i in prange(points.shape[0]):
        for j in range(points.shape[0]):
            total = 0.0
            for k in range(points.shape[1]):
                d = points[i, k] - points[j, k]
                total += d * d
            out[i, j] = math.sqrt(total)


@xpuc.jit("void({t}[:, ::1], {t}[:, ::1])")
def running_sums(a, out):
    for i in prange(a.shape[0]):
        total = 0.0
        for k in range(a.shape[1]):
            total += a[i, k]
            out[i, k] = total
'''


@pytest.mark.parametrize(("dtype", "vector_load"), [("float32", "ld.global.v4.b32"),
                                                    ("float64", "ld.global.v2.b64")])
def test_row_loops_load_sixteen_bytes_at_a_time(tmp_path, capsys, dtype, vector_load):
    """A loop that only reads rows (pairwise distances' ``k`` loop) loads
    sixteen bytes of each row at once where the rows are aligned (and one
    element at a time for the rest); one that stores as it goes keeps its
    loads in order with its stores."""
    path = tmp_path / "rows.py"
    path.write_text(ROW_LOOPS_SOURCE.format(t=dtype))
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "ptx"]) == 0
    kernels = dict(re.findall(r"\.entry (\w+)_parfor0_kernel\((.*?)\n}", capsys.readouterr().out,
                              re.DOTALL))
    assert kernels["pairwise"].count(vector_load) == 2
    assert re.search(r"ld\.global\.b(32|64)", kernels["pairwise"])  # the rest of each row
    assert "ld.global.v" not in kernels["running_sums"]
