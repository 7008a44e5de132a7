#!/usr/bin/env bash
# Issue 49's benchmark: our tuned runtime against torch.compile max-autotune (and PyTorch eager, and raw cuBLASLt
# heuristic-first) on held-out shapes, half of them with k and n both not multiples of 4. Builds nothing; needs
# BUILD_DIR/gemmtune, BUILD_DIR/bench/heldout_bench and a python3 with torch (and Inductor's triton).
#   scripts/heldout_shapes.py --compile draws COUNT shapes (256..8192, m*n*k <= MAX_MNK) from SEED;
#   per part (a math mode on some of the shapes), on one GPU:
#     `gemmtune sweep` tunes its shapes (bias+gelu, NN) into a db of the part's own, and its --json keeps each
#     problem's sweep time;
#     heldout_bench times the runtime (every shape's exact tuned entry, so the first-use trial, which only confirms
#     stand-ins, has nothing to do) against heuristic-first, in the four conditions;
#     scripts/compare_torch.py --compiled times eager and the compiled op in the same conditions, with compile times,
#     and (--runtime-db, unless SAME_PROCESS=0) the runtime again on the part's db through `import gemmtune`, in that
#     same process, the sides taking turns every round: heldout_bench's ratio to the compiled op spans two processes;
#   scripts/compile_report.py joins the parts into OUT_DIR/compile_compare.json and prints the table and targets.
# Inductor's max-autotune takes 11-17 s per shape in tf32 and 44-67 s in fp32 on the H200 (../shared/DEVICE.md), so
# GPUS=0,1,... deals each mode's shapes over several GPUs, which run at once (each part's comparison stays on its own
# GPU: sweep, runtime, eager and compiled), and FP32_COUNT=N takes fp32 on the first N shapes only (they alternate
# unaligned and aligned). MODES="fp32" (default "tf32 fp32") runs one mode alone. ONLY="MxNxK,..." keeps those shapes of
# the draw alone (a re-run of the shapes a change was meant for, beside the same draw's earlier file).
# The one-process side needs BUILD_DIR/python's gemmtune package (built with the Python bindings); without it that side
# is left out and the script says so. Its first run (2026-11-30, a tree built on the GPU machine at 88df154) ended in a
# segmentation fault; none of the fourteen compare_torch.py --runtime-db processes since did (22f0d30's binaries, one
# and two H200s), nor compute-sanitizer's memcheck over the same stream changes.
#
# usage: [GPUS=0 | GPUS=0,1,...] [FP32_COUNT=N] [MODES="tf32 fp32"] [MAX_MNK=3.2e10] [ONLY=MxNxK,...] [SAME_PROCESS=0]
#          scripts/bench_compile.sh [BUILD_DIR=build] [OUT_DIR=results/<gpu-slug>] [SEED=4901] [COUNT=24]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
for tool in "$build/gemmtune" "$build/bench/heldout_bench"; do
  [[ -x $tool ]] || { echo "bench_compile: $tool is missing (build it first; this script builds nothing)" >&2; exit 2; }
done
python3 -c "import torch" 2> /dev/null || { echo "bench_compile: python3 has no torch" >&2; exit 2; }
slug=$("$build/gemmtune" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["slug"])')
out=${2:-results/$slug}
seed=${3:-4901}
count=${4:-24}
IFS=, read -r -a gpus <<< "${GPUS:-0}"
fp32_count=${FP32_COUNT:-$count}
((fp32_count >= 1 && fp32_count <= count)) || { echo "bench_compile: FP32_COUNT must be 1..COUNT" >&2; exit 2; }
dir="$out/compile/seed$seed"
rm -rf "$dir"
mkdir -p "$dir"
python3 scripts/heldout_shapes.py --compile --seed "$seed" --count "$count" --out "$dir" --max-mnk "${MAX_MNK:-3.2e10}"
if [[ -n ${ONLY:-} ]]; then
  count=$(python3 - "$dir" "$ONLY" << 'PY'
import json, sys
d, only = sys.argv[1], set(sys.argv[2].split(","))
shapes, profile = json.load(open(d + "/shapes.json")), json.load(open(d + "/profile.json"))
shapes["shapes"] = [s for s in shapes["shapes"] if f"{s['m']}x{s['n']}x{s['k']}" in only]
missing = only - {f"{s['m']}x{s['n']}x{s['k']}" for s in shapes["shapes"]}
if missing:
    sys.exit(f"bench_compile: ONLY names shapes this draw does not have: {', '.join(sorted(missing))}")
profile["shapes"] = [[s["m"], s["n"], s["k"]] for s in shapes["shapes"]]
json.dump(shapes, open(d + "/shapes.json", "w"), indent=1)
json.dump(profile, open(d + "/profile.json", "w"), indent=1)
print(len(shapes["shapes"]))
PY
  )
  fp32_count=$((fp32_count < count ? fp32_count : count))
fi
start=$SECONDS
same_process=""
if [[ ${SAME_PROCESS:-1} == 1 ]]; then
  if why=$(PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH} python3 -c "import gemmtune" 2>&1); then
    export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH}
    same_process=yes
  else
    echo "bench_compile: the runtime is not timed beside the compiled op in its process: import gemmtune failed" \
      "(${why##*$'\n'})" >&2
  fi
fi

gpu_clocks() {
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi -i "$1" --query-gpu=index,name,clocks.max.sm,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
      --format=csv,noheader
  fi
}

# One part's whole comparison (mode $1, GPU $2) on the shapes $3 (indices, comma-separated), into $dir/part$4/.
run_part() {
  local mode=$1 gpu=$2 pdir="$dir/part$4"
  mkdir -p "$pdir"
  python3 - "$dir" "$mode" "$3" "$pdir" << 'PY'
import json, sys
d, mode, idx, out = sys.argv[1], sys.argv[2], [int(i) for i in sys.argv[3].split(",")], sys.argv[4]
shapes, profile = json.load(open(d + "/shapes.json")), json.load(open(d + "/profile.json"))
shapes["shapes"] = [shapes["shapes"][i] for i in idx]
profile["shapes"] = [[s["m"], s["n"], s["k"]] for s in shapes["shapes"]]
profile["modes"], profile["name"] = [mode], profile["name"] + "_" + mode
json.dump(shapes, open(out + "/shapes.json", "w"), indent=1)
json.dump(profile, open(out + "/profile.json", "w"), indent=1)
PY
  export CUDA_VISIBLE_DEVICES=$gpu
  echo "before, part $4: $(gpu_clocks "$gpu")" > "$pdir/clocks.txt"
  "$build/gemmtune" sweep --profile "$pdir/profile.json" --db "$pdir/compile.db" --json "$pdir/sweep.json" \
    > "$pdir/sweep.txt" 2> "$pdir/sweep.log"
  echo "bench_compile: part $4 ($mode, GPU $gpu) tuned in $((SECONDS - start)) s" >&2
  "$build/bench/heldout_bench" --db "$pdir/compile.db" --shapes "$pdir/shapes.json" \
    --epilogues bias+gelu --modes "$mode" --json "$pdir/bench.json" > "$pdir/bench.txt"
  echo "during, part $4: $(gpu_clocks "$gpu")" >> "$pdir/clocks.txt"
  echo "bench_compile: part $4 ($mode, GPU $gpu) runtime measured in $((SECONDS - start)) s" >&2
  python3 scripts/compare_torch.py --shapes "$pdir/shapes.json" --modes "$mode" --epilogues bias+gelu --compiled \
    ${same_process:+--runtime-db "$pdir/compile.db"} --json "$pdir/torch.json" > "$pdir/torch.txt" 2> "$pdir/torch.log"
  echo "bench_compile: part $4 ($mode, GPU $gpu) torch.compile measured in $((SECONDS - start)) s" >&2
}

# The parts: tf32 on every shape, fp32 on the first FP32_COUNT, each mode's shapes dealt round-robin over the GPUs.
# A GPU runs its parts one after the other (tf32 first); the GPUs run at once.
parts=()
for mode in ${MODES:-tf32 fp32}; do
  [[ $mode == tf32 || $mode == fp32 ]] || { echo "bench_compile: MODES names tf32 and/or fp32" >&2; exit 2; }
  n=$count
  [[ $mode == fp32 ]] && n=$fp32_count
  for ((g = 0; g < ${#gpus[@]}; ++g)); do
    idx=$(seq "$g" "${#gpus[@]}" $((n - 1)) | paste -sd,)
    [[ -z $idx ]] || parts+=("$mode ${gpus[g]} $idx")
  done
done
run_gpu() {  # every part of GPU $1, in order
  local i mode gpu idx
  for i in "${!parts[@]}"; do
    read -r mode gpu idx <<< "${parts[i]}"
    if [[ $gpu == "$1" ]]; then
      run_part "$mode" "$gpu" "$idx" "$i"
    fi
  done
}
pids=()
for gpu in "${gpus[@]}"; do
  run_gpu "$gpu" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
((status == 0)) || { echo "bench_compile: a part failed (see $dir/part*/)" >&2; exit "$status"; }

cat "$dir"/part*/clocks.txt > "$dir/clocks.txt"
part_args=()  # compile_report.py joins the parts' files itself
for p in "$dir"/part*/; do part_args+=(--bench "$p/bench.json" --torch "$p/torch.json" --sweep "$p/sweep.json"); done
python3 scripts/compile_report.py "${part_args[@]}" --shapes "$dir/shapes.json" --clocks "$dir/clocks.txt" \
  --out "$out/compile_compare.json"
echo "bench_compile: done in $((SECONDS - start)) s" >&2
