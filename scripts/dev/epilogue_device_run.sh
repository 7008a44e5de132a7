#!/usr/bin/env bash
# One device call of the fused-epilogue work (kernels/PERFORMANCE.md): build, optionally the GPU kernel tests, the
# dev_epilogue sweep (own against cuBLASLt, CUPTI), and ncu on one own variant at 4096x4096x256 with epilogue none
# against bias+gelu, to tell whether the kernel is bound by its epilogue. Logs go to $OUT; a summary prints last.
# Usage: epilogue_device_run.sh [--tests] [--variant NAME]... [--also PROFILE MODES] (a second sweep, at most 240 s)
set -uo pipefail
out=${OUT:-/tmp/epilogue_run}
mkdir -p "$out"
tests=0
variants=()
also_profile=""
also_modes=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --tests) tests=1 ;;
    --variant) variants+=("$2"); shift ;;
    --also) also_profile=$2; also_modes=$3; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[[ ${#variants[@]} -gt 0 ]] || variants=(wgmma_tf32_256x128x32_s4)

bash scripts/dev/device_build.sh >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
summary=()
if [[ $tests == 1 ]]; then
  build/tests/gemmtune_tests --gtest_filter='Philox*:Dropout*:Activation*:EpilogueParams*:KernelRegistry*:ReferenceGemm*:EpilogueKernel*:SimtGemm*:Mma*:Wgmma*' \
    >"$out/tests.log" 2>&1
  summary+=("tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/tests.log" | tr '\n' ' ')")
fi

build/gemmtune sweep --profile profiles/dev_epilogue.json --modes tf32 --backends own,lt --no-db \
  --json "$out/sweep.json" >"$out/sweep.log" 2>&1
summary+=("sweep rc=$?")

if [[ -n $also_profile ]]; then
  timeout 240 build/gemmtune sweep --profile "$also_profile" --modes "$also_modes" --backends own,lt --no-db \
    --json "$out/also.json" >"$out/also.log" 2>&1
  summary+=("sweep $also_profile rc=$?")
fi

ncu=/usr/local/cuda/bin/ncu
for v in "${variants[@]}"; do
  for epi in none gelu; do
    args=(--m 4096 --n 4096 --k 256 --mode tf32 --candidate "own/$v" --iters 3 --warmup 3)
    [[ $epi == gelu ]] && args+=(--bias --act gelu)
    $ncu --clock-control none --kernel-name regex:wgmma_tf32 --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats \
      --section Occupancy --section SchedulerStats build/gemmtune run "${args[@]}" >>"$out/ncu.log" 2>&1
    summary+=("ncu $v $epi rc=$?")
  done
done

echo "=== sweep"
sed -n '/^problem/,$p' "$out/sweep.log"
echo "=== own best against cuBLASLt best"
python3 scripts/dev/sweep_best.py "$out/sweep.json" $([[ -f $out/also.json ]] && echo "$out/also.json") || true
echo "=== ncu duration / throughput"
grep -E "^  [a-z_]+|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Executed Ipc Active|No Eligible|Registers Per|Achieved Occupancy" "$out/ncu.log" | grep -v "^  ==" | head -60
printf '%s\n' "${summary[@]}"
