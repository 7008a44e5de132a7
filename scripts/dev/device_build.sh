#!/usr/bin/env bash
# Builds gemmtune on a GPU machine that has the CUDA toolkit, CMake and the libraries but no SQLite headers and no
# network (the lent H100: see DEVICE notes). Run scripts/dev/fetch_sqlite_headers.sh on a networked machine first and
# bring its .deps/ along. Builds sm_90 only: that is the machine the numbers are for.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
sqlite_args=()
if [[ -f $root/.deps/sqlite/usr/include/sqlite3.h ]]; then
  sqlite_args=(-DSQLite3_INCLUDE_DIR="$root/.deps/sqlite/usr/include" -DSQLite3_LIBRARY=/lib/x86_64-linux-gnu/libsqlite3.so.0)
fi
# The Python package: pybind11 is there only as a pip package of the machine's python3; build for that interpreter.
python_args=()
if pybind11_dir=$(python3 -m pybind11 --cmakedir 2>/dev/null); then
  python_args=(-Dpybind11_DIR="$pybind11_dir" -DPython_EXECUTABLE="$(command -v python3)")
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" \
  "${sqlite_args[@]}" "${python_args[@]}" ${CMAKE_EXTRA_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
