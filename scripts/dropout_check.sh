#!/usr/bin/env bash
# The device-side dropout offset (issue 18) on a GPU: its tests, mlp_step's graph replays, and the timing of the offset
# by value against the offset read from device memory. Builds nothing: BUILD_DIR must hold gemmtune_tests, mlp_step
# and, configured with -DGEMMTUNE_DEV_TOOLS=ON, kernels/dev_tools/dropout_offset_bench. Logs go to OUT_DIR; a summary
# table prints last. Exit 0 only if every step passed.
#   usage: scripts/dropout_check.sh [BUILD_DIR=build] [OUT_DIR=/tmp/dropout_check]
set -uo pipefail
build=$(cd "${1:-build}" && pwd) || exit 2
out=${2:-/tmp/dropout_check}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
status=0
summary=()

# Every test of the offset pointer (their names all say DropoutOffset), GPU and CPU, and the runtime tests it touches.
tests='*DropoutOffset*:RuntimeGpu.*:EpilogueKernel.*:EpilogueParams.*:KernelRegistry.*:Verifier.*'
"$build/tests/gemmtune_tests" --gtest_filter="$tests" >"$out/tests.log" 2>&1
rc=$?
[[ $rc == 0 ]] || status=1
summary+=("tests|rc=$rc|$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$out/tests.log" | tr '\n' ' ')")
grep -E '^\[  FAILED  \] [A-Za-z]' "$out/tests.log" | sort -u >"$out/tests_failed.txt"
grep -E '^\[ (dropout|checked) ' "$out/tests.log" >"$out/tests_coverage.txt"

# A db-less run: the heuristic's choices; replays 1..3 against eager steps at offsets 0..2, bit for bit.
"$build/src/examples/mlp_step" "$out/none.db" >"$out/mlp_step.log" 2>&1
rc=$?
[[ $rc == 0 ]] || status=1
summary+=("mlp_step|rc=$rc|$(tail -1 "$out/mlp_step.log")")

bench=$build/kernels/dev_tools/dropout_offset_bench
if [[ -x $bench ]]; then
  (cd "$root" && timeout 360 "$bench" --profile profiles/dev_dropout.json --own-per-family 2 \
    --csv "$out/offset_timing.csv") >"$out/offset_timing.txt" 2>"$out/offset_timing.log"
  rc=$?
  [[ $rc == 0 ]] || status=1
  why=$(tail -1 "$out/offset_timing.log" | grep '^dropout_offset_bench:')
  summary+=("pointer vs value timing|rc=$rc|$(tail -1 "$out/offset_timing.txt")$why")
else
  status=1
  summary+=("pointer vs value timing|missing|configure $build with -DGEMMTUNE_DEV_TOOLS=ON")
fi

echo "== tests: DropoutOffsetGpu coverage =="
cat "$out/tests_coverage.txt"
if [[ -s $out/tests_failed.txt ]]; then
  echo "== failed tests (details in tests.log) =="
  cat "$out/tests_failed.txt"
fi
echo "== mlp_step =="
grep -E '^(dropout|replay|graph|step)' "$out/mlp_step.log"
if [[ -s $out/offset_timing.txt ]]; then
  echo "== pointer vs value (CUPTI, median of rounds) =="
  cat "$out/offset_timing.txt"
fi
echo "== summary =="
printf '%s\n' "${summary[@]}"
exit $status
