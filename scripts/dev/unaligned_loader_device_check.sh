#!/usr/bin/env bash
# Issue 49 on the GPU machine, from a build made here and carried (scripts/dev/prebuilt.sh): the kernel families'
# GPU tests (every variant against fp64, unaligned rows among the shapes), then two sweeps whose best candidates
# scripts/dev/sweep_peak_share.py prints: the four unaligned shapes of scripts/dev/unaligned_sweep_profile.json beside the
# committed results/nvidia-h200/unaligned_sweep.json, seed 4911's eight both-unaligned held-out shapes in nn and nt
# (scripts/dev/unaligned_heldout_profile.json), and the decode shapes of decode_unaligned_profile.json and of
# decode_large_profile.json (GPT-2's vocabulary head, an aligned FFN weight; cold L2, % of DRAM bandwidth). Logs and
# sweep JSONs land in OUT_DIR; the summary prints last.
#   usage: scripts/dev/unaligned_loader_device_check.sh OUT_DIR
set -uo pipefail
out=${1:?usage: scripts/dev/unaligned_loader_device_check.sh OUT_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
cd "$root" || exit 2
export GEMMTUNE_DATA_DIR=$root
run() { scripts/dev/on_gpu.sh 0 "$@"; }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee "$work/gpu.txt"
GEMMTUNE_REQUIRE_GPU=1 run gtest_kernels 300 "$work" build/tests/gemmtune_tests \
  --gtest_filter='WgmmaGemm*:*/WgmmaGemm*:MmaTf32Gemm.*:Mma3xTf32Gemm.*:SkinnyGemm.*:KernelRegistry.*:SimtGemm.*'
# Spills: any wgmma kernel with a stack frame (the cp.async producer runs at 40 registers)
cuobjdump --dump-resource-usage build/src/runtime/libgemmtune_runtime.so 2>/dev/null | grep -A1 "Function" |
  paste - - | grep -v "STACK:0 " | sed 's/^.*Function \([^:]*\):.*REG:\([0-9]*\).*STACK:\([0-9]*\).*/\1 REG \2 STACK \3/' | head
grep -h "^\[  PASSED\|^\[  FAILED\|^\[  SKIPPED\|tests ran" "$work/gtest_kernels.log" | head -20
run sweep_unaligned 200 "$work" build/gemmtune sweep --profile scripts/dev/unaligned_sweep_profile.json \
  --db "$work/unaligned.db" --json "$out/unaligned_sweep.json"
python3 scripts/dev/sweep_peak_share.py "$out/unaligned_sweep.json" --before results/nvidia-h200/unaligned_sweep.json
run sweep_unaligned_heldout 300 "$work" build/gemmtune sweep --profile scripts/dev/unaligned_heldout_profile.json \
  --db "$work/unaligned_heldout.db" --json "$out/unaligned_heldout_sweep.json"
python3 scripts/dev/sweep_peak_share.py "$out/unaligned_heldout_sweep.json"
run sweep_decode 200 "$work" build/gemmtune sweep --profile scripts/dev/decode_unaligned_profile.json \
  --db "$work/decode.db" --json "$out/decode_sweep.json"
python3 scripts/dev/sweep_peak_share.py "$out/decode_sweep.json"
run sweep_decode_large 200 "$work" build/gemmtune sweep --profile scripts/dev/decode_large_profile.json \
  --db "$work/decode_large.db" --json "$out/decode_large_sweep.json"
python3 scripts/dev/sweep_peak_share.py "$out/decode_large_sweep.json"
tar -C "$work" -czf "$out/device_logs.tgz" --exclude='*.db' .
cat "$work/summary.txt"
