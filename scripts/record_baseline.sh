#!/usr/bin/env bash
# Records the committed gate baseline of this machine's GPU model: RUNS back-to-back sweeps of the `ci` profile (what
# scripts/ci_gate.sh sweeps), combined into results/<gpu-slug>/baseline.json with each case's run-to-run spread and
# where and with what it was recorded (device, driver, cuBLASLt, gemmtune version, git commit, build).
#
#   scripts/record_baseline.sh [RUNS]          RUNS sweeps, at least 2 (default 3, or $RUNS)
#
# It builds nothing: it uses $BUILD_DIR/gemmtune (default build/), which must be this commit's build, and refuses a
# build with the test-only slowdown. Then it checks the new baseline against this build's plan, as CI does.
# Environment: BUILD_DIR, GEMMTUNE_DEVICE (CUDA device index, default 0), BASELINE_RUNS_DIR (where the single sweeps
# are kept, default $BUILD_DIR/baseline-runs), GIT_COMMIT (recorded instead of asking git, for a tree without .git).
# Exit code: 0 recorded; 2 bad usage or no build; 3 no usable GPU; else the failing sweep's (1: a candidate failed
# verification, so no baseline: fix that first).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

build=${BUILD_DIR:-build}
gemmtune=$build/gemmtune
device=${GEMMTUNE_DEVICE:-0}
runs=${1:-${RUNS:-3}}
runs_dir=${BASELINE_RUNS_DIR:-$build/baseline-runs}

if ! [[ $runs =~ ^[0-9]+$ ]] || ((runs < 2)); then
  echo "record_baseline: RUNS must be a number >= 2 (the spread between runs is what the baseline records), got '$runs'" >&2
  exit 2
fi
if [[ ! -x $gemmtune ]]; then
  echo "record_baseline: no $gemmtune: build this commit first (e.g. scripts/run.sh, or cmake --build $build)" >&2
  exit 2
fi
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" 2>/dev/null | head -n1; }
slowdown=$(cache_value GEMMTUNE_TEST_SLOWDOWN)
if [[ -n $slowdown ]]; then
  echo "record_baseline: $build was built with the test-only slowdown ($slowdown): its timings are not real" >&2
  exit 2
fi

# `devices` exits 3 with its reason when there is no usable GPU: that is this script's answer too.
devices_json=$("$gemmtune" devices --json) || exit $?
slug=$(python3 -c 'import json, sys; d = json.load(sys.stdin); i = int(sys.argv[1]); print(d[i]["slug"] if i < len(d) else "")' \
  "$device" <<<"$devices_json")
if [[ -z $slug ]]; then
  echo "record_baseline: no CUDA device $device on this machine" >&2
  exit 2
fi

# GIT_COMMIT names the commit where the tree is a copy without its .git.
if [[ -n ${GIT_COMMIT:-} ]]; then
  commit=$GIT_COMMIT
elif commit=$(git -C "$root" rev-parse HEAD 2>/dev/null); then
  git -C "$root" diff --quiet HEAD -- 2>/dev/null || commit="$commit+uncommitted-changes"
else
  commit=unknown
fi
build_info="$("$gemmtune" --version), $(cache_value CMAKE_BUILD_TYPE), CUDA archs $(cache_value CMAKE_CUDA_ARCHITECTURES)"

mkdir -p "$runs_dir" "results/$slug"
sweeps=()
for ((i = 1; i <= runs; i++)); do
  sweep=$runs_dir/ci-run-$i.json
  echo "record_baseline: sweep $i of $runs (profile ci, device $device) -> $sweep" >&2
  # --no-db: a baseline measures, it does not tune.
  "$gemmtune" sweep --profile ci --device "$device" --no-db --json "$sweep" >/dev/null || {
    rc=$?
    echo "record_baseline: sweep $i failed (exit $rc); no baseline recorded" >&2
    exit "$rc"
  }
  sweeps+=("$sweep")
done

baseline=results/$slug/baseline.json
"$gemmtune" gate --combine-baseline "$baseline" "${sweeps[@]}" --note "git_commit=$commit" --note "build=$build_info" \
  --note "recorded_by=scripts/record_baseline.sh $runs" --note "host=$(hostname)"
"$gemmtune" gate --check-baseline "$baseline" --profile ci
echo "record_baseline: wrote $baseline; review the diff and commit it" >&2
