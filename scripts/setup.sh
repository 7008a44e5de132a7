#!/usr/bin/env bash
# Shared set-up for run.sh and test.sh: install what a fresh Debian/Ubuntu machine with the CUDA toolkit lacks,
# then configure and build into build/. Sourced, not run.
set -euo pipefail

GEMMTUNE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$GEMMTUNE_ROOT/build}

# Debian/Ubuntu package names of everything the build and the tests need (the CUDA toolkit is a prerequisite).
# pybind11-dev and python3-dev build the Python package; python3-torch (CPU-only) lets gemmtune.torch's CPU tests run.
PACKAGES=(cmake ninja-build g++ libsqlite3-dev nlohmann-json3-dev libcli11-dev libgtest-dev python3 python3-matplotlib clang
          pybind11-dev python3-dev python3-torch)

install_missing_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  # A machine with no package registry (the lent GPU machine) that has the headers some other way: build as it is.
  if [[ ${GEMMTUNE_OFFLINE:-0} == 1 ]]; then
    echo "gemmtune: GEMMTUNE_OFFLINE=1: not installing ${missing[*]}; building with what this machine has" >&2
    return 0
  fi
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  if ! command -v apt-get >/dev/null; then
    echo "gemmtune: missing packages (${missing[*]}) and no apt-get to install them" >&2
    exit 2
  fi
  echo "gemmtune: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  # No recommends: python3-torch's alone would add 50 packages (Qt, VA drivers) that no test uses.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

find_nvcc() {
  if ! command -v nvcc >/dev/null; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
      [[ -x $d/nvcc ]] && export PATH="$d:$PATH" && break
    done
  fi
  command -v nvcc >/dev/null || { echo "gemmtune: nvcc not found: install the CUDA toolkit (12.x or 13.x)" >&2; exit 2; }
}

# CUDA_ARCHS: which GPUs to build machine code for; defaults to the CMake default (sm_80, 86, 89, 90).
configure_and_build() {
  local archs=()
  [[ -n ${CUDA_ARCHS:-} ]] && archs=(-DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS")
  cmake -S "$GEMMTUNE_ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${archs[@]}" ${CMAKE_EXTRA_ARGS:-}
  cmake --build "$BUILD_DIR" -j "$(nproc)"
}

install_missing_packages
find_nvcc
configure_and_build
