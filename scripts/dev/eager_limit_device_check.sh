#!/usr/bin/env bash
# Issue 48 on the GPU in one device call, from a carried build (scripts/dev/prebuilt.sh unpack first):
#   1. the GPU tests of what the first-use trial and the eager limit touch (SimtGemm, KernelRegistry, NoEntry,
#      FirstUse, Runtime, Trial), into OUT_DIR/gpu_tests.log;
#   2. the fp32 bias+gelu trade records (scripts/dev/trade_records_device.sh) into OUT_DIR/trade;
#   3. fresh held-out seeds with PyTorch eager and torch.compile max-autotune tf32 (scripts/dev/heldout_device.sh,
#      COUNT shapes each), one after another into OUT_DIR/seedS, each given what is left of LIMIT_S less a minute
#      for the summary and the copy back, while at least MIN_SEED_S are left (a seed of 6 shapes took 170-320 s on
#      the H100).
# Prints a summary last: the GPU, each step's exit code, seconds and clocks, and the report lines each seed printed on
# issue 48's targets. OUT_DIR gets two files, summary.txt and eager_limit_check.tgz (every log, record and report),
# since the device call brings back at most 8 files and one seed alone writes 4. SKIP_GPU_TESTS=1 leaves out step 1
# (a second call on the same build), SKIP_TRADE=1 step 2; DECODE=1 passes through to the seeds (decode shapes,
# m <= 16).
#   usage: [COUNT=6] [MIN_SEED_S=200] [SKIP_GPU_TESTS=1] [SKIP_TRADE=1] scripts/dev/eager_limit_device_check.sh
#          OUT_DIR SEEDS [LIMIT_S=570]
#   e.g. OUT 9789,9790
set -uo pipefail
usage="usage: [COUNT=6] [MIN_SEED_S=200] [SKIP_GPU_TESTS=1] [SKIP_TRADE=1] scripts/dev/eager_limit_device_check.sh"
usage+=" OUT_DIR SEEDS [LIMIT_S=570]"
out=${1:-} seeds=${2:-} limit=${3:-570} count=${COUNT:-6} min_seed_s=${MIN_SEED_S:-200}
[[ -n $out && $seeds =~ ^[0-9]+(,[0-9]+)*$ && $limit =~ ^[0-9]+$ && $count =~ ^[0-9]+$ && $min_seed_s =~ ^[0-9]+$ ]] ||
  { echo "$usage" >&2; exit 2; }
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
work=$(mktemp -d) || exit 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
if [[ ! -x build/tests/gemmtune_tests ]]; then
  echo "eager_limit_device_check: no build/tests/gemmtune_tests (scripts/dev/prebuilt.sh unpack)" >&2
  exit 2
fi
began=$SECONDS
summary=()
# The clocks, power and temperature twice a second during each step: a lent machine once ran long calls 1.8x slower
# with nothing to tell why. Event reasons are a bit mask (0x4 software power cap, 0x8/0x40/0x80 hardware slowdown,
# 0x20 software thermal); older drivers call the field clocks_throttle_reasons.
smi_fields=timestamp,utilization.gpu,clocks.sm,clocks.mem,power.draw,temperature.gpu
if nvidia-smi --query-gpu=clocks_event_reasons.active --format=csv,noheader > /dev/null 2>&1; then
  smi_fields+=,clocks_event_reasons.active
else
  smi_fields+=,clocks_throttle_reasons.active
fi
clocks_summary() {  # clocks_summary CSV: the samples where the GPU was busy (utilization > 50%), in one line
  python3 - "$1" << 'EOF'
import collections, statistics, sys
rows = [[f.strip() for f in line.split(",")] for line in open(sys.argv[1])]
busy = [r for r in rows if len(r) == 7 and r[1].isdigit() and int(r[1]) > 50]
if not busy:
    sys.exit(print("clocks: no busy samples"))
sm = [int(r[2]) for r in busy]
reasons = " ".join(f"{k} x{n}" for k, n in collections.Counter(r[6] for r in busy).most_common())
mem = statistics.median_low([int(r[3]) for r in busy])
power, temp = max(float(r[4]) for r in busy), max(int(r[5]) for r in busy)
print(f"clocks: {len(busy)} busy samples, SM median {statistics.median_low(sm)} min {min(sm)} MHz, memory {mem} MHz, "
      f"power max {power:.0f} W, temp max {temp} C, reasons {reasons}")
EOF
}
step() {  # step NAME CMD...: runs CMD, keeps "NAME rc=RC S s" and its clocks for the summary
  local name=$1 start=$SECONDS
  shift
  nvidia-smi --query-gpu="$smi_fields" --format=csv,noheader,nounits -lms 500 > "$work/clocks_$name.csv" 2>&1 &
  local sampler=$!
  "$@"
  local rc=$?
  kill "$sampler" 2> /dev/null
  wait "$sampler" 2> /dev/null
  summary+=("$(printf '%-12s rc=%-3s %4s s' "$name" "$rc" "$((SECONDS - start))")")
  summary+=("  $(clocks_summary "$work/clocks_$name.csv")")
}

summary+=("$(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader)")
if [[ ${SKIP_GPU_TESTS:-0} != 1 ]]; then
  step gpu_tests env GEMMTUNE_REQUIRE_GPU=1 build/tests/gemmtune_tests \
    --gtest_filter='SimtGemm*:KernelRegistry*:NoEntry*:FirstUse*:Runtime*:Trial*' > "$work/gpu_tests.log" 2>&1
  summary+=("  $(grep -E '^\[  (PASSED|SKIPPED) +\] [0-9]+ tests?|[0-9]+ FAILED TESTS?$' "$work/gpu_tests.log" |
    tr '\n' ' ')")
fi
# The trade records take 17-22 s; a later call on the same build and machine repeats them to no end (SKIP_TRADE=1).
if [[ ${SKIP_TRADE:-0} != 1 ]]; then
  step trade bash scripts/dev/trade_records_device.sh "$work/trade" > "$work/trade.log" 2>&1
fi
for seed in ${seeds//,/ }; do
  left=$((limit - (SECONDS - began) - 60))
  if ((left < min_seed_s)); then
    summary+=("seed $seed not run: ${left} s left")
    continue
  fi
  step "seed$seed" env COMPILED=tf32 bash scripts/dev/heldout_device.sh "$work/seed$seed" "$seed" "$count" "$left" \
    > "$work/seed$seed.log" 2>&1
  # Across processes, eager against itself across processes, and in one process (heldout_report.py's three verdicts).
  while read -r line; do
    summary+=("  $line")
  done < <(grep -E "^issue 48 targets" "$work/seed$seed/report.txt" 2>/dev/null)
done
printf '%s\n' "${summary[@]}" > "$work/summary.txt"
cp "$work/summary.txt" "$out/summary.txt"
tar -C "$work" -czf "$out/eager_limit_check.tgz" . && rm -rf "$work"
echo "== summary (logs, records and reports: $out/eager_limit_check.tgz)"
cat "$out/summary.txt"
