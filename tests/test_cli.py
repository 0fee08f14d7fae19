"""The ``xpuc`` command, run as a subprocess as a user would: ``xpuc devices``
and ``xpuc compile``, its outputs and its error paths."""

import subprocess
import sys
import textwrap

import pytest

from xpuc.passes import STAGES

FMA = """\
import xpuc


@xpuc.jit("float32[::1](float32[::1], float32[::1], float32[::1])")
def fma(a, b, c):
    return a * b + c
"""


def xpuc(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xpuc.cli", *args],
                          check=False, capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def module(tmp_path, source: str, name: str = "mod.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def line_of(path: str, text: str) -> int:
    with open(path) as source:
        return next(n for n, line in enumerate(source, 1) if text in line)


def assert_fails_cleanly(result: subprocess.CompletedProcess, message: str) -> None:
    """Exit status 1, ``message`` on stderr, and no traceback."""
    assert result.returncode == 1, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_devices_lists_opencl_cpu_and_marks_the_default():
    result = xpuc("devices")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any("opencl:cpu" in line for line in lines)
    assert len([line for line in lines if line.startswith("*")]) == 1
    assert lines[-1] == "(* = default device)"


def test_compile_without_emit_prints_a_summary_per_function(tmp_path):
    path = module(tmp_path, FMA + """

@xpuc.jit(["float64(float64)"])
def scalar(x):
    return x + 1.0
""")
    result = xpuc("compile", path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "fma: 1 signature, 1 kernel for opencl:cpu:0 (fma_parfor0_kernel)",
        "scalar: 1 signature, 0 kernels for opencl:cpu:0",
    ]
    assert "cache" not in result.stdout + result.stderr


@pytest.mark.parametrize("stage", [stage.name for stage in STAGES[:-1]])
def test_emit_prints_each_mlir_stage_after_a_header(tmp_path, stage):
    path = module(tmp_path, FMA)
    result = xpuc("compile", path, "--emit", stage, "--device", "opencl:cpu")
    assert result.returncode == 0, result.stderr
    header, first = result.stdout.splitlines()[:2]
    assert header == ("// xpuc: function fma signature (array(float32, 1d, C), "
                      "array(float32, 1d, C), array(float32, 1d, C)) parfor fma_parfor0")
    assert first.startswith("module")
    marker = {"linalg": "scf.parallel", "gpu": "gpu.launch_func", "spirv": "spirv.module"}
    assert marker[stage] in result.stdout


def test_emit_output_is_in_definition_order_and_deterministic(tmp_path):
    path = module(tmp_path, """\
import xpuc


@xpuc.jit("float64[::1](float64[::1])")
def zeta(a):
    return a + 1.0


@xpuc.jit(["float32[::1](float32[::1])", "float64[::1](float64[::1])"])
def alpha(a):
    return a * a
""")
    first = xpuc("compile", path, "--emit", "linalg")
    assert first.returncode == 0, first.stderr
    headers = [line for line in first.stdout.splitlines() if line.startswith("// xpuc:")]
    assert [h.split(" signature ")[0] for h in headers] == [
        "// xpuc: function zeta", "// xpuc: function alpha", "// xpuc: function alpha"]
    assert "float32" in headers[1] and "float64" in headers[2]
    assert xpuc("compile", path, "--emit", "linalg").stdout == first.stdout


def test_emit_spv_writes_a_binary_per_kernel(tmp_path):
    path = module(tmp_path, FMA)
    out = tmp_path / "out"
    result = xpuc("compile", path, "--emit", "spv", "-o", str(out))
    assert result.returncode == 0, result.stderr
    binary = out / "fma_parfor0_kernel.spv"
    assert result.stdout.splitlines() == [str(binary)]
    assert binary.read_bytes()[:4] == (0x07230203).to_bytes(4, "little")


def test_emit_spv_needs_an_output_directory(tmp_path):
    result = xpuc("compile", module(tmp_path, FMA), "--emit", "spv")
    assert result.returncode == 2
    assert "-o DIR" in result.stderr


def test_output_directory_goes_only_with_spv(tmp_path):
    result = xpuc("compile", module(tmp_path, FMA), "--emit", "gpu", "-o", str(tmp_path))
    assert result.returncode == 2
    assert "-o DIR" in result.stderr


def test_unknown_emit_stage_is_an_argparse_error(tmp_path):
    result = xpuc("compile", module(tmp_path, FMA), "--emit", "llvm")
    assert result.returncode == 2
    assert "invalid choice: 'llvm'" in result.stderr
    # the choices are the stages of xpuc.passes.STAGES
    assert ", ".join(f"'{stage.name}'" for stage in STAGES) in result.stderr


def test_syntax_error_is_reported_at_its_line(tmp_path):
    path = module(tmp_path, """\
import xpuc

def broken(a)
    return a
""")
    assert_fails_cleanly(xpuc("compile", path), f"{path}:3: SyntaxError: ")


def test_typing_error_is_reported_at_its_line(tmp_path):
    path = module(tmp_path, """\
import xpuc


@xpuc.jit("float64[::1](float64[::1])")
def bad(a):
    return a + "one"
""")
    result = xpuc("compile", path, "--emit", "linalg")
    assert_fails_cleanly(result, f"{path}:{line_of(path, 'return a')}: TypingError: ")


def test_unsupported_parfor_is_reported_at_its_line(tmp_path):
    path = module(tmp_path, """\
import numba
import numpy as np

import xpuc


@xpuc.jit("void(complex128[::1], complex128[::1])")
def sines(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = np.sin(a[i])
""")
    result = xpuc("compile", path)
    assert_fails_cleanly(
        result, f"{path}:{line_of(path, 'out[i] =')}: call to numpy.sin on complex numbers")


def test_exception_while_loading_is_reported_at_its_line(tmp_path):
    path = module(tmp_path, "import xpuc\n\nraise ValueError('not today')\n")
    assert_fails_cleanly(xpuc("compile", path), f"{path}:3: ValueError: not today")


def test_a_file_without_signatures_is_refused_with_a_clear_message(tmp_path):
    path = module(tmp_path, """\
import xpuc


@xpuc.jit
def lazy(a):
    return a + 1
""")
    result = xpuc("compile", path)
    assert_fails_cleanly(result, "no xpuc.jit function with explicit signatures to compile")
    assert f"{path}:4: note: lazy has no explicit signatures" in result.stderr


def test_parallel_false_is_refused(tmp_path):
    path = module(tmp_path, """\
import xpuc


@xpuc.jit("float64[::1](float64[::1])", parallel=False)
def serial(a):
    return a + 1
""")
    assert_fails_cleanly(xpuc("compile", path), "serial was given parallel=False")


def test_missing_file_and_unknown_device(tmp_path):
    assert_fails_cleanly(xpuc("compile", str(tmp_path / "nope.py")), "nope.py: no such file")
    assert_fails_cleanly(xpuc("compile", str(tmp_path)), f"{tmp_path}: not a file")
    result = xpuc("compile", module(tmp_path, FMA), "--device", "level_zero:gpu:7")
    assert_fails_cleanly(result, "no device level_zero:gpu:7")


def test_the_module_can_import_its_neighbours(tmp_path):
    module(tmp_path, 'SIGNATURE = "float64[::1](float64[::1])"\n', name="helper.py")
    path = module(tmp_path, """\
import xpuc
from helper import SIGNATURE


@xpuc.jit(SIGNATURE)
def inc(a):
    return a + 1.0


if __name__ == "__main__":
    raise SystemExit("the file is not run as __main__")
""")
    result = xpuc("compile", path, cwd="/")  # nowhere near the module
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("inc: 1 signature, 1 kernel")


def test_an_output_directory_that_is_a_file_is_refused(tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("")
    result = xpuc("compile", module(tmp_path, FMA), "--emit", "spv", "-o", str(taken))
    assert_fails_cleanly(result, f"cannot write to {taken}")
