#!/usr/bin/env bash
# The fp32 bias+gelu trade records with PyTorch eager as tuned entries, on the GPU machine from a carried build
# (scripts/dev/prebuilt.sh): sweep scripts/dev/trade_records_profile.json into a db, then PyTorch eager against the
# runtime reading it (compare_torch.py, the sides taking turns every round), then the same with no db. Without an entry
# the runtime's trial never tries the SIMT tiles, so only the first run says whether one of them leads eager's call
# in all four conditions (results/nvidia-h200/trade_records_recheck_d009d5d.txt). Leaves logs, the sweep and both
# comparisons in OUT_DIR. PROFILE: another profile's shapes, modes and epilogues (e.g. the decode shape whose entry
# a0701f8 changed, scripts/dev/trade_records_decode_profile.json).
#   usage: [PROFILE=P] scripts/dev/trade_records_device.sh OUT_DIR
set -uo pipefail
out=${1:?usage: scripts/dev/trade_records_device.sh OUT_DIR}
mkdir -p "$out"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
export GEMMTUNE_DATA_DIR=$root PYTHONPATH=$root/build/python PYTHONUNBUFFERED=1
work=$(mktemp -d)
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee "$out/gpu.txt"
profile=${PROFILE:-scripts/dev/trade_records_profile.json}
build/gemmtune sweep --profile "$profile" --db "$work/trade.db" --json "$work/sweep.json" \
  > "$out/sweep.txt" 2> "$out/sweep.log" || { echo "trade_records_device: the sweep failed (rc=$?)"; exit 1; }
gzip -9 -n -c "$work/sweep.json" > "$out/sweep.json.gz"
build/gemmtune cache show --db "$work/trade.db" | tee "$out/cache.txt"
# compare_torch.py's shapes file, from the profile's shapes (tuned: the sweep above put each in the db).
read -r modes epilogues < <(python3 - "$profile" "$work/shapes.json" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    profile = json.load(f)
with open(sys.argv[2], "w") as f:
    json.dump({"seed": 0, "shapes": [{"m": m, "n": n, "k": k, "tuned": True} for m, n, k in profile["shapes"]]}, f)
print(",".join(profile["modes"]), ",".join(profile["epilogues"]))
PY
)
for db in tuned none; do
  [[ $db == tuned ]] && path=$work/trade.db || path=$work/empty.db
  python3 scripts/compare_torch.py --shapes "$work/shapes.json" --modes "$modes" --epilogues "$epilogues" --rounds 15 \
    --runtime-db "$path" --json "$out/compare_$db.json" > "$out/compare_$db.log" 2>&1 ||
    echo "trade_records_device: compare_torch.py with db $db failed (rc=$?)"
  echo "== runtime with db: $db"
  grep '^torch ' "$out/compare_$db.log"
done
