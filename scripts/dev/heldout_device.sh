#!/usr/bin/env bash
# The held-out benchmark (scripts/bench_heldout.sh, CONFIRM=1: the runtime as it runs by default) on the GPU machine
# from a carried build (scripts/dev/prebuilt.sh), one seed per GPU at a time (in parallel where there are several GPUs),
# then one report over all of them
# (scripts/heldout_report.py, PyTorch eager from each seed's own compare_torch.py run). Leaves heldout_bench.json,
# the report and each seed's logs, JSONs and db in OUT_DIR.
# COMPILED passes through to bench_heldout.sh (the modes torch.compile max-autotune is timed in).
#   usage: [COMPILED=...] scripts/dev/heldout_device.sh OUT_DIR SEEDS [COUNT=24] [LIMIT_S=540 per seed]
#   e.g. OUT 4801,4802
set -uo pipefail
out=${1:?usage: scripts/dev/heldout_device.sh OUT_DIR SEEDS [COUNT] [LIMIT_S]}
seeds=${2:?usage: scripts/dev/heldout_device.sh OUT_DIR SEEDS [COUNT] [LIMIT_S]}
count=${3:-24} limit=${4:-540}
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
export GEMMTUNE_DATA_DIR=$root PYTHONUNBUFFERED=1
work=$(mktemp -d)
mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader)
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
i=0
pids=()
for seed in ${seeds//,/ }; do
  gpu=${gpus[$((i % ${#gpus[@]}))]}
  CUDA_VISIBLE_DEVICES=$gpu CONFIRM=1 timeout "$limit" scripts/bench_heldout.sh build "$work/seed$seed" "$seed" "$count" \
    > "$out/seed$seed.log" 2>&1 &
  pids+=($!)
  i=$((i + 1))
  # One seed per GPU at a time: two on one GPU would time each other.
  if ((${#pids[@]} == ${#gpus[@]})); then
    for p in "${pids[@]}"; do wait "$p" || echo "a seed's run failed (rc=$?)"; done
    pids=()
  fi
done
for p in "${pids[@]}"; do wait "$p" || echo "a seed's run failed (rc=$?)"; done
benches=() torches=()
for seed in ${seeds//,/ }; do
  dir=$work/seed$seed/heldout
  benches+=(--bench "$dir/seed$seed/bench.json")
  [[ -f $dir/torch.json ]] && torches+=(--torch "$dir/torch.json")
  [[ -f $dir/torch_repeat.json ]] && torches+=(--torch-repeat "$dir/torch_repeat.json")
  [[ -f $dir/seed$seed/eager_same_process.json ]] && torches+=(--same-process "$dir/seed$seed/eager_same_process.json")
  [[ -f $dir/seed$seed/torch_here.json ]] && torches+=(--here "$dir/seed$seed/torch_here.json")
  # With COMPILED (bench_heldout.sh) that file also holds torch.compile's times; without, the report says it has none.
  [[ ${COMPILED:-tf32,fp32} != 0 && -f $dir/seed$seed/torch_here.json ]] &&
    torches+=(--compiled "$dir/seed$seed/torch_here.json")
done
python3 scripts/heldout_report.py "${benches[@]}" "${torches[@]}" --out "$out/heldout_bench.json" | tee "$out/report.txt"
# The dbs too (with their -wal files, which SQLite replays on open): a record that misses can then be rerun on the
# entry it ran (results/nvidia-h100-80gb-hbm3/heldout_miss_774x768x13824_recheck.txt could time only the no-entry path).
tar -C "$work" -czf "$out/heldout_work.tgz" .
