#!/usr/bin/env bash
# Issue 37 on the GPU: first uses that never stall and cost milliseconds (docs/runtime-first-use.md). One call:
#   1. builds (scripts/device_build.sh; SKIP_BUILD=1 uses the build as it is);
#   2. the runtime's GPU tests (tests/runtime, the first-use trial's and the no-entry rule's included);
#   3. a `quick` sweep into OUT_DIR/quick.db (or DB=FILE: a db tuned on `ci` or `quick` already), so the trial has own
#      variants to rank;
#   4. bench/first_use_bench: COUNT (500) untuned problems in one process with CUDA's default module loading, with
#      no db, then with the tuned db: OUT_DIR/no_db/first_use.json and OUT_DIR/tuned_db/first_use.json.
# Prints a summary table last: per run, max / median / p90 first-call ms against the targets (<= 100 ms, median
# <= 20 ms), and how many first calls reached the blocking kernel's 10 s timeout.
#
#   scripts/dev/first_use_device_check.sh OUT_DIR   [SKIP_BUILD=1] [SKIP_TESTS=1] [SKIP_BENCH=1] [DB=FILE] [COUNT=500]
#                                                   [SEED=37]
# A build from scratch takes minutes: where one call's 10 minutes are short, run it twice into the same OUT_DIR, first
# with SKIP_BENCH=1, then with SKIP_BUILD=1 SKIP_TESTS=1.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: first_use_device_check.sh OUT_DIR}
mkdir -p "$out"
out=$(realpath "$out")
build=${BUILD_DIR:-build}
count=${COUNT:-500}
seed=${SEED:-37}
summary=()
note() { summary+=("$1"); echo "== $1"; }
start=$SECONDS

nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
echo "CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-<unset: the default>}"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  bash scripts/dev/device_build.sh > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo "build failed"; exit 1; }
  note "build: ok in $((SECONDS - start)) s"
fi

if [[ ${SKIP_TESTS:-0} != 1 ]]; then
  # Every suite of tests/runtime, and the no-entry rule's and the keep rule's.
  suites=$(grep -ho '^TEST\(_F\|_P\)\?([A-Za-z0-9_]*' tests/runtime/*.cpp | sed 's/.*(//' | sort -u |
    sed 's/$/.*/' | paste -sd:)
  "$build/tests/gemmtune_tests" --gtest_filter="$suites:NoEntryCandidates.*:NoEntryKeepRule.*:KeepRule.*" \
    > "$out/runtime_tests.log" 2>&1
  rc=$?
  counts=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ test' "$out/runtime_tests.log" | tr '\n' ' ')
  note "runtime tests: rc=$rc $counts"
  grep -E '^\[  FAILED  \] [A-Za-z]' "$out/runtime_tests.log" | sort -u
fi

db=${DB:-}
if [[ ${SKIP_BENCH:-0} == 1 ]]; then
  printf '%s\n' "${summary[@]}"
  exit 0
fi
if [[ -z $db ]]; then
  db=$out/quick.db
  rm -f "$db" "$db-wal" "$db-shm"
  timeout 300 "$build/gemmtune" sweep --profile quick --db "$db" > "$out/quick_sweep.txt" 2> "$out/quick_sweep.log"
  note "quick sweep: rc=$? in $((SECONDS - start)) s"
fi

run_bench() {  # NAME [--db FILE]
  local name=$1
  shift
  timeout 300 "$build/bench/first_use_bench" --out "$out/$name" --count "$count" --seed "$seed" "$@" \
    > "$out/$name.log" 2>&1
  local rc=$?
  local timeouts
  timeouts=$(grep -c 'timed out' "$out/$name.log")
  note "first_use_bench $name: rc=$rc in $((SECONDS - start)) s; blocking-kernel timeout warnings: $timeouts"
}
run_bench no_db
run_bench tuned_db --db "$db"

echo
echo "== first use, $count untuned problems per run, one process each (targets: every call <= 100 ms, median <= 20 ms)"
python3 - "$out" <<'EOF'
import json, os, sys
out = sys.argv[1]
print(f"{'run':<9} {'gpu':<24} {'loading':<10} {'n':>4} {'max ms':>9} {'median':>8} {'p90':>8} {'>100ms':>6} "
      f"{'>=10s':>5}  met  slowest")
for name in ("no_db", "tuned_db"):
    path = os.path.join(out, name, "first_use.json")
    if not os.path.exists(path):
        print(f"{name:<9} (no {path})")
        continue
    doc = json.load(open(path))
    s, rs = doc["summary"], doc["records"]
    stalls = sum(1 for r in rs if r["first_call_ms"] >= 10000)
    slow = max(rs, key=lambda r: r["first_call_ms"])
    print(f"{name:<9} {doc['device'].get('gpu_name', '?')[:24]:<24} {doc['module_loading'][:10]:<10} {s['count']:4d} "
          f"{s['max_ms']:9.2f} {s['median_ms']:8.2f} {s['p90_ms']:8.2f} {s['over_100ms']:6d} {stalls:5d}  "
          f"{'yes' if s['met'] else 'NO ':<4} {slow['shape']} {slow['mode']} {slow['epilogue']} ({slow['source']})")
EOF
printf '%s\n' "${summary[@]}"
