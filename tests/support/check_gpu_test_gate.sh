#!/usr/bin/env bash
# GT_REQUIRE_GPU's three answers (tests/support/gpu_test.hpp), shown with one GPU test of the test binary on any
# machine, a GPU machine included (a ctest test runs this):
#   - skipped, with the reason, where CUDA sees no GPU (CUDA_VISIBLE_DEVICES empty, or no driver at all);
#   - failed, naming the reason, where a libcuda.so.1 loads that CUDA cannot use: the toolkit's stub library stands in
#     for a driver older than the runtime, which a skip would hide;
#   - failed where GEMMTUNE_REQUIRE_GPU=1 forbids the skip.
#
#   tests/support/check_gpu_test_gate.sh GEMMTUNE_TESTS STUB_LIBCUDA
#
# Exit code: 0 every answer is the expected one; 1 one is not (printed with the test's output).
set -uo pipefail
tests=$1 stub=$2
[[ -e $stub ]] || { echo "FAIL: no stub libcuda at $stub (CUDAToolkit_LIBRARY_DIR/stubs of the build)"; exit 1; }
gpu_test=DevicesCli.WithAGpuPrintsItsDeviceKey
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
ln -s "$stub" "$scratch/libcuda.so.1"

failures=0
# expect RESULT PATTERN NAME=VALUE...: the GPU test, run with those variables, ends as RESULT (SKIPPED or FAILED) and
# says PATTERN (an extended regex).
expect() {
  local result=$1 pattern=$2 output status
  shift 2
  output=$(env "$@" "$tests" --gtest_filter="$gpu_test" 2>&1)
  status=$?
  local want_status=0
  [[ $result == FAILED ]] && want_status=1
  if [[ $status -eq $want_status ]] && grep -qF "[  $result" <<<"$output" && grep -qE "$pattern" <<<"$output"; then
    echo "ok: $* -> $result ($pattern)"
  else
    echo "FAIL: $* -> exit $status, expected $result ($pattern); its output:"
    echo "$output"
    failures=$((failures + 1))
  fi
}

expect SKIPPED "GPU test skipped:" CUDA_VISIBLE_DEVICES= GEMMTUNE_REQUIRE_GPU=0
expect FAILED "GEMMTUNE_REQUIRE_GPU is set, so this GPU test fails where it would skip" \
  CUDA_VISIBLE_DEVICES= GEMMTUNE_REQUIRE_GPU=1
expect FAILED "this GPU test cannot run: no usable CUDA GPU: .*CUDA cannot use this machine's GPU" \
  "LD_LIBRARY_PATH=$scratch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GEMMTUNE_REQUIRE_GPU=0
exit $((failures > 0))
