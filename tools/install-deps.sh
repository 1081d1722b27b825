#!/usr/bin/env bash
# Installs the Debian packages Mimic builds and tests with, if any are missing.
#   install-deps.sh          what the build and the tests need
#   install-deps.sh --bench  also what the benchmarks need: OpenMP for clang, OpenCL and PoCL
#                            (bench/kernels), LibTorch (ppo_torch of bench/ppo; a large install)
# Safe to run repeatedly; needs root (or sudo) only when something is missing.
set -euo pipefail
packages=(
  cmake ninja-build ccache pkg-config
  clang-22 lld-22 libclang-rt-22-dev
  llvm-22-dev liblld-22-dev
  liblz4-dev libzstd-dev libgtest-dev
  libopenblas-dev
)
bench_packages=(
  libomp-22-dev
  ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
  libtorch-dev
)
case "${1:-}" in
  --bench) packages+=("${bench_packages[@]}") ;;
  "") ;;
  *) echo "usage: install-deps.sh [--bench]" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
