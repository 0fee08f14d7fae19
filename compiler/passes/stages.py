"""The lowering of one parfor module, as an ordered table of named stages.

Each stage is a function from module to module (in place, as MLIR passes are),
run in ``STAGES`` order by ``lower``, which can keep the MLIR text after each one:

- ``linalg``: the frontend's module, one func.func holding an scf.parallel on
  1-D memrefs (or linalg ops, made into one; but their bounds are memref.dim,
  which the launch plan cannot compute from a bare pointer), parsed, verified;
- ``gpu``: each loop dimension mapped to a dimension of a range of
  work-items, kernels outlined into one gpu.module, the host function reduced
  to index arithmetic and gpu.launch_func ops, from which the ``LaunchPlan``
  is read;
- ``spirv``: the kernels in the spirv dialect;
- ``spv``: the gpu.module serialized to a SPIR-V binary.

That tail is a SYCL device's. A CUDA device's (``Target.family``, see
``stages_for``) branches after ``gpu``:

- ``nvvm``: the kernels in the llvm and nvvm dialects, parfor kernels guarded
  against the tail of their last block (nvvm_rewrites.guard_range_tails);
- ``ptx``: the gpu.module compiled to PTX, libdevice linked in; ``--emit ptx``
  shows the PTX itself.

An explicit kernel (``KERNEL_STAGES``) starts at ``gpu``: the frontend writes
its gpu.func, which that stage only structures.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass

# The bindings import a dialect's module when one of its ops or attributes
# first comes back to Python (the spirv dialect's takes 12 ms): those a
# lowering meets are imported here, by the thread that loads this module ahead
# of a compile (passes.load_in_background), not by the compile's first kernel.
import mlir.dialects.builtin  # noqa: F401
import mlir.dialects.func  # noqa: F401
import mlir.dialects.memref  # noqa: F401
import mlir.dialects.spirv  # noqa: F401
from mlir import ir, passmanager
from mlir.dialects import gpu

from ..errors import UnsupportedError, XpucError
from . import (
    aligned_lanes,
    coarsening,
    counted_loops,
    disjoint,
    fast_math,
    float_support,
    gpu_rewrites,
    ir_queries,
    lane_strides,
    math_expansions,
    ordered_reductions,
    pipelines,
    spirv_rewrites,
    unswitch,
)
from .launch_plan import LaunchPlan, read_launch_plan
from .target import Target


@dataclass
class Lowered:
    """What lowering ``source`` through ``stages`` up to ``until`` produced:
    the launch plan once ``gpu`` ran, the SPIR-V binary once ``spv`` ran, and
    the MLIR text after each stage that ran.

    Printing every stage costs a few milliseconds a kernel, which a program
    pays at each first call and rarely reads: ``lower(keep_texts=False)``
    prints none, and ``text`` lowers the source again, keeping them, the first
    time one is asked for (lowering is deterministic)."""

    source: str
    target: Target
    stages: tuple[Stage, ...]
    until: str
    texts: dict[str, str] | None = None  # None: not kept
    plan: LaunchPlan | None = None
    spirv: bytes | None = None
    ptx: bytes | None = None  # a CUDA device's kernels, once ``ptx`` ran
    # an explicit kernel's launch passes its range's extents (x, y, z) after
    # its arguments (nvvm_rewrites.guard_kernel_ranges)
    passes_range: bool = False
    # an explicit kernel whose work-items wait for their work-group (a
    # barrier, a collective): the blocks of a CUDA launch must divide its
    # range, as SYCL's work-groups do (the guard past the range would make
    # the last block's work-items skip the barriers)
    waits_for_work_group: bool = False
    # an explicit kernel whose body, once structured, is only its return: it
    # has no effect, so launching it would only cost time
    empty: bool = False

    @property
    def binary(self) -> bytes | None:
        """The kernels as the device's runtime loads them: SPIR-V or PTX."""
        return self.spirv if self.spirv is not None else self.ptx

    def _texts(self) -> dict[str, str]:
        if self.texts is None:
            self.texts = lower(self.source, self.target, self.until, self.stages).texts
        return self.texts

    def has_stage(self, stage: str) -> bool:
        names = [s.name for s in self.stages]
        return stage in names and names.index(stage) <= names.index(self.until)

    def text(self, stage: str) -> str:
        texts = self._texts()
        if stage not in texts:
            raise XpucError(f"no MLIR kept for stage '{stage}' (have: {', '.join(texts)})")
        return texts[stage]

    def all_texts(self) -> dict[str, str]:
        """Stage name -> MLIR text, for every stage that ran."""
        return dict(self._texts())


@dataclass(frozen=True)
class Stage:
    """One step of ``lower``: ``name`` is what ``Lowered.text`` and
    ``xpuc compile --emit`` call its output."""

    name: str
    # (module, target, lowered) -> module; may record products on ``lowered``
    run: Callable[[ir.Module, Target, Lowered], ir.Module]
    # what the stage does, as a failure's message says it ("while ...")
    doing: str
    # what the stage's text is, once it ran: the module's MLIR unless told
    shown: Callable[[ir.Module, Lowered], str] | None = None


# The dialects the Python rewrites create ops of. A context loads the others
# when text or a pass first needs them, but an op created by name in a dialect
# not yet loaded would be an unregistered op.
_CREATED_DIALECTS = ("arith", "func", "gpu", "llvm", "math", "memref", "scf", "spirv")


class _ThreadCompiler:
    """One MLIR context per thread, reused: creating one costs more than
    lowering a kernel. Pass managers are cached per pipeline text."""

    def __init__(self) -> None:
        # not every registered dialect, as a context loads by default: that
        # takes longer than the whole lowering of a kernel
        self.context = ir.Context(load_on_create_dialects=[])
        for dialect in _CREATED_DIALECTS:
            self.context.get_dialect_descriptor(dialect)
        # the modules are tiny: worker threads cost more than they save
        self.context.enable_multithreading(False)
        self._pass_managers: dict[str, passmanager.PassManager] = {}

    def run(self, module: ir.Module, passes: tuple[str, ...], **fields: object) -> None:
        """Run a pipeline of ``pipelines.py`` on ``module``, its fields filled in.

        Why user code cannot reach an LLVM fatal error (which would end the
        process) here: it never supplies IR, only Numba IR that the frontend
        prints as text, and parsing that text raises on what is malformed.
        Passes assume valid input, and a pass manager verifies what each pass
        leaves but not what it is given, so the input, which a Python
        rewrite may have just changed, is verified first. A failed
        verification or pass raises ir.MLIRError with MLIR's diagnostics
        (naming the op), which ``lower`` turns into an XpucError naming the
        stage."""
        pipeline = "builtin.module({})".format(",".join(passes).format(**fields))
        if pipeline not in self._pass_managers:
            self._pass_managers[pipeline] = passmanager.PassManager.parse(
                pipeline, self.context)
        module.operation.verify()
        self._pass_managers[pipeline].run(module.operation)


_threads = threading.local()


def _compiler() -> _ThreadCompiler:
    if not hasattr(_threads, "compiler"):
        _threads.compiler = _ThreadCompiler()
    return _threads.compiler


def _structure(module: ir.Module, target: Target, lowered: Lowered) -> ir.Module:
    _compiler().run(module, pipelines.STRUCTURE)
    gpu_rewrites.switches_to_ifs(module)
    functions = [op for op in module.body.operations if op.operation.name == "func.func"]
    if len(functions) != 1:
        # the launch plan describes one host function
        raise XpucError(f"expected one func.func per module, found {len(functions)}")
    return module


def _map_to_gpu(module: ir.Module, target: Target, lowered: Lowered) -> ir.Module:
    compiler = _compiler()
    compiler.run(module, pipelines.LOOPS)
    ndim = ir_queries.parallel_loop_dims(module)
    if ndim == 0:
        # the loop had no effect (Numba pruned its body) and canonicalization
        # removed it: a plan with nothing to launch
        lowered.plan = read_launch_plan(module)
        return module
    if not 1 <= ndim <= 3:
        raise XpucError(f"expected a parallel loop of 1 to 3 dimensions, the deepest has {ndim}")
    gpu_rewrites.normalize_loops(module)
    gpu_rewrites.enclose_printfs(module)
    compiler.run(module, pipelines.MAP_TO_GPU)
    gpu_rewrites.sink_into_launches(module)
    compiler.run(module, pipelines.OUTLINE)
    gpu_rewrites.index_by_global_ids(module)
    gpu_rewrites.bound_global_ids(module)
    counted_loops.to_for_loops(module)
    compiler.run(module, pipelines.RANGES)
    gpu_rewrites.merge_gpu_modules(module)
    if target.vectorizes_work_items:
        # after RANGES, which proved the subscripts' facts from the ids' bounds
        aligned_lanes.offset_streaming_ids(module)
    if target.work_item_bytes_in_flight:
        # after RANGES, which simplified the bodies knowing their ids below
        # MAX_WORK_ITEMS; before unswitch, whose kernel copies take the same
        # arguments (a kernel over views, which branches on its strides,
        # stores first and is left as it is)
        coarsening.coarsen_streaming_kernels(module, target.work_item_bytes_in_flight)
    unswitch.split_on_unit_arguments(module)
    lane_strides.mark_row_walks(module)
    if target.vectorizes_work_items:
        disjoint.add_disjoint_variants(module)
    _attach_target(module, target)
    lowered.plan = read_launch_plan(module)
    return module


def _structure_kernel(module: ir.Module, target: Target, lowered: Lowered) -> ir.Module:
    compiler = _compiler()
    compiler.run(module, pipelines.KERNEL_STRUCTURE)
    gpu_rewrites.switches_to_ifs(module)
    gpu_rewrites.inline_kernel_bodies(module)
    gpu_rewrites.bound_global_ids(module)
    compiler.run(module, pipelines.KERNEL_CLEANUP)
    counted_loops.to_for_loops(module)
    compiler.run(module, pipelines.RANGES)
    _attach_target(module, target)
    lowered.empty = all(ir_queries.is_empty_function(kernel)
                        for kernel in ir_queries.ops_named(module.operation, "gpu.func"))
    return module


def _attach_spirv_target(module: ir.Module, target: Target) -> None:
    _compiler().run(module, pipelines.ATTACH_TARGET, version=target.spirv_version,
                    caps=",".join(target.spirv_caps))


# The CUDA tail's modules (nvvm_rewrites, spirv_to_nvvm, libdevice, and with
# them the llvm dialect's bindings: 15-20 ms) are imported by its stages as
# they run, so that a SYCL device's first compile does not load them.


def _attach_nvvm_target(module: ir.Module, target: Target) -> None:
    from . import libdevice
    _compiler().run(module, pipelines.ATTACH_NVVM_TARGET, chip=target.sm_arch,
                    ptx_version=target.ptx_version, libdevice=libdevice.libdevice_path())


# how the gpu stage ends, by device family: the target attached to the gpu.module
_TARGET_ATTACHERS: dict[str, Callable[[ir.Module, Target], None]] = {
    "sycl": _attach_spirv_target,
    "cuda": _attach_nvvm_target,
}


def _attach_target(module: ir.Module, target: Target) -> None:
    _TARGET_ATTACHERS[target.family](module, target)


def _to_spirv(module: ir.Module, target: Target, lowered: Lowered) -> ir.Module:
    float_support.check_float_support(module, target)
    spirv_rewrites.bools_as_index_by_select(module)
    math_expansions.expand_math(module)
    if target.reorders_loop_reductions and not fast_math.allows_reassociation(target.fast_math):
        ordered_reductions.keep_reduction_order(module)
    spirv_rewrites.attach_spirv_abi(module)
    # read before the conversion, which drops the gpu.funcs' attributes
    row_walks = lane_strides.row_walking_kernels(module) if target.vectorizes_work_items else []
    disjoint_kernels = disjoint.disjoint_kernels(module)
    _compiler().run(module, pipelines.TO_SPIRV)
    spirv_rewrites.hint_scalar_work_items(module, row_walks)
    if not fast_math.allows_contraction(target.fast_math):
        spirv_rewrites.forbid_contraction(module)
    disjoint.declare_restrict(module, disjoint_kernels)
    spirv_rewrites.complete_vce(module)
    spirv_rewrites.check_kernel_abi(module)
    return module


def _serialize(module: ir.Module, target: Target, lowered: Lowered) -> ir.Module:
    _compiler().run(module, pipelines.TO_BINARY)
    spirv = _binary_object(module)
    lowered.spirv = disjoint.declare_noalias(spirv) if spirv else b""
    return module


def _binary_object(module: ir.Module) -> bytes:
    """The object of the module's one gpu.binary; none (a parfor with nothing
    to launch) is empty."""
    binaries = ir_queries.ops_named(module.operation, "gpu.binary")
    if len(binaries) > 1:
        raise XpucError(f"expected one gpu.binary, found {len(binaries)}")
    return gpu.ObjectAttr(binaries[0].attributes["objects"][0]).object if binaries else b""


def _to_nvvm(module: ir.Module, target: Target, lowered: Lowered) -> ir.Module:
    from . import nvvm_rewrites
    nvvm_rewrites.guard_range_tails(module)
    if lowered.plan is not None:  # a parfor's: its launches now pass their extents
        lowered.plan = read_launch_plan(module)
    _lower_to_nvvm(module, target)
    return module


def _kernel_to_nvvm(module: ir.Module, target: Target, lowered: Lowered) -> ir.Module:
    from . import nvvm_rewrites
    nvvm_rewrites.guard_kernel_ranges(module)
    lowered.passes_range = True
    _lower_to_nvvm(module, target)
    # barriers, and the collectives' own (gpu.all_reduce's lowering has some)
    lowered.waits_for_work_group = bool(ir_queries.ops_named(module.operation,
                                                             "nvvm.barrier0"))
    return module


def _lower_to_nvvm(module: ir.Module, target: Target) -> None:
    """The nvvm stage of parfor and explicit kernels alike, once their launch
    is settled (and the plan read: the rewrites here add casts to the host
    code, which it does not read)."""
    from . import carried_products, contiguous_x, nvvm_rewrites, spirv_to_nvvm, wide_loads
    float_support.check_float_support(module, target)
    if target.fast_math:
        fast_math.stamp(module, target.fast_math)
    contiguous_x.mark_contiguous_x(module)
    carried_products.carry_products(module)
    wide_loads.widen_row_loads(module)
    nvvm_rewrites.private_arrays_in_default_memory(module)
    spirv_to_nvvm.spirv_ops_to_llvm(module)
    nvvm_rewrites.native_float_adds(module)
    nvvm_rewrites.static_array_arguments(module)
    _compiler().run(module, pipelines.TO_NVVM)
    nvvm_rewrites.exact_square_roots(module)
    _compiler().run(module, pipelines.NVVM_TO_LLVM)
    nvvm_rewrites.nvptx_data_layout(module)


def _to_ptx(module: ir.Module, target: Target, lowered: Lowered) -> ir.Module:
    _compiler().run(module, pipelines.TO_PTX)
    lowered.ptx = _binary_object(module)
    return module


def _ptx_text(module: ir.Module, lowered: Lowered) -> str:
    return lowered.ptx.decode()


STAGES: tuple[Stage, ...] = (
    Stage("linalg", _structure, "structuring the loop"),
    Stage("gpu", _map_to_gpu, "mapping the loop onto work-items"),
    Stage("spirv", _to_spirv, "lowering to SPIR-V"),
    Stage("spv", _serialize, "serializing SPIR-V"),
)

# An explicit kernel starts as the frontend's gpu.func (no loops to map).
KERNEL_STAGES: tuple[Stage, ...] = (
    Stage("gpu", _structure_kernel, "structuring the kernel"),
    Stage("spirv", _to_spirv, "lowering to SPIR-V"),
    Stage("spv", _serialize, "serializing SPIR-V"),
)


# A CUDA device's tail, after the same gpu stage.
_PTX = Stage("ptx", _to_ptx, "compiling to PTX", shown=_ptx_text)
CUDA_STAGES: tuple[Stage, ...] = (*STAGES[:2], Stage("nvvm", _to_nvvm, "lowering to NVVM"), _PTX)
CUDA_KERNEL_STAGES: tuple[Stage, ...] = (
    KERNEL_STAGES[0], Stage("nvvm", _kernel_to_nvvm, "lowering to NVVM"), _PTX)

# The stage tables by the name a reproducer file records (``xpuc opt --stages``).
STAGE_TABLES: dict[str, tuple[Stage, ...]] = {
    "parfor": STAGES, "kernel": KERNEL_STAGES,
    "cuda-parfor": CUDA_STAGES, "cuda-kernel": CUDA_KERNEL_STAGES,
}
# (parfor table, kernel table) by Target.family
_FAMILY_TABLES: dict[str, tuple[tuple[Stage, ...], tuple[Stage, ...]]] = {
    "sycl": (STAGES, KERNEL_STAGES),
    "cuda": (CUDA_STAGES, CUDA_KERNEL_STAGES),
}


def stages_for(target: Target, kernel: bool = False) -> tuple[Stage, ...]:
    """The stage table that lowers a parfor (or an explicit ``kernel``) for ``target``."""
    return _FAMILY_TABLES[target.family][kernel]

REPRODUCER_DIR_VARIABLE = "XPUC_REPRODUCER_DIR"
_REPRODUCER_HEADER = "// xpuc reproducer: "


def lower(module_text: str, target: Target, until: str | None = None,
          stages: tuple[Stage, ...] | None = None, keep_texts: bool = True,
          start: str | None = None) -> Lowered:
    """Run ``module_text`` through ``stages`` (the parfor table of ``target``'s
    family unless told) from ``start`` (the first stage, whose input it is,
    unless told) up to ``until`` (the last, unless told), keeping the text
    after each stage unless told not to.

    A construct the device cannot run (UnsupportedError, the user's to change)
    is refused as the stage said it, with what the stage was doing at the end
    ("while lowering to SPIR-V"). Any other failure is xpuc's own: its
    XpucError names the stage, whose input is written to a file, and ends with
    the command that reproduces the failure from it (``xpuc opt``)."""
    stages = stages or stages_for(target)
    names = [stage.name for stage in stages]
    until = until or names[-1]
    for name in (until, start or names[0]):
        if name not in names:
            raise XpucError(f"unknown stage '{name}' (stages: {', '.join(names)})")
    first, last = names.index(start or names[0]), names.index(until)
    lowered = Lowered(module_text, target, stages, until, {} if keep_texts else None)
    with _compiler().context:
        module = None
        for stage in stages[first:last + 1]:
            try:
                if module is None:
                    module = ir.Module.parse(module_text)
                module = stage.run(module, target, lowered)
                module.operation.verify()  # a stage may end with a Python rewrite
            except (ir.MLIRError, XpucError) as error:
                if isinstance(error, UnsupportedError):
                    raise UnsupportedError(f"{error} (while {stage.doing})") from None
                message = (f"internal error while {stage.doing} (the {stage.name} stage): "
                           f"{error}")
                message += _reproducer(module_text, target, stages, names[first], stage.name)
                raise XpucError(message) from error
            if keep_texts:
                lowered.texts[stage.name] = (stage.shown(module, lowered) if stage.shown
                                             else str(module))
    return lowered


def _reproducer(module_text: str, target: Target, stages: tuple[Stage, ...], start: str,
                failed: str) -> str:
    """Write the input of stage ``failed`` to a file; the command that runs
    that stage on it, as a line to end an error message with."""
    table = next((name for name, table in STAGE_TABLES.items() if table is stages), None)
    if table is None:  # a table of a test's own: no command can name it
        return ""
    names = [stage.name for stage in stages]
    previous = names[names.index(failed) - 1] if failed != start else None
    # lowering is deterministic: the stages before the failed one run again,
    # which costs nothing on the way that succeeds
    text = module_text if previous is None else lower(
        module_text, target, previous, stages, start=start).text(previous)
    directory = os.environ.get(REPRODUCER_DIR_VARIABLE) or os.path.join(
        tempfile.gettempdir(), "xpuc-reproducers")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = os.path.join(directory, f"{failed}-{digest}.mlir")
    try:
        os.makedirs(directory, exist_ok=True)
        with open(path, "w") as file:
            file.write(f"{_REPRODUCER_HEADER}{json.dumps({'stages': table, 'stage': failed})}\n"
                       f"// target: {target.to_json()}\n{text}")
    except OSError as error:
        return f"\n(no reproducer: cannot write {path}: {error})"
    return f"\nreproduce with: xpuc opt {shlex.quote(path)}"


@dataclass(frozen=True)
class StageInput:
    """A module to run one stage on, as ``xpuc opt`` reads it from a file:
    what a reproducer recorded (stage, stage table, target), or nothing."""

    text: str
    stage: str | None = None
    stages: str | None = None
    target: Target | None = None


def read_stage_input(path: str) -> StageInput:
    """A reproducer file (or any MLIR file, which records nothing)."""
    with open(path) as file:
        text = file.read()
    if not text.startswith(_REPRODUCER_HEADER):
        return StageInput(text)
    header, target_line, module_text = text.split("\n", 2)
    recorded = json.loads(header[len(_REPRODUCER_HEADER):])
    target = Target.from_json(target_line.removeprefix("// target: "))
    return StageInput(module_text, recorded["stage"], recorded["stages"], target)
