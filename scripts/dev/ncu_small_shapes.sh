#!/usr/bin/env bash
# ncu's view of our kernels on one small problem, each candidate's 6th GEMM launch: where the time of a 256³ GEMM goes
# when its k loop is short (launch, prologue latency, split-k gather, epilogue): duration, active cycles per SM,
# warps, executed instructions and the stall reasons. Developer tool; writes one text per candidate to $OUT (or
# /tmp/ncu_small). KERNEL_REGEX picks the kernels counted (default: our three families; `gemmtune run` also launches
# fill and reference kernels, which must not be the one profiled).
#   ncu_small_shapes.sh BUILD_DIR M N K MODE EPILOGUE_ARGS CANDIDATE...   (EPILOGUE_ARGS e.g. "--bias --act gelu")
set -uo pipefail
build=${1:?usage: ncu_small_shapes.sh BUILD_DIR M N K MODE EPILOGUE_ARGS CANDIDATE...}
m=$2 n=$3 k=$4 mode=$5 epilogue=$6
shift 6
out=${OUT:-/tmp/ncu_small}
mkdir -p "$out"
stalls=long_scoreboard,short_scoreboard,barrier,membar,wait,math_pipe_throttle,mio_throttle,lg_throttle,drain,branch_resolving,no_instruction,dispatch_stall,not_selected,selected,sleeping,imc_miss,misc,tex_throttle
metrics=gpu__time_duration.sum,sm__cycles_active.max,sm__cycles_active.avg,smsp__inst_executed.sum,sm__warps_launched.sum
for s in ${stalls//,/ }; do metrics+=",smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
for c in "$@"; do
  name=$(echo "$c $epilogue" | tr -c 'a-zA-Z0-9_\n' '_')
  # shellcheck disable=SC2086
  timeout 120 ncu --clock-control none --kernel-name "regex:${KERNEL_REGEX:-mma_gemm_kernel|simt_gemm_kernel|wgmma_tf32}" \
    --launch-skip 5 --launch-count 1 --metrics "$metrics" \
    "$build/gemmtune" run --m "$m" --n "$n" --k "$k" $epilogue --mode "$mode" --candidate "$c" --iters 3 \
    --warmup 3 > "$out/ncu_$name.txt" 2>&1
  echo "== $c $epilogue (rc $?)"
  grep -E "^    (gpu__|sm__|smsp__)" "$out/ncu_$name.txt" | awk '$NF+0 >= 0.05 || $1 !~ /stalled/' |
    sed -E 's/smsp__average_warps_issue_stalled_(.*)_per_issue_active.ratio/stall \1/' | awk '{print "   ", $1, $2, $NF}'
done
