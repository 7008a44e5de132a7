#!/usr/bin/env bash
# Issue 40's GPU proof after the code moves (the launch layer out of tuner/ into src/launch, the cache's keep rule
# into problem/candidate_choice, the benchmarks into bench/, one ScratchDir): the runtime library carries no tuner,
# the GPU tests of the moved code pass, and the in-profile runtime benchmark (scripts/bench_runtime.sh, from
# build/bench/runtime_bench) stands beside the committed results/<gpu>/runtime_bench.json. Builds nothing: BUILD_DIR
# must hold a full build (scripts/device_build.sh). Logs, the db and the benchmark's JSON go to OUT_DIR; a summary
# table prints last. Exit 0 only if every step ran and passed.
#   usage: scripts/dev/launch_layer_check.sh [BUILD_DIR=build] [OUT_DIR=/tmp/launch_layer_check] [STEPS=tests,bench]
set -uo pipefail
build=$(cd "${1:-build}" && pwd) || exit 2
out=${2:-/tmp/launch_layer_check}
steps=${3:-tests,bench}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
status=0
summary=()

bash "$root/scripts/dev/check_runtime_layers.sh" "$build/src/runtime/libgemmtune_runtime.so" \
  "$build/tuner/libgemmtune_tuner.a" >"$out/layers.log" 2>&1
rc=$?
[[ $rc == 0 ]] || status=1
summary+=("runtime library vs tuner|rc=$rc|$(tail -1 "$out/layers.log")")

if [[ ,$steps, == *,tests,* ]]; then
  # Every suite whose code moved or that runs through what moved: launch, the runtime and its trial, the tuner's
  # measurement and cache, the CLI commands that make scratch directories.
  suites='DeviceFootprint ProblemBuffers LtGemm Verifier ProgramConditions ProgramBatching FinalistStageGpu SweepResume
          SweepFp32Equivalent AccuracyBenchmark RuntimeGpu RuntimeCacheGpu FirstUseTrial DropoutOffsetGpu TuningDbTest
          TuningDbMerge CandidateChoice CacheRule KeepRule ScratchDir SweepCli SweepDevicesGpu TraceCli'
  filter=$(printf '%s.*:' $suites)
  (cd "$root" && timeout 300 "$build/tests/gemmtune_tests" --gtest_filter="${filter%:}") >"$out/tests.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || status=1
  summary+=("GPU tests of the moved code|rc=$rc|$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$out/tests.log" | tr '\n' ' ')")
  grep -E '^\[  FAILED  \] [A-Za-z]' "$out/tests.log" | sort -u >"$out/tests_failed.txt"
fi

if [[ ,$steps, == *,bench,* ]]; then
  (cd "$root" && DB="$out/runtime_bench.db" timeout 420 bash scripts/bench_runtime.sh "$build" "$out/runtime_bench") \
    >"$out/bench.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || status=1
  slug=$("$build/gemmtune" devices --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["slug"])' 2>/dev/null)
  table=$(python3 - "$out/runtime_bench/runtime_bench.json" "$root/results/$slug/runtime_bench.json" <<'PY'
import json, os, sys
now, committed = sys.argv[1], sys.argv[2]
def figures(path):
    if not os.path.isfile(path):
        return None
    d = json.load(open(path))
    f, b, h = d["forward_summary"], d["backward_summary"], d["host_overhead"]
    return [f["geomean_speedup"], f["min_speedup"], b["geomean_speedup"], b["min_speedup"], h["overhead_ns"], h["lookup_ns"]]
names = ["forward geomean", "forward min", "backward geomean", "backward min", "host overhead ns", "lookup ns"]
a, c = figures(now), figures(committed)
if a is None:
    print(f"no {now}")
    sys.exit(0)
for i, n in enumerate(names):
    print(f"runtime_bench {n}|now {a[i]:.3f}|committed {c[i]:.3f}" if c else f"runtime_bench {n}|now {a[i]:.3f}|no {committed}")
PY
)
  summary+=("runtime_bench (bench_runtime.sh)|rc=$rc|$(tail -1 "$out/bench.log")")
  while IFS= read -r line; do summary+=("$line"); done <<<"$table"
fi

echo "== summary (logs in $out)"
printf '%s\n' "${summary[@]}" | awk -F'|' '{ printf "%-36s %-18s %s\n", $1, $2, $3 }'
exit $status
