#!/usr/bin/env bash
# Builds gemmtune and runs the whole test suite through ctest. Without a GPU every GPU test is reported as
# skipped, with its reason; everything else (db, profiles, gate, command generation, CLI errors) still runs. Where a
# GPU is there that CUDA cannot use, the GPU tests fail; GEMMTUNE_REQUIRE_GPU=1 fails every skip of one too
# (docs/install.md, "Tests").
set -euo pipefail
# Without a GPU no kernel runs, so one architecture per kind of source path is machine code enough: sm_80 (sm_86 and
# sm_89 compile the very same paths, whose only architecture guards are at 9.0, and run sm_80's code) and sm_90 (with
# the wgmma family's 90a). Half of the kernels' compile time on CI's two cores, where it was most of a 68-minute run.
# With a GPU here, or CUDA_ARCHS set, the build is the one it would be.
if [[ -z ${CUDA_ARCHS:-} ]] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  export CUDA_ARCHS="80;90"
fi
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
# Every reader of outside input under libFuzzer for a bounded time (GEMMTUNE_FUZZ_SECONDS per target, 0 skips),
# after its regression inputs; needs clang (tests/fuzz/CMakeLists.txt). First, so that ctest's summary is the last
# thing CI prints.
fuzz_seconds=${GEMMTUNE_FUZZ_SECONDS:-20}
if [[ $fuzz_seconds -gt 0 ]]; then
  "$GEMMTUNE_ROOT/scripts/fuzz.sh" "$fuzz_seconds"
fi
# ctest lists skipped tests by name only; each printed why, and on a machine without a GPU the reason is this one.
if ! reason=$("$BUILD_DIR/gemmtune" devices 2>&1 >/dev/null); then
  echo "No usable GPU: the GPU tests will be reported as Skipped, or as Failed where a driver is there or" \
    "GEMMTUNE_REQUIRE_GPU=1 (${reason#gemmtune: error: })"
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
