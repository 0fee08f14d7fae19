#!/usr/bin/env bash
# Intel's offline GPU compiler, ocloc, unpacked into a private folder (default:
# .ocloc/ in the repository) from Debian's packages: `apt-get download` and
# `dpkg -x`, no root, nothing installed system-wide (the package's OpenCL ICD
# would otherwise join the device list). xpuc finds it there (or through
# XPUC_OCLOC=/path/to/ocloc) for `xpuc compile --arch` and the tests.
# Usage: scripts/get-ocloc.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dest=$(realpath -m "${1:-.ocloc}")

# ocloc and the libraries it loads: Intel's graphics compiler (IGC) and its
# OpenCL C front end, on LLVM 14 with the SPIR-V reader
packages=(intel-opencl-icd libigc1 libigdfcl1 libigdgmm12 libopencl-clang14
          libllvm14 libllvmspirvlib14)

if [ -x "$dest/usr/bin/ocloc" ]; then
    echo "ocloc already in $dest/usr/bin"
    exit 0
fi
debs=$(mktemp -d "${TMPDIR:-/tmp}/xpuc-ocloc.XXXXXX")
trap 'rm -rf "$debs"' EXIT
echo "+ apt-get download ${packages[*]}"
(cd "$debs" && apt-get download "${packages[@]}")
mkdir -p "$dest"
for deb in "$debs"/*.deb; do
    dpkg -x "$deb" "$dest"
done
echo "ocloc: $dest/usr/bin/ocloc"
