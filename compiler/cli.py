"""The ``xpuc`` command."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a command runs: the loader is set up first
    import dpctl


def _devices(args: argparse.Namespace) -> int:
    import dpctl

    try:
        default = dpctl.select_default_device()
    except dpctl.SyclDeviceCreationError:
        default = None
    devices = dpctl.get_devices()
    if not devices:
        print("no SYCL devices found", file=sys.stderr)
        return 1
    for device in devices:
        mark = "*" if default is not None and device == default else " "
        fp64 = "fp64" if device.has_aspect_fp64 else "no fp64"
        print(f"{mark} {device.filter_string:<20} {device.name} "
              f"[{device.device_type.name}, {fp64}, driver {device.driver_version}, "
              f"compute units: {device.max_compute_units}]")
        example = _sub_device_example(device)
        if example:
            print(f"  {'':<20} {example}")
    print("(* = default device)")
    return 0


def _sub_device_example(device: dpctl.SyclDevice) -> str | None:
    """A line naming one of ``device``'s sub-devices, checked to exist (a
    device has too many ways to split to list them all): a CPU's cores one by
    one, a GPU's tiles."""
    from xpuc.device import as_device
    from xpuc.errors import DeviceError

    if device.partition_max_sub_devices < 2:
        return None
    partition = "1" if device.is_cpu else "next_partitionable"
    name = f"{device.filter_string}/partition={partition}/0"
    try:
        as_device(name)
    except DeviceError:
        return None
    return (f"sub-devices: up to {device.partition_max_sub_devices}, e.g. {name} (the first "
            f"of create_sub_devices(partition={partition}))")


def _device(name: str | None, command: str) -> dpctl.SyclDevice | None:
    """The device named on the command line (None: dpctl's default), or None
    after printing why there is none."""
    import dpctl

    from xpuc.device import as_device
    from xpuc.errors import DeviceError

    try:
        return as_device(name) if name else dpctl.select_default_device()
    except (DeviceError, dpctl.SyclDeviceCreationError) as error:
        print(f"xpuc {command}: no device {name or '(default)'}: {error}", file=sys.stderr)
        return None


def _compile(args: argparse.Namespace) -> int:
    from xpuc import aot, cache

    if args.arch:
        return _compile_for_arch(args)
    device = _device(args.device, "compile")
    if device is None:
        return 1
    if not args.emit and args.output:
        # where the compiled functions go, and where a process that sets the
        # same XPUC_CACHE_DIR finds them
        os.environ[cache.CACHE_DIR_VARIABLE] = os.path.abspath(args.output)
    try:
        # compiled afresh; without --emit, stored: that is the point of it
        with cache.compiling_ahead(save=not args.emit):
            compiled = aot.compile_module(args.module, device)
    except aot.SourceError as error:
        print(error, file=sys.stderr)
        return 1
    if args.emit:
        return _emit(compiled, args)
    for function in compiled:
        print(aot.summary(function, device))
    return 0


def _emit(compiled: list, args: argparse.Namespace) -> int:
    """Write what ``--emit`` asks for: SPIR-V files, or a stage's MLIR."""
    from xpuc import aot

    if args.emit == aot.BINARY_STAGE:
        try:
            paths = aot.write_binaries(compiled, args.output)
        except OSError as error:
            print(f"xpuc compile: cannot write to {args.output}: {error}", file=sys.stderr)
            return 1
        for path in paths:
            print(path)
    else:
        sys.stdout.write(aot.emit_text(compiled, args.emit))
    return 0


def _compile_for_arch(args: argparse.Namespace) -> int:
    """``xpuc compile --arch NAME``: the kernels for an Intel or NVIDIA GPU
    architecture (no device needed); without ``--emit``, each Intel build
    made by ocloc, each NVIDIA one summed up (its PTX is the driver's to build)."""
    from xpuc import aot, cache, nvidia_gpus, ocloc, targets

    if args.arch not in targets.known_architectures():
        print(f"xpuc compile: unknown architecture '{args.arch}' (known: "
              f"{', '.join(targets.known_architectures())})", file=sys.stderr)
        return 1
    nvidia = nvidia_gpus.is_architecture(args.arch)
    if nvidia and args.emit == aot.BINARY_STAGE:
        print(f"xpuc compile --arch {args.arch}: an NVIDIA GPU runs PTX, not SPIR-V: "
              "print it with --emit ptx", file=sys.stderr)
        return 1
    found = None
    if not args.emit and not nvidia:  # before compiling: say at once that nothing can be built
        found = ocloc.find_ocloc()
        if found is None:
            print(f"xpuc compile --arch {args.arch}: builds with ocloc, Intel's GPU "
                  f"compiler, which is not found: {ocloc.HOW_TO_GET}", file=sys.stderr)
            return 1
    try:
        with cache.compiling_ahead(save=False):  # no device to keep builds for
            compiled = aot.compile_module(args.module, args.arch)
    except aot.SourceError as error:
        print(error, file=sys.stderr)
        return 1
    if args.emit:
        return _emit(compiled, args)
    if nvidia:
        for function in compiled:
            print(aot.summary(function, args.arch))
        return 0
    failed = 0
    for name, build in aot.build_for_arch(compiled, args.arch, found):
        if build.succeeded:
            print(f"{name}: built for {args.arch}")
        else:
            failed += 1
            print(f"{name}: failed for {args.arch}:\n  "
                  + build.errors.replace("\n", "\n  "))
    return 1 if failed else 0


def _opt(args: argparse.Namespace) -> int:
    from xpuc import passes, targets
    from xpuc.errors import XpucError

    try:
        found = passes.read_stage_input(args.file)
    except (OSError, ValueError) as error:
        print(f"xpuc opt: cannot read {args.file}: {error}", file=sys.stderr)
        return 1
    stage, table = args.stage or found.stage, args.stages or found.stages or "parfor"
    if stage is None:
        print(f"xpuc opt: {args.file} records no stage: name one with --stage", file=sys.stderr)
        return 1
    target = found.target
    if args.device or target is None:
        device = _device(args.device, "opt")
        if device is None:
            return 1
        target = targets.target_for(device)
    try:
        lowered = passes.lower(found.text, target, stage, passes.STAGE_TABLES[table],
                               start=stage)
    except XpucError as error:
        print(f"xpuc opt: {error}", file=sys.stderr)
        return 1
    sys.stdout.write(lowered.text(stage))
    return 0


def main(argv: list[str] | None = None) -> int:
    import xpuc  # noqa: F401  (configures the OpenCL loader before dpctl loads)
    from xpuc.aot import BINARY_STAGE
    from xpuc.passes import STAGE_TABLES

    parser = argparse.ArgumentParser(prog="xpuc", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("devices", help="list SYCL devices and the default one").set_defaults(
        run=_devices
    )
    compile_parser = commands.add_parser(
        "compile", help="compile the xpuc.jit functions of a file for their explicit signatures"
    )
    compile_parser.add_argument("module", help="the Python file to compile")
    where = compile_parser.add_mutually_exclusive_group()
    where.add_argument("--device", help="a SYCL filter string or sub-device name "
                                        "(default: dpctl's default)")
    where.add_argument("--arch", help="an Intel GPU architecture as ocloc names it (pvc, dg2, "
                                      "acm-g10, tgllp, adlp, adls) or an NVIDIA one as ptxas "
                                      "does (sm_75 ... sm_120), compiled for without the GPU; "
                                      "without --emit, each Intel kernel is built with ocloc")
    compile_parser.add_argument(
        "--emit", choices=list(dict.fromkeys(stage.name for table in STAGE_TABLES.values()
                                              for stage in table)),
        help=f"print the MLIR of a stage (a CUDA device's ptx stage: its PTX), or write "
             f"SPIR-V binaries with {BINARY_STAGE}",
    )
    compile_parser.add_argument(
        "-o", dest="output", metavar="DIR",
        help=f"where --emit {BINARY_STAGE} writes its files; without --emit, the cache "
             "directory to fill (read back through XPUC_CACHE_DIR=DIR)")
    compile_parser.set_defaults(run=_compile)
    opt_parser = commands.add_parser(
        "opt", help="run one lowering stage on an MLIR file (a failed stage's reproducer)")
    opt_parser.add_argument("file", help="the stage's input: MLIR text")
    opt_parser.add_argument("--stage", help="the stage to run (default: the reproducer's)")
    opt_parser.add_argument("--stages", choices=list(STAGE_TABLES),
                            help="the stage table: a parfor's or an explicit kernel's "
                                 "(default: the reproducer's, else parfor)")
    opt_parser.add_argument("--device", help="the device to generate code for (default: the "
                                             "reproducer's target, else dpctl's default)")
    opt_parser.set_defaults(run=_opt)
    args = parser.parse_args(argv)
    if args.command == "compile" and args.emit == BINARY_STAGE and args.output is None:
        compile_parser.error(f"--emit {BINARY_STAGE} needs -o DIR")
    if args.command == "compile" and args.emit not in (None, BINARY_STAGE) and args.output:
        compile_parser.error(f"-o DIR goes with --emit {BINARY_STAGE} or no --emit")
    if args.command == "compile" and args.arch and args.output and not args.emit:
        compile_parser.error(f"--arch fills no cache: -o DIR goes with --emit {BINARY_STAGE}")
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
