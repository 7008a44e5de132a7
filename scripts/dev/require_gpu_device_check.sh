#!/usr/bin/env bash
# Issue 51 on the GPU machine, from a build made here and carried (scripts/dev/prebuilt.sh): the whole ctest suite
# with GEMMTUNE_REQUIRE_GPU=1, so no test may pass by skipping, then the deliberate trials that must fail (a stub
# driver in front of the real one; no visible device under GEMMTUNE_REQUIRE_GPU=1). The carried build's ctest files
# name this machine's build-time python3; they are pointed at this machine's python3 (the one with CUDA PyTorch).
# Logs land in OUT_DIR/require_gpu_logs.tgz; the summary prints last.
#   usage: [CTEST_ARGS=...] scripts/dev/require_gpu_device_check.sh OUT_DIR
set -uo pipefail
out=${1:?usage: scripts/dev/require_gpu_device_check.sh OUT_DIR}
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
cd "$root" || exit 2
# The carried ctest files name the build machine's python3 and CUDA stub library; point them at this machine's.
python=$(command -v python3)
stub=$(dirname "$(dirname "$(command -v nvcc)")")/lib64/stubs/libcuda.so
build_stub=$(grep -o '/[^";= ]*/stubs/libcuda.so' build/tests/CTestTestfile.cmake | head -1)
grep -rl '/usr/bin/python3' build --include=CTestTestfile.cmake | xargs -r sed -i "s#/usr/bin/python3#$python#g"
[[ -n $build_stub ]] &&
  grep -rl "$build_stub" build --include=CTestTestfile.cmake | xargs -r sed -i "s#$build_stub#$stub#g"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$work/gpu.txt"

# Two CPU tests check the build tree itself, which a carried build is not: prebuilt.sh leaves the static archives out
# (runtime_library_carries_no_tuner reads the tuner's), and the install rules name the build machine's cmake and
# Python (python.test_install). CI runs both; here they are left out by name, and the summary says so.
not_here='^(runtime_library_carries_no_tuner|python\.test_install)$'
echo "not run here (a carried build; CI runs them): runtime_library_carries_no_tuner, python.test_install" |
  tee -a "$work/summary.txt"
# shellcheck disable=SC2086 # CTEST_ARGS is a list of arguments
GEMMTUNE_REQUIRE_GPU=1 timeout 440 ctest --test-dir build -j12 --output-on-failure -E "$not_here" ${CTEST_ARGS:-} \
  >"$work/ctest.log" 2>&1
echo "ctest rc=$?" | tee -a "$work/summary.txt"
grep -E "tests passed|tests failed|Total Test time|\(Failed\)|\(Skipped\)|\(Timeout\)|Not Run" "$work/ctest.log" |
  tee -a "$work/summary.txt"

stub_dir=$(mktemp -d)
ln -s "$stub" "$stub_dir/libcuda.so.1"
LD_LIBRARY_PATH=$stub_dir build/tests/gemmtune_tests --gtest_filter='KernelRegistry.EveryVariantLaunch*' \
  >"$work/trial_stub.log" 2>&1
echo "trial: stub libcuda in front of the real driver, GPU test rc=$? (must be non-zero)" | tee -a "$work/summary.txt"
grep -m2 -E "stub|FAILED" "$work/trial_stub.log" | tee -a "$work/summary.txt"
CUDA_VISIBLE_DEVICES='' GEMMTUNE_REQUIRE_GPU=1 ctest --test-dir build -R 'SimtGemm' >"$work/trial_hidden.log" 2>&1
echo "trial: no visible device under GEMMTUNE_REQUIRE_GPU=1, rc=$? (must be non-zero)" | tee -a "$work/summary.txt"
grep -m3 -E "tests passed|Failed|Skipped" "$work/trial_hidden.log" | tee -a "$work/summary.txt"
tar -C "$work" -czf "$out/require_gpu_logs.tgz" .
