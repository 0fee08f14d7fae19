#!/usr/bin/env bash
# xpuc's CUDA tests on a machine with an NVIDIA GPU, in one command, from the
# repository's root: builds the runtime with its CUDA backend only and the
# CUDA runtime (cmake -DXPUC_SYCL=OFF: such a machine has no dpctl), unpacks the MLIR bindings that
# scripts/build-mlir-archive.sh packed, and runs the tests marked cuda
# (tests/test_cuda_runtime.py) with the driver's libcuda and CUDA's libdevice.
#
# usage: scripts/cuda-device-tests.sh [ARCHIVE] [pytest arguments...]
#        (ARCHIVE default .cuda-device/mlir-cp312.tar.xz)
#
# Until `import xpuc` works without dpctl (issue 30, item 3), the tests run
# without tests/conftest.py (it loads the SYCL runtime) and with the plugin
# scripts/xpuc_without_sycl.py, which makes xpuc's modules importable
# without the package's __init__.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
archive=${1:-$root/.cuda-device/mlir-cp312.tar.xz}
shift $(($# > 0 ? 1 : 0))
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
tar -C "$site" -xJf "$archive"
cmake -S "$root" -B "$root/build/cuda" -DXPUC_SYCL=OFF -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$root/build/cuda" > /dev/null
cp "$root/build/cuda/libxpuc_cuda.so" "$root/build/cuda/libxpuc_runtime.so" "$root/compiler/"
cd "$root"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
PYTHONPATH="$site:$root/scripts${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q -rs \
    --noconftest -p xpuc_without_sycl -p no:cacheprovider tests/test_cuda_runtime.py "$@"
