#!/usr/bin/env bash
# What a GPU CI job runs to stop a change that makes GEMMs slower: build, sweep the `ci` profile on this machine's
# GPU, and gate the result against the committed baseline of that GPU model, results/<gpu-slug>/baseline.json.
#
#   scripts/ci_gate.sh [gate options...]        e.g. scripts/ci_gate.sh --threshold 3 --allow-missing 2
#
# Exit code: the gate's (0 no regression, 1 a case regressed, 2 the runs do not match or there is no baseline for
# this GPU), the sweep's when it fails first (1 a candidate failed verification), or 3 when there is no usable GPU.
# Environment: GEMMTUNE_DEVICE (CUDA device index, default 0), GATE_OUT (where the outputs go, default
# build/gate: current.json, gate.json, gate.md, junit.xml), and setup.sh's BUILD_DIR and CUDA_ARCHS.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GEMMTUNE_ROOT"

gemmtune=$BUILD_DIR/gemmtune
device=${GEMMTUNE_DEVICE:-0}
out=${GATE_OUT:-$BUILD_DIR/gate}
mkdir -p "$out"

# `devices` exits 3 with its reason when there is no usable GPU: that is this job's answer too.
devices_json=$("$gemmtune" devices --json) || exit $?
slug=$(python3 -c 'import json, sys; d = json.load(sys.stdin); i = int(sys.argv[1]); print(d[i]["slug"] if i < len(d) else "")' \
  "$device" <<<"$devices_json")
if [[ -z $slug ]]; then
  echo "ci_gate: no CUDA device $device on this machine" >&2
  exit 2
fi

baseline=results/$slug/baseline.json
if [[ ! -f $baseline ]]; then
  echo "ci_gate: no baseline for this GPU ($slug): $baseline does not exist." >&2
  echo "ci_gate: record one on this GPU model with this build, review it and commit it:" >&2
  echo "  BUILD_DIR=$BUILD_DIR GEMMTUNE_DEVICE=$device scripts/record_baseline.sh" >&2
  exit 2
fi

# --no-db: the job measures, it does not tune; nothing of it should outlive the run but its outputs.
"$gemmtune" sweep --profile ci --device "$device" --no-db --json "$out/current.json" || {
  rc=$?
  echo "ci_gate: the sweep failed (exit $rc), nothing to gate" >&2
  exit "$rc"
}

rc=0
"$gemmtune" gate --baseline "$baseline" --current "$out/current.json" --junit "$out/junit.xml" \
  --markdown "$out/gate.md" --json "$out/gate.json" "$@" || rc=$?

# GitHub Actions renders this file on the run's summary page; elsewhere the Markdown stays in $out.
if [[ -n ${GITHUB_STEP_SUMMARY:-} && -f $out/gate.md ]]; then
  cat "$out/gate.md" >>"$GITHUB_STEP_SUMMARY"
fi
exit "$rc"
