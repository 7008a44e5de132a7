#!/usr/bin/env bash
# GPU proof of issue 50 (`gemmtune apply`). Builds gemmtune (scripts/dev/device_build.sh; BUILD_DIR as there;
# SKIP_BUILD=1 uses a build already there), then writes under OUT_DIR:
#   apply_gpu_tests.txt               the apply tests with GEMMTUNE_REQUIRE_GPU=1 (no skip passes): the routing table,
#                                     the shim with no GPU shown, the CLI, and on the GPU trace -> sweep --from-misses
#                                     -> apply of a real cuBLAS program (routed, cuBLAS's result, a capture left alone)
#   results/<gpu>/apply_overhead.json  scripts/bench_apply_overhead.py: the host time apply adds to a cuBLAS call,
#                                     routed and passed through (OVERHEAD=0 skips it)
#   results/<gpu>/apply_step_<models>.json  scripts/bench_apply_step.py on MODELS (default d1024,odd), MODES
#                                     (default fp32,tf32), CAPTURES (default eager,graph), REPEATS (default 3)
#                                     processes per eager variant, CPUS (e.g. 2-5: the steps pinned there), STEPS
#                                     (default 10) loss steps and TIMED (default 10) timed ones (FULL=1: 50 and 30, the
#                                     benchmark's own), NO_YIELD=1 (apply --no-host-yield as a variant beside
#                                     apply); its dbs, reports and log in WORK_DIR (default a new /tmp folder;
#                                     MODELS=none skips it)
# SKIP_TESTS=1 runs the benchmarks alone. Under a time limit per command, run the models one or two at a time and join
# the files: python3 scripts/bench_apply_step.py --merge results/<gpu>/apply_step_*.json --out .../apply_step.json
# A summary prints last.
#
#   scripts/dev/apply_device_check.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export PYTHONUNBUFFERED=1
# shellcheck source=device_check_lib.sh
source "$here/scripts/dev/device_check_lib.sh"
start_check "$@"

t0=$SECONDS
build_unless_skipped
slug=$(gpu_slug) || exit 3
res=$out/results/$slug
# The dbs, reports and children's files (dozens) go to WORK_DIR, not under OUT_DIR: the device tool brings back only
# a few files from a command's output folder, and the results must be among them.
work=${WORK_DIR:-$(mktemp -d /tmp/apply-device-check.XXXXXX)}
mkdir -p "$res" "$work"

filter='ApplyRoute.*:ApplySettings.*:ApplyReport.*:ApplyShim.*:ApplyRouter.*:ApplyCli.*:*ApplyGpu*:BlasShim.*:LtShim.*:ScratchBudget.*:RuntimeGpu.ACallPastTheScratchBudget*'
if [[ ${SKIP_TESTS:-0} == 1 ]]; then
  note "apply tests: skipped (SKIP_TESTS=1)"
elif GEMMTUNE_REQUIRE_GPU=1 "$build/tests/gemmtune_tests" --gtest_filter="$filter" \
    >"$out/apply_gpu_tests.txt" 2>&1; then
  note "apply tests: PASS ($(grep -c '^\[       OK' "$out/apply_gpu_tests.txt") passed)"
else
  note "apply tests: FAIL (see $out/apply_gpu_tests.txt)"
  grep -E '^\[  FAILED|Failure' "$out/apply_gpu_tests.txt" | head -20
fi

if [[ ${OVERHEAD:-1} == 1 ]]; then
  if python3 "$here/scripts/bench_apply_overhead.py" --gemmtune "$G" --caller "$build/bench/apply_call_overhead" \
      --work "$work/overhead" --out "$res/apply_overhead.json" >"$out/bench_apply_overhead.txt" 2>&1; then
    note "bench_apply_overhead: $(grep '^targets met' "$out/bench_apply_overhead.txt")"
    cat "$out/bench_apply_overhead.txt"
  else
    note "bench_apply_overhead: FAIL (see $out/bench_apply_overhead.txt)"
    tail -20 "$out/bench_apply_overhead.txt"
  fi
fi

models=${MODELS:-d1024,odd}
[[ $models == none ]] && { echo; echo "== summary ($((SECONDS - t0)) s)"; printf '  %s\n' "${summary[@]}"; exit 0; }
if [[ ${FULL:-0} == 1 ]]; then
  steps=(--steps 50 --timed-steps 30)
else
  steps=(--steps "${STEPS:-10}" --timed-steps "${TIMED:-10}")
fi
no_yield=()
[[ ${NO_YIELD:-0} == 1 ]] && no_yield=(--no-yield-variant)
if python3 "$here/scripts/bench_apply_step.py" --gemmtune "$G" --db-dir "$work" --models "$models" "${steps[@]}" \
    --modes "${MODES:-fp32,tf32}" --captures "${CAPTURES:-eager,graph}" --repeats "${REPEATS:-3}" \
    ${CPUS:+--cpus "$CPUS"} "${no_yield[@]}" \
    --out "$res/apply_step_${models//,/_}.json" >"$out/bench_apply_step.txt" 2>&1; then
  note "bench_apply_step: done ($(tail -1 "$out/bench_apply_step.txt"))"
  grep -E '^(d|odd)' "$out/bench_apply_step.txt"
else
  note "bench_apply_step: FAIL (see $out/bench_apply_step.txt and $work/bench_apply_step.log)"
  tail -20 "$out/bench_apply_step.txt"
fi

echo
echo "== summary ($((SECONDS - t0)) s)"
printf '  %s\n' "${summary[@]}"
