#!/usr/bin/env bash
# The timing proof, rerunnable on any GPU with ncu: the sweep's CUPTI medians for cuBLASLt's first tf32 algo at
# 256³, 1024³, 2048³ and 4096³ against ncu (same kernels, --cache-control none and all) and against CUDA events
# around 20 back-to-back calls; then, with REPEAT=PROFILE, two back-to-back sweeps of that profile case by case.
# Writes results/timing/*.json. Usage: scripts/validate_timing.sh [REPEAT=default]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${GEMMTUNE:-$root/build/gemmtune}
out=${OUT_DIR:-$root/results/timing}
mkdir -p "$out"

# A sweep exits 1 when a candidate failed verification; the timings of the others still stand.
sweep() { "$bin" sweep "$@" >/dev/null || [[ $? -eq 1 ]]; }
sweep --profile "$root/profiles/timing.json" --no-db --json "$out/timing_sweep.json"
if [[ -n ${REPEAT:-} ]]; then
  sweep --profile "$REPEAT" --no-db --json "$out/repeat_a.json"
  sweep --profile "$REPEAT" --no-db --json "$out/repeat_b.json"
  python3 "$root/scripts/validate_timing.py" --bin "$bin" --sweep "$out/repeat_a.json" --repeat "$out/repeat_b.json" \
    --out "$out/repeat.json"
  "$bin" gate --baseline "$out/repeat_a.json" --current "$out/repeat_b.json" --markdown "$out/repeat_gate.md" >/dev/null \
    && echo "gate of the two sweeps against each other: pass" || echo "gate of the two sweeps against each other: exit $?"
fi
# What ncu adds to every kernel, from spin kernels whose length does not depend on the clock (needs the dev tools:
# -DGEMMTUNE_DEV_TOOLS=ON); the table then shows ncu's GEMM durations less it as well.
offset_args=()
if [[ -x $(dirname "$bin")/kernels/dev_tools/ncu_offset ]]; then
  "$root/scripts/dev/ncu_offset.sh" "$(dirname "$bin")" | tee "$out/ncu_offset.txt"
  offset_args=(--ncu-offset-us "$(awk 'NR > 1 { print $4 }' "$out/ncu_offset.txt" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')")
fi
python3 "$root/scripts/validate_timing.py" --bin "$bin" --profile "$root/profiles/timing.json" \
  --sweep "$out/timing_sweep.json" --out "$out/timing_validation.json" "${offset_args[@]}"
# With COLD=1: nvbench's cold measurement (L2 evicted before every call) against ncu with its caches flushed.
[[ -n ${COLD:-} ]] || exit 0
sweep --profile "$root/profiles/timing_cold.json" --no-db --json "$out/timing_cold_sweep.json"
python3 "$root/scripts/validate_timing.py" --bin "$bin" --profile "$root/profiles/timing_cold.json" \
  --sweep "$out/timing_cold_sweep.json" --out "$out/timing_cold_validation.json"
