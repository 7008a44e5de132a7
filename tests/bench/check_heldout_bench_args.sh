#!/usr/bin/env bash
# heldout_bench refuses a bad number (out of range, empty, or with a trailing unit) with one line and exit 2 before it
# looks for a GPU or a file, and takes a good --idle-ms (the run then stops at the missing --db, the next check).
# usage: check_heldout_bench_args.sh HELDOUT_BENCH
set -uo pipefail
bench=${1:?usage: check_heldout_bench_args.sh HELDOUT_BENCH}
failures=0
expect() {  # expect WORDS ARGS...: exit 2 and a first line containing WORDS
  local words=$1 out rc
  shift
  out=$("$bench" "$@" 2>&1)
  rc=$?
  if [[ $rc != 2 || $(head -1 <<< "$out") != *"$words"* ]]; then
    echo "FAIL: heldout_bench $* -> exit $rc, first line '$(head -1 <<< "$out")' (wanted exit 2 and '$words')"
    failures=$((failures + 1))
  else
    echo "ok: heldout_bench $* -> exit 2, '$(head -1 <<< "$out")'"
  fi
}
for bad in abc -1 1001 5ms ""; do
  expect "--idle-ms must be 0..1000" --idle-ms "$bad"
done
for bad in 0 5x ""; do
  expect "--rounds must be 1..1000" --rounds "$bad"
done
expect "--max-trial-candidates must be 1..64" --max-trial-candidates 65
for good in 0 10 1000; do
  expect "--db and --shapes are required" --idle-ms "$good"
done
((failures == 0))
