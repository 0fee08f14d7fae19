"""What keeps a first call short, made structural: each thread's MLIR context
and pass pipelines are built once and reused by every later lowering, and an
offload build compiles no more host code than Python calls need. (How long a
first call takes is measured by benchmarks/bench_first_call.py, not here.)"""

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
