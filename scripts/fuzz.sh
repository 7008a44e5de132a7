#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan) into build-fuzz/ and runs each for SECONDS
# (default 60) on its seed corpus (made from the repository's fixtures) and its regression inputs
# (tests/fuzz/regressions/<target>/, every crash ever found, which must now pass). Prints a table of executions and
# findings per target; exits 1 when any target found something (the input is kept in build-fuzz/findings/).
#   scripts/fuzz.sh [SECONDS]      FUZZ_BUILD_DIR (default build-fuzz), FUZZ_JOBS (build jobs, default nproc)
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
targets=(fuzz_profile fuzz_cache_import fuzz_sweep_results fuzz_ncu_csv fuzz_problem_key fuzz_epilogue_spec)

command -v clang++ >/dev/null || { echo "gemmtune: fuzz.sh needs clang++ (Debian: apt install clang)" >&2; exit 2; }
cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  ${CMAKE_EXTRA_ARGS:-} >/dev/null
cmake --build "$build" -j "${FUZZ_JOBS:-$(nproc)}"

rm -rf "$build/seeds"
python3 "$root/tests/fuzz/make_seeds.py" "$root" "$build/seeds"
mkdir -p "$build/findings" "$build/logs"

total=0
failed=0
rows=()
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  mkdir -p "$corpus"
  regressions="$root/tests/fuzz/regressions/$t"
  # The regression inputs first, each once: a crash that came back fails here whatever the time budget.
  status=ok
  if [[ -d $regressions ]] && compgen -G "$regressions/*" >/dev/null; then
    "$build/$t" "$regressions"/* >"$build/logs/$t.regressions.log" 2>&1 || status="REGRESSION (see $build/logs/$t.regressions.log)"
  fi
  # -timeout: one input running for seconds is a hang; -rss_limit_mb: a blow-up in memory is a finding too.
  if ! "$build/$t" "$corpus" "$build/seeds/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/findings/$t-" >"$build/logs/$t.log" 2>&1; then
    status="FOUND (see $build/logs/$t.log)"
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/logs/$t.log" | grep -o '[0-9]*$' | tail -1)
  runs=${runs:-0}
  total=$((total + runs))
  [[ $status == ok ]] || failed=1
  rows+=("$(printf '%-22s %12s  %s' "$t" "$runs" "$status")")
done

printf '%-22s %12s  %s\n' target executions result
printf '%s\n' "${rows[@]}"
printf '%-22s %12s\n' total "$total"
exit "$failed"
