#!/usr/bin/env bash
# Issue 49's torch.compile comparison on the GPU machine, from a carried build (scripts/dev/prebuilt.sh): runs
# scripts/bench_compile.sh on every GPU there (GPUS defaults to all of them), then leaves compile_compare.json, the
# run's log and its per-part work (shapes, profiles, sweep/bench/torch logs and JSONs, no dbs) in OUT_DIR; a run cut
# short by LIMIT_S leaves what finished joined as compile_compare_partial.json instead.
# SLICE=i/n times the i-th of n contiguous slices of the draw alone (ONLY= its shapes), for a machine that cannot time
# the whole draw in one device call: one H200 took about 540 s for 24 tf32 shapes, so seed 9713 ran as 1/2 and 2/2.
# The draw alternates both-unaligned and aligned shapes, so slices of an even length keep half of each.
# scripts/dev/compile_compare_join.sh joins the slices' compile_work.tgz into one compile_compare.json.
#   usage: [FP32_COUNT=N] [SLICE=i/n] scripts/dev/compile_compare_device.sh OUT_DIR [SEED=4901] [COUNT=24] [LIMIT_S=560]
set -uo pipefail
out=${1:?usage: scripts/dev/compile_compare_device.sh OUT_DIR [SEED] [COUNT] [LIMIT_S]}
seed=${2:-4901} count=${3:-24} limit=${4:-560}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
if [[ -n ${SLICE:-} ]]; then
  ONLY=$(python3 scripts/heldout_shapes.py --compile --seed "$seed" --count "$count" --max-mnk "${MAX_MNK:-3.2e10}" \
         --slice "$SLICE") || exit 2
  export ONLY
  echo "slice $SLICE of seed $seed's $count shapes: $ONLY"
fi
export GEMMTUNE_DATA_DIR=$root PYTHONUNBUFFERED=1
work=$(mktemp -d)
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd,)
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
GPUS=${GPUS:-$gpus} timeout "$limit" scripts/bench_compile.sh build "$work" "$seed" "$count" > "$out/bench_compile.log" 2>&1
rc=$?
echo "bench_compile rc=$rc"
if ((rc != 0)); then
  for f in "$work"/compile/seed*/part*/{sweep.log,bench.txt,torch.log}; do
    [[ -f $f ]] && { echo "== $f"; tail -5 "$f"; }
  done
  # A run cut short (Inductor's fp32 autotuning can outlast a device call) still leaves the parts whose runtime and
  # PyTorch sides were written: joined as compile_compare_partial.json, the shapes without a compiled timing named.
  parts=()
  for p in "$work"/compile/seed*/part*/; do
    [[ -f $p/bench.json && -f $p/torch.json && -f $p/sweep.json ]] &&
      parts+=(--bench "$p/bench.json" --torch "$p/torch.json" --sweep "$p/sweep.json")
  done
  if ((${#parts[@]})); then
    cat "$work"/compile/seed*/part*/clocks.txt > "$work/clocks.txt" 2> /dev/null
    python3 scripts/compile_report.py "${parts[@]}" --shapes "$work/compile/seed$seed/shapes.json" \
      --clocks "$work/clocks.txt" --allow-missing --out "$out/compile_compare_partial.json" > "$out/partial_report.txt" 2>&1
    echo "partial join rc=$?: $out/compile_compare_partial.json"
    grep -E "geomean|left out" "$out/partial_report.txt"
  fi
fi
cp "$work/compile_compare.json" "$out/" 2> /dev/null
tar -C "$work" -czf "$out/compile_work.tgz" --exclude='*.db' compile
grep -E "vs compiled geomean|torch.compile spent|bench_compile|Traceback|rror" "$out/bench_compile.log" | tail -40
