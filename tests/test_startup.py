"""What keeps a first call short, made structural: each thread's MLIR context
and pass pipelines are built once and reused by every later lowering, and an
offload build compiles no more host code than Python calls need. (How long a
first call takes is measured by benchmarks/bench_first_call.py, not here.)
What a fresh process loads, and on which thread, is checked in one."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
from device_support import offload

import xpuc
from xpuc.passes import Target, lower, stages

DATA = Path(__file__).parent / "data" / "passes"


def source(name: str) -> str:
    return (DATA / f"{name}.mlir").read_text()


def test_two_lowerings_reuse_the_threads_context_and_pass_managers():
    lower(source("math_f32"), Target())
    compiler = stages._compiler()
    built = dict(compiler._pass_managers)
    lower(source("grid2d"), Target())
    assert stages._compiler() is compiler
    # the same PassManager objects, and no pipeline parsed again
    assert set(compiler._pass_managers) == set(built)
    assert all(compiler._pass_managers[text] is manager for text, manager in built.items())


def test_another_thread_lowers_in_its_own_context():
    compilers = []

    def lower_in_thread():
        lower(source("math_f32"), Target())
        compilers.append(stages._compiler())

    worker = threading.Thread(target=lower_in_thread)
    worker.start()
    worker.join()
    assert compilers and compilers[0] is not stages._compiler()
    assert compilers[0].context is not stages._compiler().context


def test_a_fresh_context_knows_the_ops_the_rewrites_create():
    # an op created by name in a dialect not yet loaded would be unregistered
    an_op = {"arith": "arith.addi", "func": "func.func", "gpu": "gpu.func",
             "llvm": "llvm.atomicrmw", "math": "math.sqrt", "memref": "memref.load",
             "scf": "scf.for", "spirv": "spirv.module"}
    assert set(an_op) == set(stages._CREATED_DIALECTS)
    context = stages._ThreadCompiler().context
    for op in an_op.values():
        assert context.is_registered_operation(op), op


def test_an_offload_build_has_no_c_callable_wrapper():
    @xpuc.jit
    def scale(a):
        return a * 2.0

    offload(scale, np.ones(8))
    (dispatcher, _), = scale._devices.values()
    (compiled,) = dispatcher.overloads.values()
    symbols = compiled.library.get_llvm_str()
    assert compiled.fndesc.llvm_func_name in symbols
    assert compiled.fndesc.llvm_cfunc_wrapper_name not in symbols


# Reports which thread began importing each module of WATCHED, what was
# imported at all of SHOWN, and whether the call was right. MODE: "device"
# (a device context), "cpu" (none: plain Numba).
FIRST_CALL = '''
import json, sys, threading
WATCHED = ("mlir._mlir_libs._mlir", "mlir.dialects.spirv")
SHOWN = ("mlir", "mlir.dialects.llvm", "xpuc.passes.nvvm_rewrites",
         "xpuc.passes.spirv_to_nvvm", "xpuc.passes.libdevice")
# imported by Numba's refresh of its registries alone, and by the compiler's import
ORDERED = ("numba.np.linalg", "xpuc.frontend.kernel_to_mlir")
threads = {{}}
order = []

def audit(event, args):
    if event == "import" and args[0] in WATCHED:
        threads.setdefault(args[0], threading.current_thread().name)
    if event == "import" and args[0] in ORDERED and args[0] not in order:
        order.append(args[0])

sys.addaudithook(audit)
import contextlib
import numpy as np
import xpuc

@xpuc.jit
def fma(a, b, c):
    return a * b + c

a = np.arange(4.0)
with xpuc.device_context("opencl:cpu") if "{mode}" == "device" else contextlib.nullcontext():
    result = fma(a, a, a)
print(json.dumps({{"threads": threads, "loaded": [m for m in SHOWN if m in sys.modules],
                  "order": order, "ok": result.tolist() == [0.0, 2.0, 6.0, 12.0],
                  "compiled": xpuc.stats()["kernels_compiled"]}}))
'''


def first_call(tmp_path, mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "XPUC_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-c", FIRST_CALL.format(mode=mode)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ok"], report
    return report


def test_a_cold_compile_loads_the_mlir_bindings_beside_numba(tmp_path):
    report = first_call(tmp_path, "device")
    assert report["compiled"] == 1
    # begun in a thread as the compile began, while Numba typed the function: the
    # bindings' libraries, and the dialects' modules they import on first use
    assert report["threads"] == {"mlir._mlir_libs._mlir": "xpuc-load-mlir",
                                 "mlir.dialects.spirv": "xpuc-load-mlir"}
    # a SYCL device's compile imports nothing of the CUDA tail's
    assert report["loaded"] == ["mlir"]
    # Numba's registries are loaded first, which the main thread does while the
    # thread loads the bindings the compiler's modules import
    assert report["order"] == ["numba.np.linalg", "xpuc.frontend.kernel_to_mlir"]


OPEN_BINDINGS_LIBRARY = '''
import sys
from xpuc import passes
passes._open_bindings_library()
with open("/proc/self/maps") as maps:
    print("libMLIRPythonCAPI.so" in maps.read(), "mlir._mlir_libs._mlir" in sys.modules)
'''


def test_the_bindings_library_is_opened_natively_before_their_import(tmp_path):
    # mapped by libc's dlopen (which runs without the GIL), their extension not imported
    done = subprocess.run([sys.executable, "-c", OPEN_BINDINGS_LIBRARY], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]


def test_a_cpu_call_loads_no_mlir(tmp_path):
    # plain Numba compiles it: nothing is lowered, so nothing of MLIR is loaded
    report = first_call(tmp_path, "cpu")
    assert report["compiled"] == 0
    assert report["threads"] == {} and report["loaded"] == []


# The child reports its exit status: 0 once it imported the MLIR half, or
# SIGALRM's (14) where it waited 30 s for the import's locks.
FORK_WHILE_LOADING = '''
import os, signal, time
from xpuc import passes
passes.load_in_background()
time.sleep(0.02)  # the thread is importing the bindings
child = os.fork()
if child == 0:
    signal.alarm(30)
    import xpuc.passes.stages
    os._exit(0)
_, status = os.waitpid(child, 0)
print(status)
'''


def test_a_process_forked_while_the_mlir_half_loads_can_import_it(tmp_path):
    # the fork waits for the thread's import: the child would wait forever for its locks
    done = subprocess.run([sys.executable, "-c", FORK_WHILE_LOADING], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]
