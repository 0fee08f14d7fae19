"""The ``xpuc`` command."""

from __future__ import annotations

import argparse
import sys


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
              f"[{device.device_type.name}, {fp64}, driver {device.driver_version}]")
    print("(* = default device)")
    return 0


def main(argv: list[str] | None = None) -> int:
    import xpuc  # noqa: F401  (configures the OpenCL loader before dpctl loads)

    parser = argparse.ArgumentParser(prog="xpuc", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("devices", help="list SYCL devices and the default one").set_defaults(
        run=_devices
    )
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
