"""Compiled code on disk (SPEC rule 8, ``xpuc compile``): ``cache=True`` and
ahead-of-time builds, each checked from fresh processes (a warm process must
compile no MLIR), invalidation, corruption and concurrent writers."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

MODULE = '''
import numpy as np
import xpuc

@xpuc.jit(cache=True)
def fma(a, b, c):
    return a * b + c

@xpuc.jit("float64[::1](float64[::1])")
def wave(a):
    return np.sin(a) * 2.0
'''

# run in a fresh process: calls the module's functions under a device context
# and reports what was compiled; PATCH is code run first (to fake a change)
CALLER = '''
import json, sys, warnings
import numpy as np
import xpuc
{patch}
import mod
warnings.simplefilter("always")
a = np.arange(16.0)
xpuc.reset_stats()
with warnings.catch_warnings(record=True) as caught:
    with xpuc.device_context("opencl:cpu"):
        fma_result = mod.fma(a, a, a)
        wave_result = mod.wave(a)
    cpu_result = mod.fma(a, a, a)
ok = (np.allclose(fma_result, a * a + a) and np.allclose(wave_result, np.sin(a) * 2)
      and np.allclose(cpu_result, a * a + a))
print(json.dumps({{"compiled": xpuc.stats()["kernels_compiled"], "ok": bool(ok),
                  "cpu_cache_hits": sum(mod.fma._cpu.stats.cache_hits.values()),
                  "mlir_loaded": "mlir" in sys.modules,
                  "warnings": [str(w.message) for w in caught
                               if "xpuc" in str(w.message)]}}))
'''


@pytest.fixture
def project(tmp_path):
    (tmp_path / "mod.py").write_text(MODULE)
    return tmp_path


def run(project, patch: str = "", cache_dir=None) -> dict:
    env = dict(os.environ)
    env.pop("XPUC_CACHE_DIR", None)
    if cache_dir is not None:
        env["XPUC_CACHE_DIR"] = str(cache_dir)
    done = subprocess.run([sys.executable, "-c", CALLER.format(patch=patch)], cwd=project,
                          env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ok"], result
    return result


def aot(project, *options: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "XPUC_CACHE_DIR"}
    return subprocess.run([sys.executable, "-m", "xpuc.cli", "compile", "mod.py", *options],
                          cwd=project, env=env, capture_output=True, text=True, timeout=240)


def test_cache_true_cold_then_warm(project):
    assert run(project)["compiled"] == 2  # fma and wave
    warm = run(project)
    assert warm["compiled"] == 1  # wave has no cache=True (and was not compiled ahead)
    assert warm["cpu_cache_hits"] == 1  # the CPU build is cached beside, not overwritten


def test_ahead_of_time_into_a_directory(project):
    done = aot(project, "-o", "built")
    assert done.returncode == 0, done.stderr
    assert "wave: 1 signature, 1 kernel" in done.stdout
    assert "fma has no explicit signatures, not compiled" in done.stderr
    first = run(project, cache_dir=project / "built")
    assert first["compiled"] == 1  # fma (cache=True) compiles once, into the same place
    warm = run(project, cache_dir=project / "built")
    assert warm["compiled"] == 0
    assert not warm["mlir_loaded"]  # nothing to compile: the MLIR bindings stay unloaded


# What only compiling needs: the Numba pipelines, the parfors' lowering and
# rules, the explicit-kernel API, the MLIR bindings and the array libraries.
COMPILER_MODULES = ("xpuc.frontend.pipeline", "xpuc.frontend.host_lowering",
                    "xpuc.frontend.parfor_to_mlir", "xpuc.frontend.translation",
                    "xpuc.frontend.numpy_functions", "xpuc.frontend.dpnp_constructors",
                    "xpuc.dialects", "xpuc.explicit_kernels", "mlir", "dpnp", "dpctl.tensor")

WARM_START = f'''
import json, sys
import numpy as np
import xpuc
from xpuc import runtime
ahead = []  # the modules each build ahead was given
build_ahead = runtime.build_ahead
runtime.build_ahead = lambda queue, modules: ahead.append(len(modules)) or build_ahead(
    queue, modules)
import mod
a = np.arange(4.0)
with xpuc.device_context("opencl:cpu"):
    result = mod.fma(a, a, a)
print(json.dumps({{"compiled": xpuc.stats()["kernels_compiled"], "ahead": ahead,
                  "builds": xpuc.stats()["kernel_builds"],
                  "ok": result.tolist() == [0.0, 2.0, 6.0, 12.0],
                  "loaded": [m for m in {COMPILER_MODULES!r} if m in sys.modules]}}))
'''


def test_a_warm_start_imports_no_compiler_and_builds_its_kernels_ahead(tmp_path):
    (tmp_path / "mod.py").write_text(
        "import xpuc\n\n@xpuc.jit(cache=True)\ndef fma(a, b, c):\n    return a * b + c\n")
    env = {k: v for k, v in os.environ.items() if k != "XPUC_CACHE_DIR"}
    reports = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", WARM_START], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stderr
        reports.append(json.loads(done.stdout.strip().splitlines()[-1]))
    cold, warm = reports
    assert cold["ok"] and cold["compiled"] == 1 and "xpuc.frontend.pipeline" in cold["loaded"]
    assert warm["ok"] and warm["compiled"] == 0
    assert warm["loaded"] == []  # imported by the first compile, and there is none
    # the kernel built ahead of its launch, once its SPIR-V was made and as the entry
    # holding it loaded; built once (the launch found it, or waited for it)
    assert (cold["ahead"], cold["builds"]) == ([1], 1)
    assert (warm["ahead"], warm["builds"]) == ([1], 1)


def test_ahead_of_time_beside_the_module(project):
    assert aot(project).returncode == 0
    assert os.listdir(project / "__pycache__")
    assert run(project)["compiled"] == 1  # only fma, the first time


def test_emit_neither_loads_nor_stores(project):
    assert aot(project).returncode == 0
    done = aot(project, "--emit", "gpu")
    assert done.returncode == 0 and "gpu.launch_func" in done.stdout  # compiled, not loaded
    files = sorted(os.listdir(project / "__pycache__"))
    aot(project, "--emit", "spirv")
    assert sorted(os.listdir(project / "__pycache__")) == files


def test_a_changed_source_recompiles(project):
    run(project)
    (project / "mod.py").write_text(MODULE.replace("a * b + c", "c + a * b"))
    assert run(project)["compiled"] == 2


@pytest.mark.parametrize("patch", [
    # another toolchain
    "import xpuc.cache as c; c.toolchain_versions = lambda: (('numba', 'other'),)",
    # other runtime entries called by host code (cached code is linked to them)
    "import xpuc.cache as c; c._HOST_CODE_ENTRIES = c._HOST_CODE_ENTRIES[1:]",
    # a device whose capabilities change the code (here: fp16 support)
    "import dataclasses, xpuc.targets as d; original = d.target_for; "
    "d.target_for = lambda device: dataclasses.replace(original(device), "
    "fp16=not original(device).fp16)",
])
def test_a_changed_toolchain_or_device_recompiles(project, patch):
    run(project)
    assert run(project)["compiled"] == 1
    assert run(project, patch=patch)["compiled"] == 2


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_a_damaged_cache_warns_and_recompiles(project, damage):
    run(project)
    cache = project / "__pycache__"
    damaged = [name for name in os.listdir(cache) if ".xpuc-" in name]
    assert damaged
    for name in damaged:
        path = cache / name
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"\x80garbage")
    result = run(project)
    assert result["compiled"] == 2
    assert any("unreadable cache entry" in w for w in result["warnings"])
    assert run(project)["compiled"] == 1  # and the rewritten entry is good


def test_concurrent_processes_fill_one_cache(project):
    script = CALLER.format(patch="")
    workers = [subprocess.Popen([sys.executable, "-c", script], cwd=project,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(3)]
    for worker in workers:
        out, err = worker.communicate(timeout=240)
        assert worker.returncode == 0, err
        assert json.loads(out.strip().splitlines()[-1])["ok"]
    assert run(project)["compiled"] == 1


def test_inspecting_a_cache_loaded_function_says_so(project):
    run(project)
    script = textwrap.dedent('''
        import numpy as np, xpuc, mod
        with xpuc.device_context("opencl:cpu"):
            mod.fma(np.ones(3), np.ones(3), np.ones(3))
        try:
            mod.fma.inspect_mlir("gpu")
        except xpuc.XpucError as error:
            print(error)
    ''')
    done = subprocess.run([sys.executable, "-c", script], cwd=project, capture_output=True,
                          text=True, timeout=240)
    assert "loaded from the on-disk cache, which keeps no MLIR" in done.stdout, done.stderr


def test_the_kernel_api_is_the_decorator_whatever_imported_its_module_first():
    """The API is imported on first use; a module importing its implementation
    first (the compile command's ``aot``) leaves ``xpuc.kernel`` the decorator,
    not a submodule of that name."""
    probe = ("import types, xpuc, xpuc.aot\n"
             "print(isinstance(xpuc.kernel, types.ModuleType), callable(xpuc.kernel))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
