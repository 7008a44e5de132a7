#!/usr/bin/env bash
# What ncu's gpu__time_duration adds per kernel, independent of clock: the same globaltimer spin kernels timed by
# CUPTI (the sweep's timer) and by ncu --clock-control none --cache-control none. Prints spin length, CUPTI median,
# ncu median and the difference. usage: [NCU_EXTRA="--replay-mode application"] scripts/dev/ncu_offset.sh [BUILD_DIR=build]
set -euo pipefail
bin=${1:-build}/kernels/dev_tools/ncu_offset
cupti=$("$bin")
ncu_csv=$(mktemp)
trap 'rm -f "$ncu_csv"' EXIT
ncu --clock-control none --cache-control none ${NCU_EXTRA:-} --metrics gpu__time_duration.sum --csv --page raw \
  --log-file "$ncu_csv" "$bin" > /dev/null 2>&1
python3 - "$cupti" "$ncu_csv" "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" <<'PY'
import statistics, sys
sys.path.insert(0, sys.argv[3])
from validate_timing import ncu_raw_durations_us
cupti = [line.split() for line in sys.argv[1].strip().splitlines()]
durations = [us for _, us in ncu_raw_durations_us(open(sys.argv[2]).read())[0]]
per = 35  # 5 warm-ups + 30 calls per spin length, in launch order
print(f"{'spin_us':>8} {'cupti_us':>9} {'ncu_us':>9} {'ncu-cupti_us':>12}")
for i, (ns, cupti_us) in enumerate(cupti):
    ncu = statistics.median(durations[i * per + 5:(i + 1) * per])
    print(f"{int(ns) / 1000:8.1f} {float(cupti_us):9.3f} {ncu:9.3f} {ncu - float(cupti_us):12.3f}")
PY
