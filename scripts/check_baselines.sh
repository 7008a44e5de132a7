#!/usr/bin/env bash
# The CPU side of keeping gate baselines current (a ctest test runs it, so scripts/test.sh and .ci/run do): every
# committed results/*/baseline.json must hold the problems and own-kernel candidates this build plans for the `ci`
# profile. A commit that changes the candidate set without re-recording the baseline fails here, with the list of
# stale and missing entries and the command that fixes it.
#
#   scripts/check_baselines.sh [GEMMTUNE]       the binary to ask (default $BUILD_DIR/gemmtune, BUILD_DIR=build)
#
# Exit code: 0 every baseline is current (or there is none); 1 one is stale; 2 one is unreadable.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gemmtune=$(realpath "${1:-${BUILD_DIR:-$root/build}/gemmtune}")
cd "$root"

shopt -s nullglob
baselines=(results/*/baseline.json)
if ((${#baselines[@]} == 0)); then
  echo "check_baselines: no committed baseline (results/*/baseline.json): nothing to check;" \
    "the GPU gate needs one: record it with scripts/record_baseline.sh on the CI GPU"
  exit 0
fi
rc=0
for baseline in "${baselines[@]}"; do
  "$gemmtune" gate --check-baseline "$baseline" --profile ci || { status=$?; ((status > rc)) && rc=$status; }
done
exit "$rc"
