#!/usr/bin/env bash
# xpuc's CUDA tests on a machine with an NVIDIA GPU, in one command, from the
# repository's root: builds the runtime with its CUDA backend only and the
# CUDA runtime (cmake -DXPUC_SYCL=OFF: such a machine has no dpctl), unpacks
# the MLIR bindings that scripts/build-mlir-archive.sh packed, and runs the
# tests marked cuda (tests/test_cuda_runtime.py, test_cuda_jit.py,
# test_cuda_placement.py, test_cuda_reductions.py and test_same_kernels.py's
# CUDA half) with the driver's libcuda and CUDA's libdevice.
#
# usage: scripts/cuda-device-tests.sh [ARCHIVE] [pytest arguments...]
#        (ARCHIVE default .cuda-device/mlir-cp312.tar.xz)
#
# The machine has no dpctl: the tests run without tests/conftest.py (it sets
# up SYCL queues), with the checkout's compiler/ importable as xpuc. They
# include tests/test_without_sycl.py, `import xpuc` where dpctl is absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
archive=${1:-$root/.cuda-device/mlir-cp312.tar.xz}
shift $(($# > 0 ? 1 : 0))
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
tar -C "$site" -xJf "$archive"
ln -s "$root/compiler" "$site/xpuc"
cmake -S "$root" -B "$root/build/cuda" -DXPUC_SYCL=OFF -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$root/build/cuda" > /dev/null
cp "$root/build/cuda/libxpuc_cuda.so" "$root/build/cuda/libxpuc_runtime.so" "$root/compiler/"
cd "$root"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q -rs --noconftest \
    -p no:cacheprovider tests/test_cuda_runtime.py tests/test_cuda_jit.py tests/test_cuda_placement.py \
    tests/test_cuda_reductions.py tests/test_same_kernels.py \
    tests/test_without_sycl.py "$@"
