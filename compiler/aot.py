"""Ahead-of-time compilation of the ``xpuc.jit`` functions and ``xpuc.kernel``
kernels of a source file, for ``xpuc compile``: every explicit signature of
every one defined in the file is compiled for one device, exactly as a first
call (or launch) on that device would compile it."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from numba.core.errors import NumbaError

from . import ocloc
from .device import describe, device_name
from .dispatcher import JitFunction
from .errors import XpucError
from .explicit_kernels import KernelFunction
from .frontend import CompiledParfor
from .passes import STAGES, Lowered

if TYPE_CHECKING:  # a SYCL device is named only where dpctl is: --arch sm_90 needs none
    import dpctl

# the last stage serializes the kernels (``Lowered.spirv``); for the others,
# --emit prints the MLIR text they leave
BINARY_STAGE = STAGES[-1].name


class SourceError(XpucError):
    """An error in the compiled file; the message starts with ``file:line:``."""


@dataclass
class CompiledSignature:
    signature: str  # the argument types, as Numba spells them
    parfors: list[CompiledParfor]


@dataclass
class Emitted:
    """One module ``--emit`` shows: the comment line before it, what lowering
    kept, and the kernels its SPIR-V holds."""

    header: str
    lowered: Lowered
    kernel_names: list[str]


@dataclass
class CompiledFunction:
    function: JitFunction
    signatures: list[CompiledSignature]

    @property
    def qualname(self) -> str:
        return self.function.py_func.__qualname__

    def emitted(self) -> list[Emitted | str]:
        """Each parfor's module, or a note for a signature without parfors."""
        found = []
        for signature in self.signatures:
            if not signature.parfors:
                found.append(f"// xpuc: function {self.qualname} signature "
                             f"{signature.signature} has no parfors\n")
            found += [Emitted(header(self, signature, parfor), parfor.lowered,
                              [launch.kernel_name for launch in parfor.lowered.plan.launches])
                      for parfor in signature.parfors]
        return found


@dataclass
class CompiledKernel:
    function: KernelFunction
    signatures: list[tuple[str, Lowered, str]]  # (argument types, lowered, kernel name)

    @property
    def qualname(self) -> str:
        return self.function.py_func.__qualname__

    def emitted(self) -> list[Emitted | str]:
        return [Emitted(f"// xpuc: kernel {self.qualname} signature {signature} range "
                        f"{self.function.ndim}-D", lowered, [name])
                for signature, lowered, name in self.signatures]


# a message that already says where (as UnsupportedError's do)
_LOCATED = re.compile(r"[^\s:][^:\n]*:\d+: ")


def _line_in(path: str, error: BaseException) -> int | None:
    """The innermost line of ``path`` in ``error``'s traceback."""
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
             if frame.filename == path]
    return lines[-1] if lines else None


def _located(path: str, line: int | None, error: BaseException) -> SourceError:
    where = f"{path}:{line}" if line is not None else path
    return SourceError(f"{where}: {type(error).__name__}: {str(error).strip()}")


def load_module(path: str) -> dict[str, Any]:
    """Import the file at ``path`` as a module (not as ``__main__``) and return
    its globals; any exception it raises becomes a SourceError."""
    if not os.path.isfile(path):
        raise SourceError(f"{path}: {'not a file' if os.path.exists(path) else 'no such file'}")
    directory = os.path.dirname(os.path.abspath(path))
    # as ``python path`` would, so that the file can import its neighbours
    sys.path.insert(0, directory)
    # imported under the name ``import`` gives it (the file's stem), as the
    # builds it stores refer to their module by name
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        return vars(module)
    except SyntaxError as error:
        raise SourceError(f"{error.filename}:{error.lineno}: SyntaxError: {error.msg}") from None
    except NumbaError as error:  # typing, by the eager CPU compile of a signature
        if error.loc is not None:
            raise _located(error.loc.filename, error.loc.line, error) from None
        raise _located(path, _line_in(path, error), error) from None
    except Exception as error:  # noqa: BLE001 (whatever the file raises, it failed to load)
        raise _located(path, _line_in(path, error), error) from None
    finally:
        sys.path.remove(directory)


def jit_functions(namespace: dict[str, Any], path: str) -> list[JitFunction | KernelFunction]:
    """The ``xpuc.jit`` functions and kernels defined in ``path`` (not imported
    into it), once each, in definition order."""
    found = {id(value): value for value in namespace.values()
             if isinstance(value, (JitFunction, KernelFunction))
             and value.py_func.__code__.co_filename == path}
    return sorted(found.values(), key=lambda fn: fn.py_func.__code__.co_firstlineno)


def _function_error(fn: JitFunction | KernelFunction, error: BaseException) -> SourceError:
    code = fn.py_func.__code__
    if isinstance(error, NumbaError) and error.loc is not None:
        return _located(error.loc.filename, error.loc.line, error)
    message = str(error).strip()
    if _LOCATED.match(message):
        return SourceError(message)
    return SourceError(f"{code.co_filename}:{code.co_firstlineno}: "
                       f"{fn.py_func.__qualname__}: {message}")


def compile_function(fn: JitFunction, device: dpctl.SyclDevice | str) -> CompiledFunction:
    """Compile each explicit signature of ``fn`` for ``device`` (or the Intel
    GPU architecture it names)."""
    if fn._options.get("parallel", True) is False:
        code = fn.py_func.__code__
        raise SourceError(f"{code.co_filename}:{code.co_firstlineno}: {fn.py_func.__qualname__} "
                          "was given parallel=False, so it never offloads")
    try:
        # built with explicit signatures, the dispatcher compiles them eagerly
        dispatcher, offload = fn._for_device(device)
    except (NumbaError, XpucError) as error:
        raise _function_error(fn, error) from None
    return CompiledFunction(fn, [
        CompiledSignature(f"({', '.join(map(str, argtypes))})",
                          offload.compiled.get(tuple(argtypes), []))
        for argtypes in dispatcher.signatures
    ])


def compile_kernel(fn: KernelFunction, device: dpctl.SyclDevice | str) -> CompiledKernel:
    """Compile each explicit signature of kernel ``fn`` for ``device``."""
    compiled = []
    for argtypes in fn.signatures:
        try:
            kernel = fn.compile(argtypes, fn.ndim, device)
        except (NumbaError, XpucError) as error:
            raise _function_error(fn, error) from None
        compiled.append((f"({', '.join(map(str, argtypes))})", kernel.lowered,
                         kernel.module.name))
    return CompiledKernel(fn, compiled)


def _has_signatures(fn: JitFunction | KernelFunction) -> bool:
    return bool(fn.signatures if isinstance(fn, KernelFunction) else fn._signatures)


def compile_module(path: str, device: dpctl.SyclDevice | str
                   ) -> list[CompiledFunction | CompiledKernel]:
    """Compile every ``xpuc.jit`` function and ``xpuc.kernel`` of ``path`` that
    has explicit signatures, for ``device`` or the Intel GPU architecture it
    names (``dg2``); a file without any is a SourceError. Those without
    signatures are named on stderr and skipped."""
    # as ``import`` names the file: the cache's source stamp includes the path
    path = os.path.abspath(path)
    functions = jit_functions(load_module(path), path)
    for fn in functions:
        if not _has_signatures(fn):
            print(f"{path}:{fn.py_func.__code__.co_firstlineno}: note: {fn.py_func.__qualname__} "
                  "has no explicit signatures, not compiled", file=sys.stderr)
    with_signatures = [fn for fn in functions if _has_signatures(fn)]
    if not with_signatures:
        raise SourceError(
            f"{path}: no xpuc.jit function with explicit signatures to compile "
            '(give them as in @xpuc.jit("float64[::1](float64[::1])"))'
        )
    return [compile_kernel(fn, device) if isinstance(fn, KernelFunction)
            else compile_function(fn, device) for fn in with_signatures]


def header(function: CompiledFunction, signature: CompiledSignature,
           parfor: CompiledParfor) -> str:
    """The comment line that precedes each parfor's MLIR in ``--emit`` output."""
    return (f"// xpuc: function {function.qualname} signature {signature.signature} "
            f"parfor {parfor.kernel.name}")


def emit_text(compiled: list[CompiledFunction | CompiledKernel], stage: str) -> str:
    """The MLIR of ``stage`` for every parfor and kernel, each after its header
    line (an explicit kernel starts at the gpu stage: it has no linalg form)."""
    parts = []
    for function in compiled:
        for emitted in function.emitted():
            if isinstance(emitted, str):
                parts.append(emitted)
            elif emitted.lowered.has_stage(stage):
                parts.append(f"{emitted.header}\n{emitted.lowered.text(stage)}")
            else:
                parts.append(f"{emitted.header} has no {stage} stage\n")
    return "".join(parts)


def write_binaries(compiled: list[CompiledFunction | CompiledKernel], directory: str) -> list[str]:
    """Write each kernel's SPIR-V module to ``directory``/``<kernel name>.spv``
    and return the paths. The kernels of a function's signatures share names,
    so a repeated name gets a counter: ``<kernel name>.1.spv``."""
    os.makedirs(directory, exist_ok=True)
    paths, seen = [], {}
    for function in compiled:
        for emitted in function.emitted():
            if isinstance(emitted, str):
                continue
            for name in emitted.kernel_names:
                repeat = seen.get(name, 0)
                seen[name] = repeat + 1
                path = os.path.join(directory, f"{name}.{repeat}.spv" if repeat else f"{name}.spv")
                with open(path, "wb") as out:
                    out.write(emitted.lowered.spirv)
                paths.append(path)
    return paths


def build_for_arch(compiled: list[CompiledFunction | CompiledKernel], arch: str,
                   ocloc_path: str) -> list[tuple[str, ocloc.Build]]:
    """Build each SPIR-V module of ``compiled`` for Intel GPU architecture
    ``arch`` with ocloc: ``(what it holds, the build)`` for each."""
    modules = [(f"{function.qualname} ({', '.join(emitted.kernel_names)})",
                emitted.lowered.spirv)
               for function in compiled for emitted in function.emitted()
               if not isinstance(emitted, str) and emitted.lowered.spirv]
    builds = ocloc.build_many(ocloc_path, [(spirv, arch) for _, spirv in modules])
    return [(name, build) for (name, _), build in zip(modules, builds)]


def summary(function: CompiledFunction | CompiledKernel, device: dpctl.SyclDevice | str) -> str:
    """One line saying what compiling ``function`` for ``device`` (or the
    architecture it names) produced."""
    kernels = [name for emitted in function.emitted() if not isinstance(emitted, str)
               for name in emitted.kernel_names]
    count = len(function.signatures)
    return (f"{function.qualname}: {count} signature{'s' if count != 1 else ''}, "
            f"{len(kernels)} kernel{'s' if len(kernels) != 1 else ''} for "
            f"{device if isinstance(device, str) else device_name(device) or describe(device)}"
            + (f" ({', '.join(kernels)})" if kernels else ""))
