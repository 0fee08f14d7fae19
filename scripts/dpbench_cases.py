"""Runs Intel dpbench's ``prange`` programs through xpuc as their authors wrote them
(issue 33's acceptance check).

For each ``*_numba_dpex_p.py`` and ``*_numba_mlir_p.py`` program of dpbench, the only
change is the import of the decorator: ``numba_dpex``'s ``dpjit`` becomes ``xpuc.jit``
(its ``kernel``, ``call_kernel`` and ``kernel_api`` xpuc's too), numba-mlir's ``njit``
(and its ``kernel`` module) xpuc's. ``--kernels`` adds the ``*_numba_dpex_k.py``
programs (explicit kernels in numba-dpex's kernel API), which are not issue 33's cases.
Each program runs twice, with dpnp arrays (a numba-mlir program with dpctl.tensor's
usm_ndarrays, now dpnp.tensor's, as dpbench runs it) and with NumPy arrays inside
``xpuc.device_context(DEVICE)``, on inputs from the benchmark's own init function, and is
compared with dpbench's reference (the ``_numpy`` version, else the ``_python`` one) as
dpbench validates: ``np.allclose`` or a relative error (L2 norm) under the config's
``norm_error`` (default 1e-5). Every case runs in a subprocess with a timeout. Where, with
NumPy arrays, the program's own host code fails inside dpnp (``dpnp.zeros_like`` of a NumPy
array: dpnp's refusal, not xpuc's), the case runs again with dpnp imported as NumPy, and its
detail says so.

    .venv/bin/python scripts/dpbench_cases.py [--dpbench PATH] [--jobs 2] [--json OUT]
        [-k PATTERN] [--kernels] [--float32] [--ocloc ARCH,...]

``--float32`` runs the programs as on a GPU without fp64 (Arc, Iris Xe): under
``XPUC_FP64=0``, on inputs made as dpbench's ``--precision single`` makes them (float64
arrays as float32, integer arrays as int32; complex arrays and NumPy scalars too, which
dpbench leaves; polybench's inits given ``datatype=np.float32``), compared at a float32
tolerance (``FLOAT32_NORM_ERROR``). ``--ocloc dg2,tgllp`` builds, after each case that
passes, every SPIR-V module it compiled (``XPUC_DUMP_DIR``) with Intel's GPU compiler for
those architectures (``xpuc.ocloc``; modules compiled for ``opencl:cpu``, which are those a
GPU's driver would be given but for the CPU's vector width and loop placement).

``PATH`` is a git directory (a mirror: files are read at HEAD) or a plain checkout.
dbscan's init and reference import scikit-learn: without it (on ``PYTHONPATH``, say),
its cases are "not run".
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import traceback
from pathlib import Path
from typing import Any

DEFAULT_DPBENCH = "/work/.mirror/IntelPython+dpbench/repo"
DEVICE = "opencl:cpu"
PRESET = "S"
PROGRAM_SUFFIXES = ("_numba_dpex_p", "_numba_mlir_p")
KERNEL_SUFFIX = "_numba_dpex_k"  # with --kernels
MODES = ("dpnp", "numpy in context")

# Preset S, made smaller where its pure-Python reference alone takes most of a minute
SMALLER_THAN_PRESET = {"knn": {"test_size": 256, "train_size": 256}}

# Import lines rewritten, each to one line, so that the program's line numbers stay its
# own. What a line's module does not map is left as written.
IMPORT_REWRITES = (
    (re.compile(r"^from numba_dpex import dpjit$"), "from xpuc import jit as dpjit"),
    (re.compile(r"^from numba_dpex import kernel_api as (\w+)$"),
     r"from xpuc import kernel_api as \1"),
    (re.compile(r"^import numba_dpex as (\w+)$"), r"import xpuc_as_numba_dpex as \1"),
    (re.compile(r"^import numba_dpex$"), "import xpuc_as_numba_dpex as numba_dpex"),
    (re.compile(r"^import numba_mlir\.kernel as (\w+)$"),
     r"import xpuc_as_numba_mlir_kernel as \1"),
    (re.compile(r"^import numba_mlir as (\w+)$"), r"import xpuc_as_numba_mlir as \1"),
    # version skew, not xpuc: dpctl 0.22 moved dpctl.tensor to dpnp.tensor
    (re.compile(r"^from dpctl import tensor as (\w+)$"), r"from dpnp import tensor as \1"),
)

# In "numpy in context" mode, where the program's own host code (outside its jit functions)
# fails inside dpnp on a NumPy array (``dpnp.zeros_like(numpy_array)``: dpnp's refusal, not
# xpuc's), the case runs again with dpnp imported as NumPy, as issue 33's author ran that mode,
# and says so. Applied after IMPORT_REWRITES.
DPNP_AS_NUMPY = (
    (re.compile(r"^import dpnp as (\w+)$"), r"import dpnp_as_numpy as \1"),
    (re.compile(r"^import dpnp$"), "import dpnp_as_numpy as dpnp"),
    (re.compile(r"^from dpnp import tensor as (\w+)$"), r"import dpnp_as_numpy as \1"),
)
AS_NUMPY_NOTE = "dpnp imported as NumPy"

# The modules those lines import instead
SHIM_MODULES = {
    "xpuc_as_numba_dpex.py": '''\
"""numba_dpex's dpjit, kernels and kernel API as xpuc's; nothing else of numba_dpex."""
from xpuc import call_kernel, kernel, kernel_api  # noqa: F401
from xpuc import get_global_id, get_group_id, get_local_id, get_local_size  # noqa: F401
from xpuc import jit as dpjit  # noqa: F401
from xpuc.kernel_api import NdRange, Range  # noqa: F401
''',
    "dpnp_as_numpy.py": '''\
"""NumPy as a program's dpnp (or dpnp.tensor), with dpnp's asnumpy as NumPy's asarray."""
import numpy

asnumpy = numpy.asarray


def __getattr__(name):
    return getattr(numpy, name)
''',
    "xpuc_as_numba_mlir.py": '''\
"""numba-mlir's njit as xpuc.jit, less numba-mlir's own GPU option."""
import xpuc


def njit(*args, gpu_fp64_truncate=None, **options):
    return xpuc.jit(*args, **options)
''',
    "xpuc_as_numba_mlir_kernel.py": '''\
"""numba_mlir.kernel's names as xpuc's, less numba-mlir's own GPU option; its launch
``k[global_size, local_size]``, where a local size of ``()`` leaves it to the runtime, as
xpuc's ``k[global_size]`` or ``k[xpuc.NdRange(global_size, local_size)]``."""
import xpuc
from xpuc import atomic, get_global_id, get_global_size, get_local_id  # noqa: F401


class _Launches:
    def __init__(self, compiled):
        self.compiled = compiled

    def __getitem__(self, sizes):
        global_size, local_size = sizes
        return self.compiled[xpuc.NdRange(global_size, local_size) if local_size
                             else global_size]


def kernel(*args, gpu_fp64_truncate=None, **options):
    if args and callable(args[0]):
        return _Launches(xpuc.kernel(*args, **options))
    return lambda function: _Launches(xpuc.kernel(function, **options))
''',
}

PRECISION_DTYPES = {"int": {"single": "i4", "double": "i8"},
                    "float": {"single": "f4", "double": "f8"},
                    "complex": {"single": "c8", "double": "c16"}}
# --float32: dpbench's norm_error (1e-5 by default) is for float64 results; a float32
# result of sums over a few thousand terms is good to about 1e-5 relative, worse ones a
# few times that
FLOAT32_NORM_ERROR = 1e-4


# ---------------------------------------------------------------- extraction


def extract(dpbench: Path, dest: Path) -> None:
    """Copies dpbench's configs and the benchmark folders that hold a prange program."""
    mirror = not (dpbench / "dpbench").is_dir()
    if mirror:
        listing = subprocess.run(["git", "-C", str(dpbench), "ls-tree", "-r", "--name-only",
                                  "HEAD"], check=True, capture_output=True, text=True).stdout
        paths = listing.split()
    else:
        paths = [str(p.relative_to(dpbench)) for p in dpbench.rglob("*") if p.is_file()]
    program_dirs = {str(Path(p).parent) for p in paths
                    if Path(p).stem.endswith((*PROGRAM_SUFFIXES, KERNEL_SUFFIX))}
    wanted = [p for p in paths
              if (p.startswith("dpbench/configs/") and p.endswith(".toml"))
              or (str(Path(p).parent) in program_dirs and p.endswith(".py"))]
    for path in wanted:
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mirror:
            target.write_bytes(subprocess.run(["git", "-C", str(dpbench), "show", f"HEAD:{path}"],
                                              check=True, capture_output=True).stdout)
        else:
            shutil.copyfile(dpbench / path, target)


def dpbench_commit(dpbench: Path) -> str:
    result = subprocess.run(["git", "-C", str(dpbench), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True)
    return result.stdout.strip() or "unknown"


def find_programs(tree: Path, suffixes: tuple[str, ...]) -> list[dict[str, str]]:
    """Each program of one of ``suffixes`` with its benchmark's config, ordered by program."""
    benchmarks = tree / "dpbench" / "benchmarks"
    programs = []
    for config in sorted((tree / "dpbench" / "configs" / "bench_info").rglob("*.toml")):
        relative_path = tomllib.loads(config.read_text())["benchmark"]["relative_path"]
        for folder in benchmarks.rglob(relative_path):
            if folder.is_dir() and folder.as_posix().endswith("/" + relative_path):
                programs += [{"program": str(program), "config": str(config)}
                             for suffix in suffixes
                             for program in folder.glob(f"*{suffix}.py")]
    return sorted(programs, key=lambda p: Path(p["program"]).name)


def sibling(program: Path, *suffixes: str) -> Path:
    """The first of the program's sibling modules named by its prefix (``conv2d`` of
    ``conv2d_numba_dpex_p.py``) and one of ``suffixes``, as dpbench finds them."""
    prefix = program.stem.removesuffix(next(s for s in (*PROGRAM_SUFFIXES, KERNEL_SUFFIX)
                                            if program.stem.endswith(s)))
    return next(p for s in suffixes if (p := program.parent / f"{prefix}{s}.py").is_file())


# ---------------------------------------------------------------- one case (subprocess)


def load_module(path: Path, name: str | None = None) -> Any:
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def rewrite_imports(source: str, rewrites: tuple[tuple[re.Pattern, str], ...] = IMPORT_REWRITES
                    ) -> str:
    lines = source.splitlines(keepends=True)
    for index, line in enumerate(lines):
        for pattern, replacement in rewrites:
            stripped = line.rstrip("\n")
            if pattern.match(stripped):
                lines[index] = pattern.sub(replacement, stripped) + "\n"
                break
    return "".join(lines)


def parameters(info: dict[str, Any]) -> dict[str, Any]:
    return {**info["parameters"][PRESET], **SMALLER_THAN_PRESET.get(info["module_name"], {})}


def initial_data(info: dict[str, Any], program: Path, precision: str | None) -> dict[str, Any]:
    """The inputs as dpbench makes them (``Benchmark.initialize_input_data``), at
    ``precision`` ("single", "double") where given, as dpbench's ``--precision``."""
    import numpy as np

    data = parameters(info)
    init = info.get("init")
    if not init:
        return data
    precision = precision or init.get("precision", "")
    if init.get("types_dict_name"):
        data[init["types_dict_name"]] = {kind: np.dtype(PRECISION_DTYPES[kind][precision])
                                         for kind in ("int", "float")}
    init_file = sibling(program, "_initialize", "")
    initialize = getattr(load_module(init_file, "dpbench_init"), init["func_name"])
    arguments = {arg: data[arg] for arg in init["input_args"]}
    # polybench's inits take the float type (``initialize(M, N, datatype=np.float64)``)
    datatype = inspect.signature(initialize).parameters.get("datatype")
    if precision and datatype is not None and datatype.default is np.float64:
        arguments["datatype"] = np.dtype(PRECISION_DTYPES["float"][precision]).type
    made = initialize(**arguments)
    made = made if isinstance(made, tuple) else (made,)
    data.update(zip(init["output_args"], made))
    if precision and not init.get("types_dict_name"):
        for arg in init["output_args"]:
            value = data[arg]
            if isinstance(value, np.ndarray | np.generic):
                kind = ("float" if np.issubdtype(value.dtype, np.floating)
                        else "int" if np.issubdtype(value.dtype, np.integer)
                        else "complex" if np.issubdtype(value.dtype, np.complexfloating)
                        else None)
                if kind:
                    data[arg] = value.astype(PRECISION_DTYPES[kind][precision])
    return data


def outputs(info: dict[str, Any], inputs: dict[str, Any], returned: Any) -> dict[str, Any]:
    """Output arguments and the returned value, as NumPy (dpbench's ``_exec_copy_output``)."""
    import dpnp
    import numpy as np

    def to_numpy(value: Any) -> Any:
        if isinstance(value, dpnp.ndarray):
            return dpnp.asnumpy(value)
        if isinstance(value, dpnp.tensor.usm_ndarray):
            return dpnp.tensor.asnumpy(value)
        return np.asarray(value)

    found = {arg: to_numpy(inputs[arg]) for arg in info.get("output_args", [])
             if arg in info["array_args"]}
    if returned is not None:
        found["return-value"] = (tuple(to_numpy(v) for v in returned)
                                 if isinstance(returned, tuple) else to_numpy(returned))
    return found


def mismatch(expected: dict[str, Any], actual: dict[str, Any], rel_error: float) -> str | None:
    """What differs, judged as dpbench's ``validate`` does; None when all agree."""
    import numpy as np

    for key, reference in expected.items():
        if key not in actual:
            return f"{key} missing"
        pairs = (zip(reference, actual[key]) if isinstance(reference, tuple)
                 else [(reference, actual[key])])
        for ref, got in pairs:
            ref, got = np.asarray(ref), np.asarray(got)
            if ref.shape != got.shape:
                return f"{key}: shape {got.shape}, expected {ref.shape}"
            if np.allclose(ref, got):
                continue
            norm = np.linalg.norm(ref) or np.linalg.norm(got)
            error = np.linalg.norm(ref - got) / norm if norm else 0.0
            if not error < rel_error:
                return f"{key}: relative error {error:.3g}"
    return None


def run_case(program: Path, config: Path, mode: str, workdir: Path, float32: bool,
             archs: list[str]) -> dict[str, Any]:
    if float32:  # read by xpuc at each compile and call
        os.environ["XPUC_FP64"] = "0"
    kernels = workdir / "kernels"
    if archs:
        os.environ["XPUC_DUMP_DIR"] = str(kernels)
    # xpuc first: it points the OpenCL loader at the device runtime before dpnp loads it
    import xpuc  # noqa: F401, I001
    import dpnp
    import numpy as np

    info = tomllib.loads(config.read_text())["benchmark"]
    try:
        data = initial_data(info, program, "single" if float32 else None)
        reference_inputs = {arg: np.array(data[arg], copy=True) if arg in info["array_args"]
                            else data[arg] for arg in info["input_args"]}
        reference_file = sibling(program, "_numpy", "_python")
        reference = getattr(load_module(reference_file, "dpbench_reference"), info["func_name"])
        expected = outputs(info, reference_inputs, reference(**reference_inputs))
    except Exception as error:  # noqa: BLE001  (dpbench's own code, not the program, failed)
        return {"outcome": "not run",
                "detail": f"dpbench's init or reference: {type(error).__name__}: {error}"}

    def fresh_inputs(convert: Any) -> dict[str, Any]:
        return {arg: convert(np.array(data[arg], copy=True)) if arg in info["array_args"]
                else data[arg] for arg in info["input_args"]}

    for name, text in SHIM_MODULES.items():
        (workdir / name).write_text(text)
    sys.path.insert(0, str(workdir))
    # dpbench runs numba-mlir's programs on dpctl.tensor's arrays (now dpnp.tensor's)
    usm_array = (dpnp.tensor.asarray if program.stem.endswith("_numba_mlir_p")
                 else dpnp.asarray)
    norm_error = info.get("norm_error", 1e-05)
    rel_error = max(norm_error, FLOAT32_NORM_ERROR) if float32 else norm_error
    result = run_program(program, workdir, info, mode, expected, rel_error, fresh_inputs,
                         usm_array)
    if result.get("host_code_failed_in_dpnp"):
        del result["host_code_failed_in_dpnp"]
        rerun = run_program(program, workdir, info, mode, expected, rel_error, fresh_inputs,
                            usm_array, as_numpy=True)
        note = f"{AS_NUMPY_NOTE} (as written: {result['detail']})"
        result = {**rerun, "detail": "; ".join(filter(None, (note, rerun["detail"])))}
    if archs and result["outcome"] == "pass":
        result["builds"] = build_for_intel_gpus(kernels, archs)
    return result


def run_program(program: Path, workdir: Path, info: dict[str, Any], mode: str,
                expected: dict[str, Any], rel_error: float, fresh_inputs: Any, usm_array: Any,
                as_numpy: bool = False) -> dict[str, Any]:
    """The outcome of the program, its imports rewritten (and dpnp imported as NumPy where
    ``as_numpy``), on fresh inputs, its results within ``rel_error`` of ``expected``."""
    import xpuc

    source = rewrite_imports(program.read_text())
    rewritten = workdir / program.name
    rewritten.write_text(rewrite_imports(source, DPNP_AS_NUMPY) if as_numpy else source)
    xpuc.reset_stats()
    try:
        implementation = getattr(load_module(rewritten), info["func_name"])
        if mode == "dpnp":
            inputs = fresh_inputs(usm_array)
            returned = implementation(**inputs)
        else:
            inputs = fresh_inputs(lambda a: a)
            with xpuc.device_context(DEVICE):
                returned = implementation(**inputs)
        actual = outputs(info, inputs, returned)
    except xpuc.UnsupportedError as error:
        message = str(error).replace(f"{workdir}{os.sep}", "")
        named = re.search(rf"{re.escape(program.name)}\D{{1,8}}\d+", message) is not None
        inside = re.search(r"[\w/.-]*(?:numba|xpuc|compiler)/[\w/.-]+\.py", message)
        temporary = re.search(r"[\w$.]*(?:\$|__locals__|_v\d+_)[\w$.]*", message)
        return {"outcome": "refused", "names_line": named, "detail": message.splitlines()[0],
                "names_compiler_file": inside.group(0) if inside else "",
                "names_temporary": temporary.group(0) if temporary else ""}
    except Exception as error:  # noqa: BLE001  (every other failure is this case's finding)
        message = re.sub(r"<module '([\w.]+)' from '[^']*'>", r"\1",
                         str(error).replace(f"{workdir}{os.sep}", ""))
        failed = {"outcome": "error", "detail": f"{type(error).__name__}: {_first_line(message)}",
                  "where": _program_line(error, message, program.name)}
        if mode != "dpnp" and not as_numpy and _raised_by_dpnp(error):
            failed["host_code_failed_in_dpnp"] = True
        return failed
    launches = xpuc.stats()["kernel_launches"]
    wrong = mismatch(expected, actual, rel_error)
    outcome = "wrong" if wrong else "pass" if launches else "no kernels"
    return {"outcome": outcome, "kernel_launches": launches, "detail": wrong or ""}


def build_for_intel_gpus(kernels: Path, archs: list[str]) -> dict[str, str]:
    """For each architecture, "built N" (the distinct SPIR-V modules in ``kernels``), or
    the first failure's kernel and ocloc's message."""
    from xpuc import ocloc

    path = ocloc.find_ocloc()
    if path is None:
        return dict.fromkeys(archs, f"not built: {ocloc.HOW_TO_GET}")
    modules = {file.read_bytes(): file.name for file in sorted(kernels.glob("*.spv"))}
    builds = ocloc.build_many(path, [(spirv, arch) for arch in archs for spirv in modules])
    found = {}
    for index, arch in enumerate(archs):
        mine = list(zip(modules.values(), builds[index * len(modules):][:len(modules)]))
        failed = [(name, build) for name, build in mine if not build.succeeded]
        found[arch] = (f"failed {len(failed)} of {len(mine)}: {failed[0][0]}: "
                       f"{_first_line(failed[0][1].errors)}" if failed else f"built {len(mine)}")
    return found


def _raised_by_dpnp(error: BaseException) -> bool:
    """Whether ``error`` was raised in dpnp's (or dpctl's) own Python code, called by the
    program's host code: a dpnp function refusing a NumPy array."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and re.search(r"[/\\](?:dpnp|dpctl)[/\\]", frames[-1].filename) is not None


def _first_line(message: str) -> str:
    """The message's first line, past Numba's "Failed in ... pipeline" headers."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    telling = [line for line in lines if not re.match(r"Failed in .* pipeline", line)]
    return (telling or lines or [""])[0]


def _program_line(error: BaseException, message: str, program_name: str) -> str:
    """The program's line that the message names (Numba's "File ..., line N"), else the
    program's innermost line in the traceback."""
    named = re.findall(rf"{re.escape(program_name)}(?:\", line |:| \()(\d+)", message)
    frames = [f.lineno for f in traceback.extract_tb(error.__traceback__)
              if Path(f.filename).name == program_name]
    lines = named[-1:] or frames[-1:]
    return f"{program_name}:{lines[0]}" if lines else ""


# ---------------------------------------------------------------- driver


def run_in_subprocess(case: dict[str, str], timeout: int, float32: bool,
                      archs: list[str]) -> dict[str, Any]:
    result = _run_in_subprocess(case, timeout, float32, archs)
    print(f"{Path(case['program']).stem} ({case['mode']}): {result['outcome']}",
          file=sys.stderr, flush=True)
    return result


def _run_in_subprocess(case: dict[str, str], timeout: int, float32: bool,
                       archs: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dpbench-case-") as workdir:
        command = [sys.executable, __file__, "--case", case["program"], case["config"],
                   case["mode"], workdir, *(["--float32"] * float32),
                   *(["--ocloc", ",".join(archs)] if archs else [])]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {**case, "outcome": "error", "detail": f"timed out after {timeout} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        return {**case, **json.loads(lines[-1])}
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return {**case, "outcome": "error",
            "detail": f"process ended with status {done.returncode}: {last}"}


def describe(result: dict[str, Any]) -> str:
    if result["outcome"] == "refused":
        line = "names its line" if result["names_line"] else "does not name the program's line"
        for key in ("names_compiler_file", "names_temporary"):
            if result.get(key):
                line += f", names {result[key]}"
        return f"refused ({line}): {result['detail']}"
    where = f" at {result['where']}" if result.get("where") else ""
    return f"{result['outcome']}: {result['detail']}{where}" if result["detail"] else ""


def builds(modes: dict[str, dict[str, Any]], arch: str) -> str:
    """A program's builds for ``arch`` over its cases that passed: "built N" (N distinct
    modules of each case at most), the first failure, or "-" where none passed."""
    found = [modes[mode]["builds"][arch] for mode in MODES if "builds" in modes[mode]]
    failed = [text for text in found if not text.startswith("built ")]
    return (failed or [max(found, key=lambda text: int(text.split()[1]))] if found else ["-"])[0]


def table(results: list[dict[str, Any]], archs: list[str]) -> str:
    by_program: dict[str, dict[str, dict[str, Any]]] = {}
    for result in results:
        by_program.setdefault(Path(result["program"]).stem, {})[result["mode"]] = result
    rows = ["| program | dpnp | NumPy in context | " + "".join(f"{a} | " for a in archs)
            + "detail |", "|---|---|---|" + "---|" * len(archs) + "---|"]
    for program, modes in sorted(by_program.items()):
        dpnp_detail, numpy_detail = (describe(modes[mode]) for mode in MODES)
        detail = (dpnp_detail if dpnp_detail == numpy_detail
                  else "; ".join(f"{label}: {text}" for label, text
                                 in (("dpnp", dpnp_detail), ("NumPy", numpy_detail)) if text))
        built = "".join(f"{builds(modes, arch).replace('|', '/')} | " for arch in archs)
        rows.append(f"| {program} | {modes['dpnp']['outcome']} | "
                    f"{modes['numpy in context']['outcome']} | {built}"
                    f"{detail.replace('|', '/')} |")
    counts: dict[str, int] = {}
    for result in results:
        counts[result["outcome"]] = counts.get(result["outcome"], 0) + 1
    total = ", ".join(f"{outcome} {count}" for outcome, count in sorted(counts.items()))
    passed = counts.get("pass", 0)
    rows.append("")
    rows.append(f"Totals over {len(results)} cases: {total} "
                f"({100 * passed / len(results):.0f}% pass).")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dpbench", type=Path, default=Path(DEFAULT_DPBENCH))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=420, help="seconds per case")
    parser.add_argument("--json", type=Path, default=Path("dpbench_cases.json"))
    parser.add_argument("-k", dest="pattern", default="", help="only programs matching this")
    parser.add_argument("--kernels", action="store_true",
                        help=f"the *{KERNEL_SUFFIX}.py programs too (numba-dpex's kernel API)")
    parser.add_argument("--float32", action="store_true",
                        help="float32 inputs under XPUC_FP64=0, as on a GPU without fp64")
    parser.add_argument("--ocloc", type=lambda text: text.split(","), default=[],
                        metavar="ARCH,...", help="build each passing case's kernels for these "
                        "Intel GPU architectures with ocloc")
    parser.add_argument("--case", nargs=4, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.case:
        program, config, mode, workdir = options.case
        print(json.dumps(run_case(Path(program), Path(config), mode, Path(workdir),
                                  options.float32, options.ocloc)))
        return

    with tempfile.TemporaryDirectory(prefix="dpbench-") as tree:
        extract(options.dpbench, Path(tree))
        suffixes = (*PROGRAM_SUFFIXES, KERNEL_SUFFIX) if options.kernels else PROGRAM_SUFFIXES
        cases = [{**program, "mode": mode} for program in find_programs(Path(tree), suffixes)
                 for mode in MODES if options.pattern in Path(program["program"]).name]
        sizes = {}
        for case in cases:
            info = tomllib.loads(Path(case["config"]).read_text())["benchmark"]
            sizes[info["module_name"]] = parameters(info)
        with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
            results = list(pool.map(lambda c: run_in_subprocess(
                c, options.timeout, options.float32, options.ocloc), cases))
    for result in results:
        result["program"] = Path(result.pop("program")).name
        result.pop("config")

    repository = Path(__file__).parents[1]
    xpuc_commit = subprocess.run(["git", "-C", str(repository), "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True).stdout.strip()
    if subprocess.run(["git", "-C", str(repository), "status", "--porcelain", "--", "compiler",
                       "runtime"], capture_output=True, text=True).stdout:
        xpuc_commit += " with uncommitted changes"
    header = (f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, xpuc "
              f"{xpuc_commit}, dpbench {dpbench_commit(options.dpbench)}, "
              f"preset {PRESET} on {DEVICE}"
              + (", float32 inputs under XPUC_FP64=0" if options.float32 else ""))
    print(header + "\n")
    print(table(results, options.ocloc))
    print("\nSizes: " + "; ".join(
        f"{name} {', '.join(f'{k}={v}' for k, v in params.items())}"
        + (" (smaller than S)" if name in SMALLER_THAN_PRESET else "")
        for name, params in sorted(sizes.items())))
    options.json.write_text(json.dumps({"run": header, "sizes": sizes, "cases": results},
                                       indent=1) + "\n")
    print(f"\nJSON: {os.fspath(options.json)}")


if __name__ == "__main__":
    main()
