#!/usr/bin/env bash
# Power and SM clock while one candidate runs back to back for ~5 s (tf32 4096^3, 12000 calls): ours, clustered and
# not, against cuBLASLt's best, twice in turn. The sweep times each candidate in short bursts, whose clocks depend on
# how hot the GPU starts; held at its power limit, every kernel settles where energy per call decides. Developer tool:
# builds, then writes nvidia-smi samples (50 ms) and each run's output under $OUT.
set -uo pipefail
export PATH=$PATH:/usr/local/cuda/bin
out=${OUT:-/tmp/sustained_power}
bash scripts/dev/device_build.sh > "$out/build.txt" 2>&1; echo "build rc=$?"
for round in 1 2; do
for c in own/wgmma_tf32_256x128x32_s4_c2 lt/a43-t24-s34-k1-r0-w1-c0-cl5-i0 own/wgmma_tf32_256x128x32_s4; do
  f="$out/power_${round}_$(echo $c | tr '/' '_').csv"
  nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv,noheader,nounits -lms 50 > "$f" &
  smi=$!
  build/gemmtune run --m 4096 --n 4096 --k 4096 --mode tf32 --candidate "$c" --iters 12000 --warmup 200 > "$f.run.txt" 2>&1
  kill $smi; wait $smi 2>/dev/null
  python3 - "$f" "$c" "$f.run.txt" <<'PY'
import sys
rows=[l.split(',') for l in open(sys.argv[1]) if l.strip() and 'N/A' not in l]
rows=[(float(a),float(b),float(c)) for a,b,c in rows]
busy=[r for r in rows if r[0]>300]
n=len(busy)
if n:
    print(f"{sys.argv[2]:40} samples {n:4d} power {sum(r[0] for r in busy)/n:6.1f} W  sm clock {sum(r[1] for r in busy)/n:6.0f} MHz  temp {busy[-1][2]:.0f} C")
t=[l for l in open(sys.argv[3]) if 'us' in l or 'time' in l.lower()]
print('   ', ''.join(t[-3:]).strip().replace('\n',' | ')[:300])
PY
  sleep 3
done
done
