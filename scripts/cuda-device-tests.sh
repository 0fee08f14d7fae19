#!/usr/bin/env bash
# xpuc's CUDA tests on a machine with an NVIDIA GPU, in one command, from the
# repository's root: sets up as scripts/cuda-device-env.sh says (the MLIR
# bindings unpacked, the runtime built with its CUDA backend only), then runs
# the tests marked cuda (tests/test_cuda_runtime.py, test_cuda_jit.py,
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
# shellcheck source=scripts/cuda-device-env.sh
source "$(dirname "$0")/cuda-device-env.sh" "${1:-}"
shift $(($# > 0 ? 1 : 0))
python3 -m pytest -q -rs --noconftest -p no:cacheprovider tests/test_cuda_runtime.py \
    tests/test_cuda_jit.py tests/test_cuda_placement.py tests/test_cuda_reductions.py \
    tests/test_same_kernels.py tests/test_without_sycl.py "$@"
