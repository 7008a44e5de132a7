#!/usr/bin/env bash
# One device call that builds, tests and sweeps two versions of kernels/wgmma_gemm.cuh (the wgmma kernels) side by side: the working
# tree's, then the one in .epi_b/ (an ignored, carried folder). Keeps 3 files per version under $OUT (tests log, the
# dev_epilogue sweep, the dev_epilogue_large sweep) and prints the own-against-cuBLASLt tables last.
set -uo pipefail
out=${OUT:-/tmp/epilogue_ab}
mkdir -p "$out"
filter='Philox*:Dropout*:Activation*:EpilogueParams*:KernelRegistry*:ReferenceGemm*:EpilogueKernel*:SimtGemm*:Mma*:Wgmma*'
summary=()
run_version() {
  local name=$1
  bash scripts/dev/device_build.sh >/tmp/build_$name.log 2>&1 || { tail -30 /tmp/build_$name.log; summary+=("$name build failed"); return; }
  build/tests/gemmtune_tests --gtest_filter="$filter" >"$out/${name}_tests.log" 2>&1
  summary+=("$name tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/${name}_tests.log" | tr '\n' ' ')")
  build/gemmtune sweep --profile profiles/dev_epilogue.json --modes tf32 --backends own,lt --no-db \
    --json "$out/${name}_sweep.json" >/tmp/sweep_$name.log 2>&1
  summary+=("$name sweep rc=$?")
  timeout 100 build/gemmtune sweep --profile profiles/dev_epilogue_large.json --modes tf32 --backends own,lt --no-db \
    --json "$out/${name}_large.json" >/tmp/large_$name.log 2>&1
  summary+=("$name large sweep rc=$?")
}
run_version a
cp .epi_b/wgmma_gemm.cuh kernels/wgmma_gemm.cuh
run_version b
for name in a b; do
  echo "=== version $name"
  python3 scripts/dev/sweep_best.py "$out/${name}_sweep.json" "$out/${name}_large.json" || true
done
printf '%s\n' "${summary[@]}"
