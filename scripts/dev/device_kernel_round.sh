#!/usr/bin/env bash
# One round of kernel work on the GPU machine: GPU tests of kernels/, compute-sanitizer memcheck and racecheck over
# every variant, the dev timing loop, and (KERNEL_ROUND_NCU=1) an ncu look at the largest tf32 and fp32 variants.
# Expects prebuilt binaries in $1 (gemmtune_tests, bench_own_kernels); logs to $OUT.
set -uo pipefail
bin=${1:?usage: device_kernel_round.sh BIN_DIR}
out=${OUT:-/tmp/kernel_round}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$out/gpu.txt"

filter='Philox*:Dropout*:Activation*:EpilogueParams*:KernelRegistry*:ReferenceGemm*:EpilogueKernel*:SimtGemm*:Mma*:Wgmma*'
timeout 200 "$bin/gemmtune_tests" --gtest_filter="$filter" > "$out/tests.txt" 2>&1
echo "tests rc=$?"
grep -E "checked|FAILED|PASSED|Failure" "$out/tests.txt" | cut -c1-160

for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool "$tool" "$bin/gemmtune_tests" \
    --gtest_filter='KernelRegistry.EveryVariantLaunchIsCapturableInACudaGraph' > "$out/sanitizer_$tool.txt" 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer_$tool.txt")"
done

timeout 200 "$bin/bench_own_kernels" > "$out/bench.txt" 2>&1
echo "bench rc=$?"

profile() {  # $1: label, $2: regex on the mangled kernel name, $3: bench size
  timeout 90 ncu --clock-control none --kernel-name-base mangled --kernel-name "regex:$2" --launch-skip 2 \
    --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section Occupancy "$bin/bench_own_kernels" "$3" > "$out/ncu_$1.txt" 2>&1
  echo "ncu $1 rc=$?"
}
if [[ "${KERNEL_ROUND_NCU:-0}" == 1 ]]; then
profile tf32_128x128x32_nn 'mma_gemm_kernel.*TileILi128ELi128ELi32ELi64ELi64ELi0ELi0ELi3EEELb0ELb1ELb0' 2048
profile fp32_128x128x16_nn 'simt_gemm_kernel.*TileILi128ELi128ELi16ELi32ELi64' 2048
for f in "$out"/ncu_*.txt; do
  echo "== $f"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Stall|Achieved Occupancy|Registers Per|Theoretical Occ|Bank" "$f" | head -30
done
fi
tf32_kernel=_ZN8gemmtune7kernels15mma_gemm_kernelINS0_4TileILi128ELi128ELi32ELi64ELi64ELi0ELi0ELi3EEELb0ELb1ELb0EEEvNS0_11OperandViewES4_NS0_14EpilogueParamsE
cuobjdump -sass -fun "$tf32_kernel" "$bin/bench_own_kernels" > "$out/sass_tf32_128x128x32_nn.txt" 2>&1
echo "sass rc=$? lines $(wc -l < "$out/sass_tf32_128x128x32_nn.txt")"
grep -oE "(HMMA|LDSM|LDS|LDGSTS|F2F|BAR|DEPBAR|STS|STG|LDG)[.A-Z0-9]*" "$out/sass_tf32_128x128x32_nn.txt" | sort | uniq -c
grep -A20 summary "$out/bench.txt"
