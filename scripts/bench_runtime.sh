#!/usr/bin/env bash
# The runtime benchmark of issue 6, in one go on one GPU:
#   1. tune a db for profiles/runtime_bench.json (the default profile's shapes, bias+gelu, tf32 and fp32);
#   2. resolve every problem the benchmark runs, which records the backward GEMMs as misses, and tune those
#      (`sweep --from-misses`): the loop a real program goes through;
#   3. measure (bench/runtime_bench.cu) and compare with PyTorch eager (scripts/compare_torch.py).
# Writes OUT_DIR/runtime_bench.json and OUT_DIR/torch_compare.json; prints which targets were met.
#
# usage: scripts/bench_runtime.sh [BUILD_DIR=build] [OUT_DIR=results/runtime_bench]
set -euo pipefail
cd "$(dirname "$0")/.."
# The benchmarks read their profiles from the source tree.
export GEMMTUNE_DATA_DIR=${GEMMTUNE_DATA_DIR:-$PWD}
build=${1:-build}
out=${2:-results/runtime_bench}
db=${DB:-$out/runtime_bench.db}
mkdir -p "$out"

"$build/gemmtune" sweep --profile runtime_bench --db "$db" --json "$out/sweep.json" > "$out/sweep.txt"
"$build/bench/runtime_bench" --db "$db" --prepare-only
"$build/gemmtune" sweep --from-misses --profile runtime_bench --db "$db" > "$out/sweep_misses.txt"
"$build/bench/runtime_bench" --db "$db" --json "$out/runtime_bench.json"
if python3 -c "import torch" 2> /dev/null; then
  python3 scripts/compare_torch.py --runtime-json "$out/runtime_bench.json" --json "$out/torch_compare.json"
else
  echo "bench_runtime: python3 has no torch: PyTorch comparison skipped" >&2
fi
