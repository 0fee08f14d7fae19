"""Make the SYCL runtime from PyPI find its OpenCL CPU device. Runs before
dpctl is first imported, because devices are discovered once per process."""

import os
import sys


def configure_opencl_loader() -> None:
    # intel-opencl-rt's ICD file names a path that does not exist; point the
    # loader at the library the wheel installed, unless the user chose already
    library = os.path.join(sys.prefix, "lib", "libintelocl.so")
    if os.path.exists(library):
        os.environ.setdefault("OCL_ICD_FILENAMES", library)
