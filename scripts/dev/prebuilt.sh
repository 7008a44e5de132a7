#!/usr/bin/env bash
# A build made on the CPU machine, carried to the GPU machine, so a device call spends no minutes compiling kernels.
#   scripts/dev/prebuilt.sh pack [BUILD_DIR]     here: build/ without objects into .carry/build.tar.xz (name .carry
#                                                 in the device call's carry)
#   scripts/dev/prebuilt.sh unpack [BUILD_DIR]   there: unpacks it, then compiles the Python extension alone for that
#                                                 machine's python3 (its Python differs from the build machine's)
# The build tree keeps absolute paths (ctest, the tests' source dir), so both machines must see the repository at the
# same path; unpack links /work/main to the checkout where it differs, and stops where /work/main is another checkout.
# The binaries need only the CUDA libraries, SQLite and the C++ runtime, which the GPU machine has (ldd in unpack).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${2:-$root/build}
archive=$root/.carry/build.tar.xz

case ${1:-} in
  pack)
    mkdir -p "$root/.carry"
    # One xz stream with a dictionary larger than a binary: the kernels embedded in every executable compress once.
    tar -C "$root" --exclude='*.o' --exclude='Testing' --exclude='*.a' --exclude='.ninja_*' --exclude='CMakeFiles/3.*' \
        -cf - "$(realpath --relative-to="$root" "$build")" | xz -6 --lzma2=dict=128MiB -T1 -c >"$archive"
    ls -la "$archive"
    ;;
  unpack)
    # ln -n replaces a link but would put one inside a real directory: another checkout there is refused instead.
    if [[ $root != /work/main ]]; then
      if [[ -e /work/main && ! -L /work/main ]]; then
        echo "prebuilt: /work/main is another checkout; the carried build needs this one ($root) there" >&2
        exit 2
      fi
      mkdir -p /work && ln -sfn "$root" /work/main
    fi
    tar -C "$root" -xJf "$archive"
    if ldd "$build/gemmtune" | grep -q 'not found'; then
      ldd "$build/gemmtune" | grep 'not found' >&2
      exit 2
    fi
    # The extension alone, as pybind11_add_module builds it, over the carried libgemmtune_runtime.so.
    cuda_home=$(dirname "$(dirname "$(command -v nvcc)")")
    ext=$build/python/gemmtune/_gemmtune$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
    objs=() pids=()
    for src in "$root"/src/runtime/python/*.cpp; do
      obj=/tmp/$(basename "$src" .cpp).o
      g++ -O2 -fPIC -std=c++17 -fvisibility=hidden $(python3 -m pybind11 --includes) -I"$root/src" \
          -I"$root/src/runtime" -I"$cuda_home/include" -DGEMMTUNE_VERSION="\"$(sed -n 's/^project(gemmtune VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")\"" \
          -c "$src" -o "$obj" &
      objs+=("$obj") pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    g++ -shared -o "$ext" "${objs[@]}" -L"$build/src/runtime" -lgemmtune_runtime -L"$cuda_home/lib64" -lcudart \
        -Wl,-rpath,"$build/src/runtime:$cuda_home/lib64"
    echo "prebuilt build unpacked; Python extension: $ext"
    ;;
  *)
    echo "usage: scripts/dev/prebuilt.sh pack|unpack [BUILD_DIR]" >&2
    exit 2
    ;;
esac
