"""Intel GPUs: the fp64 rule (docs/spec.md rule 11), run on the CPU device
under XPUC_FP64=0 against NumPy's float32, and ``xpuc compile --arch`` with
Intel's GPU compiler, ocloc (the tests that build skip without it, saying how
to get it)."""

import math
import shutil
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from intel_gpu_builds import declares_float64

import xpuc
from xpuc import cli, intel_gpus, ocloc

DEVICE = "opencl:cpu"

OCLOC = ocloc.find_ocloc()
needs_ocloc = pytest.mark.skipif(OCLOC is None, reason=f"ocloc not found: {ocloc.HOW_TO_GET}")


@pytest.fixture
def no_fp64(monkeypatch):
    """Every device counts as lacking fp64, as an Arc or integrated GPU does."""
    monkeypatch.setenv("XPUC_FP64", "0")


def launched(function, *args):
    """``function(*args)`` on the CPU device, with the kernels it launched."""
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        result = function(*args)
    return result, xpuc.stats()["kernel_launches"]


# --- float32 functions written with Python floats ---------------------------


def jacobi(a):
    out = np.zeros_like(a)
    for i in numba.prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
    return out


def axpy(a, x):
    return a * 2.5 + x * math.pi


def sum_of_squares(a):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        s += a[i] * a[i]
    return s


def scale(a, b, alpha):
    i = xpuc.get_global_id(0)
    b[i] = alpha * a[i] + 1.5


def test_a_stencil_with_a_float_literal_stays_float32(no_fp64):
    a = np.random.default_rng(0).random((40, 30), dtype=np.float32)
    out, launches = launched(xpuc.jit(jacobi), a)
    assert out.dtype == np.float32 and launches == 1
    expected = np.zeros_like(a)
    expected[1:-1, 1:-1] = np.float32(0.25) * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2]
                                               + a[1:-1, 2:])
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def jacobi_steps(grid, steps):
    # ``grid`` and ``other`` are assigned twice (the swap), and ``grid.shape``
    # read through them: the float32 rewrite runs before Numba's SSA
    other = grid * 1.0
    for _ in range(steps):
        for r in numba.prange(grid.shape[0] - 2):
            for j in range(1, grid.shape[1] - 1):
                other[r + 1, j] = 0.25 * (grid[r, j] + grid[r + 2, j]
                                          + grid[r + 1, j - 1] + grid[r + 1, j + 1])
        grid, other = other, grid
    return grid


def test_a_function_that_swaps_its_arrays_in_a_loop(no_fp64):
    a = np.random.default_rng(1).random((20, 16), dtype=np.float32)
    out, launches = launched(xpuc.jit(jacobi_steps), a.copy(), 3)
    assert out.dtype == np.float32 and launches == 1 + 3  # grid * 1.0, then a step each
    np.testing.assert_allclose(out, _jacobi_steps_in_numpy(a, 3), rtol=1e-5)


def _jacobi_steps_in_numpy(grid, steps):
    grid, other = grid.copy(), grid.copy()
    for _ in range(steps):
        other[1:-1, 1:-1] = np.float32(0.25) * (grid[:-2, 1:-1] + grid[2:, 1:-1]
                                                + grid[1:-1, :-2] + grid[1:-1, 2:])
        grid, other = other, grid
    return grid


def test_float_globals_and_float_arguments_are_float32(no_fp64):
    a = np.linspace(-3, 3, 1000, dtype=np.float32)
    function = xpuc.jit(axpy)
    out, launches = launched(function, a, 0.1)
    assert out.dtype == np.float32 and launches == 1
    # NumPy 2 keeps float32 data float32 beside Python floats (NEP 50)
    np.testing.assert_allclose(out, a * 2.5 + np.float32(0.1) * np.float32(math.pi), rtol=1e-6)
    assert "f64" not in function.inspect_mlir("spirv")
    # a second call with a Python float takes the same float32 build
    again, _ = launched(function, a, 0.2)
    assert len(function._devices) == 1
    assert [tuple(sig) for sig in next(iter(function._devices.values()))[0].signatures] == [
        (numba.typeof(a), numba.float32)]
    np.testing.assert_allclose(again, a * 2.5 + np.float32(0.2) * np.float32(math.pi),
                               rtol=1e-6)


def test_a_sum_seeded_with_zero_accumulates_in_float32(no_fp64):
    # 2**24 + 4095 ones: exact in float64, odd, so no float32 holds it
    a = np.ones(4096, dtype=np.float32)
    a[0] = 4096
    exact = 2.0**24 + 4095
    function = xpuc.jit(sum_of_squares)
    total, launches = launched(function, a)
    assert launches >= 1
    assert total != exact and float(np.float32(total)) == total
    assert abs(total - exact) <= 2 ** 24 * np.finfo(np.float32).eps * 4
    assert "f64" not in function.inspect_mlir("spirv")


def test_an_explicit_kernel_with_a_float_argument(no_fp64):
    a = np.arange(64, dtype=np.float32)
    b = np.empty_like(a)
    kernel = xpuc.kernel(scale)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        kernel[a.size](a, b, 0.3)
    assert xpuc.stats()["kernel_launches"] == 1
    np.testing.assert_allclose(b, np.float32(0.3) * a + np.float32(1.5), rtol=1e-6)
    assert "f64" not in kernel.inspect_mlir("spirv")


def halves_and_signs(a, out):
    for i in numba.prange(1, a.shape[0] - 1):
        out[i] = (a[i - 1] + a[i + 1]) / 2 if a[i] > 0 else a[i] * 2 - 1


def thirds(a):
    return (a * 2 + 1) / 3


def test_int_literals_beside_float32_stay_float32(no_fp64):
    a = np.linspace(-1, 1, 101, dtype=np.float32)
    out = np.zeros_like(a)
    function = xpuc.jit(halves_and_signs)
    _, launches = launched(function, a, out)
    assert launches == 1 and "f64" not in function.inspect_mlir("spirv")
    expected = np.zeros_like(a)
    expected[1:-1] = np.where(a[1:-1] > 0, (a[:-2] + a[2:]) / 2, a[1:-1] * 2 - 1)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    result, _ = launched(xpuc.jit(thirds), a)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, (a * 2 + 1) / 3, rtol=1e-6)


def int_variables(a, out, x0, dx):
    n = a.shape[0]
    for i in numba.prange(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = a[i] * n + (x0 + j * dx)


def test_int_variables_beside_float32_are_float32(no_fp64):
    # n (a shape) and j (a range's index) are Python ints, weak beside
    # float32 in NumPy 2; Numba would compute the products in float64
    a = np.linspace(-1, 1, 12, dtype=np.float32)
    out = np.zeros((12, 7), dtype=np.float32)
    function = xpuc.jit(int_variables)
    _, launches = launched(function, a, out, -0.5, 0.25)
    assert launches == 1 and "f64" not in function.inspect_mlir("spirv")
    expected = (a[:, None] * np.float32(12)
                + (np.float32(-0.5) + np.arange(7, dtype=np.float32) * np.float32(0.25)))
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def quarters(out):
    for i in numba.prange(out.shape[0]):
        out[i] = min(float(i) / 4, np.inf)


def test_float_calls_and_numpy_float_constants_are_float32(no_fp64):
    out = np.zeros(10, dtype=np.float32)
    function = xpuc.jit(quarters)
    _, launches = launched(function, out)
    assert launches == 1 and "f64" not in function.inspect_mlir("spirv")
    np.testing.assert_array_equal(out, np.arange(10, dtype=np.float32) / 4)


def nearest_centers(points, centers, labels):
    """kmeans' (dpbench's numba-mlir program): ``minor = -1``, then float32."""
    for i in numba.prange(points.shape[0]):
        minor = -1
        for c in range(centers.shape[0]):
            distance = np.sqrt((points[i, 0] - centers[c, 0]) * (points[i, 0] - centers[c, 0]))
            if minor > distance or minor == -1:
                minor = distance
                labels[i] = c


def test_an_int_a_variable_holds_beside_float32_is_float32(no_fp64):
    points = np.random.default_rng(6).random((300, 2), dtype=np.float32)
    centers = np.random.default_rng(7).random((9, 2), dtype=np.float32)
    labels = np.zeros(300, np.int64)
    function = xpuc.jit(nearest_centers)
    launched(function, points, centers, labels)
    np.testing.assert_array_equal(
        labels, np.abs(points[:, None, 0] - centers[None, :, 0]).argmin(1))
    assert "f64" not in function.inspect_mlir("spirv")


def histograms(a, bins):
    """azimint_hist's histogram (dpbench), and one of a given range."""
    return np.histogram(a, bins), np.histogram(a, bins, range=(0.25, 0.75))


def test_a_histogram_of_float32_is_computed_in_float32(no_fp64):
    # NumPy 2 finds a float32 element's bin in float32, against float32 edges
    # (xpuc's histogram of a USM array; Numba's of a NumPy array runs on the host)
    import dpnp

    a = np.random.default_rng(4).random(5000, dtype=np.float32)
    a[:7] = a.max()  # in the last bin, which is closed
    function = xpuc.jit(histograms)
    with xpuc.device_context(DEVICE):
        found = function(dpnp.asarray(a), 37)
    (counts, edges), (counts_in, edges_in) = [[dpnp.asnumpy(v) for v in pair] for pair in found]
    expected, expected_edges = np.histogram(a, 37)
    assert edges.dtype == np.float32 and counts.dtype == np.int64
    np.testing.assert_array_equal(counts, expected)
    np.testing.assert_array_equal(edges, expected_edges)
    expected_in, expected_edges_in = np.histogram(
        a, 37, range=(np.float32(0.25), np.float32(0.75)))
    np.testing.assert_array_equal(counts_in, expected_in)
    np.testing.assert_array_equal(edges_in, expected_edges_in)


def test_devices_with_fp64_keep_numbas_typing():
    a = np.arange(8, dtype=np.float32)
    out, _ = launched(xpuc.jit(axpy), a, 0.1)
    assert out.dtype == np.float64  # Numba's: a Python float is float64
    np.testing.assert_allclose(out, a.astype(np.float64) * 2.5 + 0.1 * math.pi)


# --- what still needs float64 is refused, naming fp64, device, file, line -----


def float64_array(a):
    return a * 2.0


def float64_value(a):
    for i in numba.prange(a.shape[0]):
        a[i] = np.float64(a[i]) / 3


def integer_division(a):
    for i in numba.prange(a.shape[0]):
        a[i] = i / a.shape[0]


def float64_scratch(a):
    for i in numba.prange(a.shape[0]):
        pair = np.zeros(2)
        pair[0] = a[i]
        a[i] = pair[0] * 2


@pytest.mark.parametrize("function, dtype, text, construct", [
    (float64_array, np.float64, "return a * 2.0",
     "uses f64 (an f64 argument, an array or number from outside the loop at"),
    (float64_value, np.float32, "np.float64(a[i]) / 3",
     "uses f64 (a value widened to f64 at"),
    (integer_division, np.float32, "i / a.shape[0]",
     "uses f64 (an integer converted to f64 at"),
    (float64_scratch, np.float32, "pair = np.zeros(2)",
     "uses f64 (an f64 array made in the loop at"),
])
def test_float64_is_refused_before_any_build(no_fp64, function, dtype, text, construct):
    xpuc.reset_stats()
    with pytest.raises(xpuc.UnsupportedError) as refused:
        launched(xpuc.jit(function), np.ones(8, dtype=dtype))
    message = str(refused.value)
    source = open(__file__).read().splitlines()
    line = next(n for n, code in enumerate(source, 1) if text in code)
    assert f"{__file__}:{line}" in message
    assert construct in message and "has no fp64" in message
    import dpctl

    assert dpctl.SyclDevice(DEVICE).name in message
    assert "numba" not in message.lower().replace("numba.prange", "")
    assert xpuc.stats()["kernel_builds"] == 0


def test_float64_in_a_kernel_is_refused(no_fp64):
    def halves(a, n):
        i = xpuc.get_global_id(0)
        a[i] = i / n

    line = halves.__code__.co_firstlineno
    with xpuc.device_context(DEVICE), pytest.raises(
            xpuc.UnsupportedError, match=rf"^{__file__}:{line}: test_float64_in_a_kernel_is_refused"
                                         r"\.<locals>\.halves: the kernel uses f64 .*has no fp64"):
        xpuc.kernel(halves)[4](np.zeros(4, dtype=np.float32), 4)


# --- xpuc compile --arch -------------------------------------------------------

FLOAT32_MODULE = '''\
import math

import numba

import xpuc


@xpuc.jit("(float32[:, ::1],)")
def jacobi(a):
    out = np.zeros_like(a)
    for i in numba.prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
    return out


@xpuc.jit("(float32[::1], float32)")
def axpy(a, x):
    return a * 2.5 + x * math.pi


@xpuc.jit("(float32[::1],)")
def sum_of_squares(a):
    s = 0.0
    for i in numba.prange(a.shape[0]):
        s += a[i] * a[i]
    return s


@xpuc.kernel("void(float32[::1], float32[::1], float32)")
def scale(a, b, alpha):
    i = xpuc.get_global_id(0)
    b[i] = alpha * a[i] + 1.5
'''

FLOAT64_MODULE = '''\
import xpuc


@xpuc.jit("(float64[::1],)")
def twice(a):
    return a * 2.0
'''


def compile_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xpuc.cli", "compile", *args],
                          capture_output=True, text=True, timeout=300, check=False)


def write(tmp_path, source: str, name: str) -> str:
    path = tmp_path / name
    path.write_text("import numpy as np\n" + textwrap.dedent(source))
    return str(path)


KERNELS = ["jacobi_parfor0_kernel", "axpy_parfor0_kernel", "sum_of_squares_parfor0_kernel",
           "scale"]


@pytest.mark.skipif(shutil.which("spirv-dis") is None, reason="needs spirv-dis")
def test_float32_code_for_dg2_has_no_float64_capability(tmp_path):
    module = write(tmp_path, FLOAT32_MODULE, "stencils.py")
    result = compile_command(module, "--arch", "dg2", "--emit", "spv", "-o", str(tmp_path / "spv"))
    assert result.returncode == 0, result.stderr
    paths = result.stdout.split()
    assert [p.rsplit("/", 1)[1] for p in paths] == [f"{k}.spv" for k in KERNELS]
    for path in paths:
        text = subprocess.run(["spirv-dis", path], capture_output=True, text=True,
                              check=True).stdout
        assert "OpCapability Float64" not in text and "OpTypeFloat 64" not in text, path
        # what the tests' ocloc builds read to pick the modules dg2 builds
        with open(path, "rb") as file:
            assert not declares_float64(file.read())
    doubles = write(tmp_path, FLOAT64_MODULE, "doubles.py")
    result = compile_command(doubles, "--arch", "pvc", "--emit", "spv", "-o", str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    assert declares_float64((tmp_path / "d" / "twice_parfor0_kernel.spv").read_bytes())


@needs_ocloc
@pytest.mark.parametrize("arch", ["dg2", "tgllp"])
def test_float32_code_builds_for_gpus_without_fp64(tmp_path, arch):
    result = compile_command(write(tmp_path, FLOAT32_MODULE, "stencils.py"), "--arch", arch)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        f"{name} ({kernel}): built for {arch}"
        for name, kernel in zip(["jacobi", "axpy", "sum_of_squares", "scale"], KERNELS)]


@needs_ocloc
def test_float64_code_builds_for_pvc_and_is_refused_for_dg2(tmp_path):
    module = write(tmp_path, FLOAT64_MODULE, "doubles.py")
    built = compile_command(module, "--arch", "pvc")
    assert built.returncode == 0, built.stderr
    assert built.stdout == "twice (twice_parfor0_kernel): built for pvc\n"
    refused = compile_command(module, "--arch", "dg2")
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert f"{module}:7: the kernel uses f64" in refused.stderr
    assert "but dg2 has no fp64" in refused.stderr and "stage" not in refused.stderr
    assert "Traceback" not in refused.stderr


@needs_ocloc
def test_ocloc_reports_what_the_gpu_compiler_says(tmp_path):
    """A module using double, built for dg2 all the same: the compiler's own
    message, each line once (it repeats them for each dg2 device)."""
    module = write(tmp_path, FLOAT64_MODULE, "doubles.py")
    result = compile_command(module, "--arch", "pvc", "--emit", "spv", "-o", str(tmp_path))
    spirv = (tmp_path / "twice_parfor0_kernel.spv").read_bytes()
    assert result.returncode == 0, result.stderr
    failed, built = ocloc.build_many(OCLOC, [(spirv, "dg2"), (spirv, "pvc")])
    assert not failed.succeeded and built.succeeded
    assert failed.errors.count("error: Double type is not supported on this platform.") == 1


def test_an_unknown_arch_is_an_error(tmp_path):
    result = compile_command(write(tmp_path, FLOAT32_MODULE, "stencils.py"), "--arch", "mtl")
    assert result.returncode == 1
    assert result.stderr.startswith("xpuc compile: unknown architecture 'mtl' (known: ")
    assert all(arch in result.stderr for arch in intel_gpus.ARCHITECTURES)
    assert "Traceback" not in result.stderr


def test_without_ocloc_compile_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(ocloc.OCLOC_VARIABLE, raising=False)
    monkeypatch.setattr(ocloc, "_PRIVATE_FOLDER", tmp_path / "none")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cli.main(["compile", write(tmp_path, FLOAT32_MODULE, "stencils.py"),
                     "--arch", "dg2"]) == 1
    error = capsys.readouterr().err
    assert "ocloc, Intel's GPU compiler, which is not found" in error
    assert "scripts/get-ocloc.sh" in error


@pytest.mark.parametrize("arch, fp64", [("pvc", True), ("dg2", False), ("acm-g10", False),
                                        ("tgllp", False), ("adlp", False), ("adls", False)])
def test_arch_targets(arch, fp64):
    target = xpuc.targets.target_for(arch)
    assert (target.name, target.fp64) == (arch, fp64)
    assert ("Float64" in target.spirv_caps) == fp64


def _multiply_add(a, b, c):
    return a * b + c


def _divide(a, b):
    return a / b


def _built_float_instructions(spirv: bytes, arch: str, float_type: str, dump, monkeypatch):
    """The opcodes of the instructions on ``float_type`` (``df``: float64,
    ``f``: float32) of ``spirv`` as xpuc builds it for ``arch``, read in the
    assembly the GPU compiler dumps into ``dump``."""
    monkeypatch.setenv("IGC_ShaderDumpEnable", "1")
    monkeypatch.setenv("IGC_DumpToCustomDir", str(dump))
    (build,) = ocloc.build_many(OCLOC, [(spirv, arch)])
    assert build.succeeded, build.log
    lines = [line.split() for path in dump.glob("*simd*.asm")
             for line in path.read_text().splitlines() if f":{float_type} " in line]
    return [words[1] if words[0].startswith("(") else words[0] for words in lines]  # (predicate)


@needs_ocloc
@pytest.mark.parametrize(("fastmath", "fused"), [(False, False), ({"contract"}, True)])
def test_intel_gpus_fuse_multiply_adds_only_under_fastmath(tmp_path, monkeypatch, fastmath,
                                                          fused):
    """Intel's GPU compiler fuses ``a * b + c`` into one ``mad`` (one rounding)
    unless the kernel forbids contraction, as xpuc's kernels do without
    fastmath."""
    function = xpuc.jit(fastmath=fastmath)(_multiply_add)
    a, b, c = np.full(64, 1 + 2.0**-30), np.full(64, 1 - 2.0**-30), np.full(64, -1.0)
    with xpuc.device_context(DEVICE):
        np.testing.assert_array_equal(function(a, b, c), a * b + c)  # 0: rounded twice
    (spirv,) = function.inspect_spirv().values()
    doubles = _built_float_instructions(spirv, "pvc", "df", tmp_path, monkeypatch)
    assert ("mad" in doubles) == fused and ("mul" in doubles) == (not fused), doubles


@needs_ocloc
def test_intel_gpus_divide_float32_correctly_rounded(tmp_path, monkeypatch, no_fp64):
    """OpenCL lets a GPU divide float32 within 2.5 ulp, and Intel's compiler
    does with a reciprocal and a multiply; xpuc's builds ask for division
    rounded as NumPy's is, which it computes with Newton steps (``mad``)."""
    function = xpuc.jit(_divide)
    a, b = np.float32([1, 3, 7]), np.float32([3, 7, 1])
    with xpuc.device_context(DEVICE):
        np.testing.assert_array_equal(function(a, b), a / b)
    (spirv,) = function.inspect_spirv().values()
    floats = _built_float_instructions(spirv, "dg2", "f", tmp_path, monkeypatch)
    assert "math.inv" in floats and "mad" in floats, floats
