#!/usr/bin/env bash
# Issue 47 on the GPU machine, from a build made here and carried (scripts/dev/prebuilt.sh pack, then unpack there):
# the runtime's GPU tests (among them 10,080 calls from 8 threads on 8 streams through one Runtime, every result
# against fp64), the Python stream tests (the same from Python; FusedLinear's MLP on two streams, eager and graphed),
# the other Python GPU tests, and the single-stream held-out benchmark on one seed, whose records sit beside an earlier
# run's of the same seed. Everything lands in OUT_DIR/device_logs.tgz; the summary prints last.
# PARTS (tests,heldout by default) picks what runs, so each part fits one device call.
#   usage: [PARTS=tests|heldout|tests,heldout] scripts/dev/stream_safety_device_check.sh OUT_DIR [SEED=9401] [COUNT=20]
set -uo pipefail
out=${1:?usage: scripts/dev/stream_safety_device_check.sh OUT_DIR [SEED] [COUNT]}
seed=${2:-9401} count=${3:-20}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
cd "$root" || exit 2
export PYTHONPATH=$root/build/python GEMMTUNE_DATA_DIR=$root
run() { scripts/dev/on_gpu.sh 0 "$@"; }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee "$work/gpu.txt"
parts=,${PARTS:-tests,heldout},
if [[ $parts == *,tests,* ]]; then
  run gtest_runtime 300 "$work" build/tests/gemmtune_tests --gtest_filter='RuntimeGpu.*:RuntimeCacheGpu.*'
  for t in test_gpu_streams test_gpu_torch test_gpu_runtime; do
    run "$t" 200 "$work" bash -c "cd tests/runtime/python && python3 -m unittest -v $t"
  done
  grep -h "calls from" "$work"/*.log
  grep -h "^Ran \|^OK\|^FAILED\|PASSED\|FAILED\|Failure\|Error" "$work"/gtest_runtime.log "$work"/test_gpu_*.log
fi
if [[ $parts == *,heldout,* ]]; then
  CONFIRM=1 run heldout 500 "$work" scripts/bench_heldout.sh build "$work/heldout" "$seed" "$count"
  tail -30 "$work/heldout.log"
  cp "$work/heldout/heldout_bench.json" "$out/" 2>/dev/null
fi
tar -C "$work" -czf "$out/device_logs.tgz" --exclude='*.db' .
cat "$work/summary.txt"
