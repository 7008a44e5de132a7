#!/usr/bin/env bash
# Named decode shapes against torch.compile max-autotune, on the GPU machine from a carried build
# (scripts/dev/prebuilt.sh): the held-out benchmark's tuning of exactly these shapes (its profile's timing: finalists
# in stream and graph, warm and cold) into a db, the sweep's fastest of our kernels, of cuBLASLt's and of the tiles
# whose id matches the regular expression NEW (tiles under trial) per problem, then scripts/compare_torch.py
# --runtime-db: PyTorch eager, torch.compile(mode="max-autotune-no-cudagraphs") and the runtime on that db timed in
# turns in one process, in the four conditions. Where the held-out draws hold a few decode shapes each, this times the
# ones a tile is built for. Leaves the sweep's JSON and text, the compare JSON and log and report.txt in OUT_DIR (no
# db).
#   usage: [MODES=tf32] [COMPILED_MODES=tf32] [NEW='_8x64x|_8x32x']
#          scripts/dev/decode_compiled_device.sh OUT_DIR MxNxK[,MxNxK...]
set -uo pipefail
out=${1:?usage: scripts/dev/decode_compiled_device.sh OUT_DIR MxNxK[,...]}
shapes=${2:?usage: scripts/dev/decode_compiled_device.sh OUT_DIR MxNxK[,...]}
modes=${MODES:-tf32} compiled_modes=${COMPILED_MODES:-tf32} new=${NEW:-_8x64x|_8x32x}
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
export GEMMTUNE_DATA_DIR=$root PYTHONUNBUFFERED=1 PYTHONPATH=$root/build/python${PYTHONPATH:+:$PYTHONPATH}
work=$(mktemp -d)
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee "$out/report.txt"
python3 - "$shapes" "$modes" "$work" << 'EOF' || exit 2
import json, sys
shapes = [[int(d) for d in s.split("x")] for s in sys.argv[1].split(",")]
work = sys.argv[3]
with open(f"{work}/shapes.json", "w") as f:
    json.dump({"seed": 0, "shapes": [{"m": m, "n": n, "k": k, "tuned": True} for m, n, k in shapes]}, f)
with open(f"{work}/profile.json", "w") as f:
    json.dump({"name": "decode_compiled", "description": "named decode shapes (scripts/dev/decode_compiled_device.sh)",
               "shapes": shapes, "layouts": ["nn"], "epilogues": ["none", "bias+gelu"],
               "modes": sys.argv[2].split(","), "backends": ["own", "lt"], "lt": {"top_k": 4, "workspace_mib": 64},
               "timing": {"warmup_calls": 3, "batch_calls": 10, "min_samples": 20, "max_noise_pct": 1.0,
                          "min_time_ms": 2, "max_time_ms": 40, "launch": "both", "l2": "both", "finalists": 3}}, f)
EOF
start=$SECONDS
build/gemmtune sweep --profile "$work/profile.json" --db "$work/decode.db" --json "$out/sweep.json" \
  > "$out/sweep.txt" 2> "$out/sweep.log" || { echo "sweep failed"; tail -5 "$out/sweep.log"; exit 1; }
echo "swept in $((SECONDS - start)) s" | tee -a "$out/report.txt"
python3 scripts/dev/sweep_new_vs_rest.py "$out/sweep.json" "$new" | tee -a "$out/report.txt"
build/gemmtune cache show --db "$work/decode.db" > "$out/cache.txt" 2>&1
start=$SECONDS
python3 scripts/compare_torch.py --shapes "$work/shapes.json" --modes "$modes" --compiled \
  --compiled-modes "$compiled_modes" --runtime-db "$work/decode.db" --json "$out/compare.json" \
  > "$out/compare.log" 2>&1 ||
  { echo "compare_torch failed"; tail -5 "$out/compare.log"; }
echo "compared in $((SECONDS - start)) s" | tee -a "$out/report.txt"
python3 - "$out/compare.json" << 'EOF' | tee -a "$out/report.txt"
import json, math, sys
recs = json.load(open(sys.argv[1]))["records"]
print(f"{'shape':16} {'mode':5} {'epilogue':9} {'launch':6} {'cond':4} {'eager':>8} {'compiled':>9} {'ours':>8}"
      f" {'eager/ours':>10} {'comp/ours':>9}")
for r in recs:
    ours, comp = r.get("runtime_here_us"), r.get("compiled_us")
    print(f"{r['shape']:16} {r['mode']:5} {r['epilogue']:9} {r['launch']:6} {r['condition']:4} {r['torch_us']:8.2f} "
          + (f"{comp:9.2f}" if comp else f"{'-':>9}") + (f" {ours:8.2f}" if ours else f" {'-':>8}")
          + (f" {r['torch_us'] / ours:10.3f}" if ours else "") + (f" {comp / ours:9.3f}" if ours and comp else ""))
ratios = [r["compiled_us"] / r["runtime_here_us"] for r in recs if r.get("compiled_us") and r.get("runtime_here_us")]
if ratios:
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"compiled/ours geomean x{g:.3f} over {len(ratios)} records, min x{min(ratios):.3f}, "
          f"below 0.99x: {sum(x < 0.99 for x in ratios)}")
EOF
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader | tee -a "$out/report.txt"
