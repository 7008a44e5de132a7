#!/usr/bin/env bash
# Benchmark of our kernels against cuBLASLt, measured side by side in one sweep (profiles/kernels.json):
# writes results/<gpu-slug>/kernels_sweep.json and kernels_bench.json and prints the ratio table.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${GEMMTUNE:-$root/build/gemmtune}
slug=$("$bin" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["slug"])')
out=${OUT_DIR:-$root/results/$slug}
mkdir -p "$out"
"$bin" sweep --profile kernels --no-db --json "$out/kernels_sweep.json" >/dev/null || [[ $? -eq 1 ]]
python3 "$root/scripts/bench_kernels.py" "$out/kernels_sweep.json" "$out/kernels_bench.json"
