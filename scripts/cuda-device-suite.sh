#!/usr/bin/env bash
# The benchmark suite on a machine with an NVIDIA GPU, in one command, from the
# repository's root (set up as scripts/cuda-device-env.sh says):
# benchmarks/bench_cuda_suite.py twice, float32 typed as NumPy 2 types it
# (XPUC_FP64=0: Python floats are float32) and float64 with Numba's typing.
# Each run writes its JSON (GPU, driver, versions, every timing) into DIR.
#
# usage: scripts/cuda-device-suite.sh [ARCHIVE] DIR [bench_cuda_suite.py arguments...]
#        e.g. scripts/cuda-device-suite.sh "" "$OUT" --repeat 5 --leave-out torch.compile
set -euo pipefail
# shellcheck source=scripts/cuda-device-env.sh
source "$(dirname "$0")/cuda-device-env.sh" "${1:-}"
results=$2
shift 2
mkdir -p "$results"
XPUC_FP64=0 python3 benchmarks/bench_cuda_suite.py --dtype float32 \
    --json "$results/suite-float32.json" "$@"
python3 benchmarks/bench_cuda_suite.py --dtype float64 --json "$results/suite-float64.json" "$@"
