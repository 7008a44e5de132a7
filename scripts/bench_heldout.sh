#!/usr/bin/env bash
# The held-out runtime benchmark of issue 12: the runtime on model-like shapes that no profile names, timed as a
# program pays it. Builds nothing; needs BUILD_DIR/gemmtune and BUILD_DIR/bench/heldout_bench.
#   per seed: scripts/heldout_shapes.py draws COUNT shapes (none a profile names) and marks half tuned;
#             `gemmtune sweep` tunes exactly that half (tf32 and fp32, epilogues none and bias+gelu, NN) into a db
#             of the seed's own, with the finalist stage (stream and graph, warm and cold);
#             heldout_bench times the runtime on all COUNT shapes (exact entries for the tuned half, the fallback for
#             the rest) against raw cuBLASLt heuristic-first with the same epilogue, in the four conditions;
#   then:     scripts/compare_torch.py --shapes times PyTorch eager in the same conditions (skipped without torch),
#             twice, in two processes: the second run against the first is PyTorch against itself across processes,
#             the noise under that comparison (heldout_report.py --torch-repeat);
#             with the trial on, scripts/eager_same_process.py times each seed's cases again with the runtime
#             (BUILD_DIR/python) and PyTorch eager in one process, stream/warm (two processes differ by more than the
#             comparison's 1% band: its header says why), and compare_torch.py --runtime-db does in all four
#             conditions on the seed's db (heldout_report.py --here); a failure there only costs that view;
#             that run also times torch.compile max-autotune of the same ops beside them (--compiled; COMPILED below);
#             scripts/heldout_report.py joins everything into OUT_DIR/heldout_bench.json and prints the table.
# OUT_DIR defaults to results/<gpu-slug> (as bench_kernels.sh): heldout_bench.json lands there, the per-seed work
# (shapes, profile, db, sweep and bench logs, the sweep's --json with its finalist stages) under OUT_DIR/heldout/.
#
# The runtime as it runs by default (RuntimeOptions::confirm_standins on: the first-use trial) goes into
# heldout_bench.json. CONFIRM=both (the default) also times it with the option off (the evidence rules alone), on the
# same dbs, into OUT_DIR/heldout_bench_no_trial.json; CONFIRM=0 times only that way, CONFIRM=1 only the default.
# With the trial on, each tuned shape's entry is also timed against a runtime with no db at all (vs_no_entry), and
# the report holds it to issue 37's >= 0.99x.
#
# FP32_EQUIVALENT=1 runs the fp32-equivalent policy end to end: the tuned half's sweep lets fp32 problems take our
# 3xtf32 variants (profile field fp32_equivalent) and the runtime may run them (RuntimeOptions::fp32_equivalent),
# against cuBLASLt fp32 heuristic-first as always. Its files carry a _fp32_equivalent suffix (heldout_bench_fp32_
# equivalent.json, the work under OUT_DIR/heldout_fp32_equivalent/), so a default run's results stay as they are.
#
# TRIAL_CANDIDATES=N times the trial with RuntimeOptions::max_trial_candidates N instead of its default, into
# bench_trialN.json per seed and OUT_DIR/heldout_bench_trialN.json, beside a default run's files.
#
# COMPILED=tf32,fp32 (the default), tf32, fp32 or 0: the modes in which compare_torch.py --runtime-db also compiles each
# op with torch.compile max-autotune and times it in turn with eager and the runtime (heldout_report.py --compiled).
# Inductor's autotuning takes 11-17 s a shape and epilogue in tf32 and 44-67 s in fp32 on the H200: COMPILED=tf32 keeps
# a 16-shape run near 10 minutes; 0 skips it. Only the default runtime's run (CONFIRM=1 or both, no suffix) has it.
#
# DECODE=1 draws decode steps only (heldout_shapes.py --decode: m of 1..16), where the skinny kernels run.
#
# SWEEP_FLAGS="..." adds flags to the tuning sweep (e.g. --no-prune, to hold the pruned sweep's choices against every
# candidate sampled to the end on the same shapes).
#
# usage: [CONFIRM=0|1|both (default)] [FP32_EQUIVALENT=0|1] [DECODE=0|1] [TRIAL_CANDIDATES=N] [SWEEP_FLAGS=...]
#          [COMPILED=tf32,fp32 (default)|tf32|fp32|0]
#          scripts/bench_heldout.sh [BUILD_DIR=build]
#          [OUT_DIR=results/<gpu-slug>] [SEEDS=1,2] [COUNT=24]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[[ -x $build/gemmtune ]] || { echo "bench_heldout: $build/gemmtune is missing (this script builds nothing)" >&2; exit 2; }
slug=$("$build/gemmtune" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["slug"])')
out=${2:-results/$slug}
seeds=${3:-1,2}
count=${4:-24}
confirm=${CONFIRM:-both}
case $confirm in 0 | 1 | both) ;; *) echo "bench_heldout: CONFIRM must be 0, 1 or both" >&2; exit 2 ;; esac
suffix="" policy_flags=()
case ${FP32_EQUIVALENT:-0} in
  0) ;;
  1) suffix=_fp32_equivalent policy_flags=(--fp32-equivalent) ;;
  *) echo "bench_heldout: FP32_EQUIVALENT must be 0 or 1" >&2; exit 2 ;;
esac
shape_flags=()
case ${DECODE:-0} in
  0) ;;
  1) shape_flags=(--decode) ;;
  *) echo "bench_heldout: DECODE must be 0 or 1" >&2; exit 2 ;;
esac
compiled_flags=()
case ${COMPILED:-tf32,fp32} in
  0) ;;
  tf32 | fp32 | tf32,fp32 | fp32,tf32) compiled_flags=(--compiled --compiled-modes "${COMPILED:-tf32,fp32}") ;;
  *) echo "bench_heldout: COMPILED must be tf32,fp32, tf32, fp32 or 0" >&2; exit 2 ;;
esac
trial_suffix="" trial_flags=()
if [[ -n ${TRIAL_CANDIDATES:-} ]]; then
  [[ $TRIAL_CANDIDATES =~ ^[0-9]+$ && $confirm != 0 ]] ||
    { echo "bench_heldout: TRIAL_CANDIDATES must be a number, with CONFIRM=1 or both" >&2; exit 2; }
  trial_suffix=_trial$TRIAL_CANDIDATES trial_flags=(--max-trial-candidates "$TRIAL_CANDIDATES")
fi
for tool in "$build/gemmtune" "$build/bench/heldout_bench"; do
  [[ -x $tool ]] || { echo "bench_heldout: $tool is missing (build it first; this script builds nothing)" >&2; exit 2; }
done
mkdir -p "$out"
start=$SECONDS
bench_jsons=() confirm_jsons=() shape_files=() seed_dirs=()
for seed in ${seeds//,/ }; do
  dir="$out/heldout$suffix/seed$seed"
  rm -rf "$dir"
  python3 scripts/heldout_shapes.py --seed "$seed" --count "$count" --out "$dir" "${policy_flags[@]}" \
    "${shape_flags[@]}"
  # shellcheck disable=SC2086 # SWEEP_FLAGS is a list of flags
  "$build/gemmtune" sweep --profile "$dir/profile.json" --db "$dir/heldout.db" --json "$dir/sweep.json" \
    ${SWEEP_FLAGS:-} > "$dir/sweep.txt" 2> "$dir/sweep.log"
  echo "bench_heldout: seed $seed tuned in $((SECONDS - start)) s" >&2
  "$build/gemmtune" cache show --db "$dir/heldout.db" > "$dir/cache.txt"
  if [[ $confirm != 1 ]]; then
    "$build/bench/heldout_bench" "${policy_flags[@]}" --db "$dir/heldout.db" --shapes "$dir/shapes.json" \
      --json "$dir/bench_no_trial.json" > "$dir/bench_no_trial.txt"
    bench_jsons+=(--bench "$dir/bench_no_trial.json")
  fi
  if [[ $confirm != 0 ]]; then
    "$build/bench/heldout_bench" --confirm "${trial_flags[@]}" "${policy_flags[@]}" --db "$dir/heldout.db" \
      --shapes "$dir/shapes.json" \
      --json "$dir/bench$trial_suffix.json" > "$dir/bench$trial_suffix.txt"
    confirm_jsons+=(--bench "$dir/bench$trial_suffix.json")
  fi
  echo "bench_heldout: seed $seed measured in $((SECONDS - start)) s" >&2
  shape_files+=(--shapes "$dir/shapes.json")
  seed_dirs+=("$dir")
done
torch_args=() same_args=() here_args=() compiled_args=()
if python3 -c "import torch" 2> /dev/null; then
  python3 scripts/compare_torch.py "${shape_files[@]}" --json "$out/heldout$suffix/torch.json" \
    > "$out/heldout$suffix/torch.txt"
  # The same again in a process of its own: PyTorch eager against itself, the noise floor under the comparison.
  python3 scripts/compare_torch.py "${shape_files[@]}" --json "$out/heldout$suffix/torch_repeat.json" \
    > "$out/heldout$suffix/torch_repeat.txt"
  torch_args=(--torch "$out/heldout$suffix/torch.json" --torch-repeat "$out/heldout$suffix/torch_repeat.json")
  echo "bench_heldout: PyTorch measured twice in $((SECONDS - start)) s" >&2
  # The Python runtime has the runtime's defaults (the trial on, no fp32-equivalent policy): only that run compares.
  if [[ $confirm != 0 && -z $suffix$trial_suffix ]]; then
    for dir in "${seed_dirs[@]}"; do
      if PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" python3 scripts/eager_same_process.py \
          --shapes "$dir/shapes.json" --db "$dir/heldout.db" --json "$dir/eager_same_process.json" \
          > "$dir/eager_same_process.txt" 2>&1; then
        same_args+=(--same-process "$dir/eager_same_process.json")
      else
        echo "bench_heldout: the one-process eager comparison failed for $dir (see its eager_same_process.txt)" >&2
      fi
      # The same in all four conditions: compare_torch.py times the runtime on the seed's db beside eager, in turns,
      # and the compiled op with them. Last, and written after every shape: a run cut short keeps what it measured.
      if PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" python3 scripts/compare_torch.py \
          --shapes "$dir/shapes.json" --runtime-db "$dir/heldout.db" "${compiled_flags[@]}" \
          --json "$dir/torch_here.json" > "$dir/torch_here.txt" 2>&1; then
        here_args+=(--here "$dir/torch_here.json")
        if ((${#compiled_flags[@]})); then compiled_args+=(--compiled "$dir/torch_here.json"); fi
      else
        echo "bench_heldout: the one-process comparison in four conditions failed for $dir (see its torch_here.txt)" >&2
      fi
    done
    echo "bench_heldout: PyTorch and the runtime measured in one process in $((SECONDS - start)) s" >&2
  fi
else
  echo "bench_heldout: python3 has no torch: PyTorch comparison skipped" >&2
fi
if ((${#confirm_jsons[@]})); then
  echo "== with the first-use trial (RuntimeOptions::confirm_standins) =="
  python3 scripts/heldout_report.py "${confirm_jsons[@]}" "${torch_args[@]}" "${same_args[@]}" "${here_args[@]}" \
    "${compiled_args[@]}" --out "$out/heldout_bench$trial_suffix$suffix.json"
fi
if ((${#bench_jsons[@]})); then
  echo "== without the first-use trial (RuntimeOptions::confirm_standins off) =="
  python3 scripts/heldout_report.py "${bench_jsons[@]}" "${torch_args[@]}" --out "$out/heldout_bench_no_trial$suffix.json"
fi
echo "bench_heldout: done in $((SECONDS - start)) s" >&2
