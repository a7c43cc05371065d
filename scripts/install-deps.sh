#!/usr/bin/env bash
# Installs what Loom needs on Debian 12, only when something is missing.
set -euo pipefail

packages=(
  cmake ninja-build ccache git
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  clang-format-22
  libclang-rt-22-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  python3 python3-dev python3-onnx python3-numpy python3-venv
  libgtest-dev openmpi-bin libopenmpi-dev
  libdnnl-dev
  libomp-dev
  libsodium-dev
  chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
fi
