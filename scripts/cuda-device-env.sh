# Sourced by scripts/cuda-device-tests.sh and scripts/cuda-device-suite.sh on a
# machine with an NVIDIA GPU and no dpctl: unpacks the MLIR bindings that
# scripts/build-mlir-archive.sh packed into a temporary folder (removed on
# exit) with the checkout's compiler/ beside them as xpuc, builds the runtime
# with its CUDA backend only (cmake -DXPUC_SYCL=OFF), and puts the folder on
# PYTHONPATH.
#
# usage: source scripts/cuda-device-env.sh [ARCHIVE]
#        (ARCHIVE default .cuda-device/mlir-cp312.tar.xz)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
archive=${1:-$root/.cuda-device/mlir-cp312.tar.xz}
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
tar -C "$site" -xJf "$archive"
ln -s "$root/compiler" "$site/xpuc"
cmake -S "$root" -B "$root/build/cuda" -DXPUC_SYCL=OFF -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$root/build/cuda" > /dev/null
cp "$root/build/cuda/libxpuc_cuda.so" "$root/build/cuda/libxpuc_runtime.so" "$root/compiler/"
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
cd "$root"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
