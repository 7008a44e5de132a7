#!/usr/bin/env bash
# Joins the slices of one torch.compile comparison (scripts/dev/compile_compare_device.sh with SLICE=i/n, one device
# call each) into OUT_DIR/compile_compare.json: every part of every slice's compile_work.tgz, the whole draw's
# shapes.json (drawn again here from the seed: the same seed draws the same shapes) and the slices' clocks, through
# scripts/compile_report.py, which prints the table and the targets.
#   usage: scripts/dev/compile_compare_join.sh OUT_DIR SEED COUNT compile_work.tgz [compile_work.tgz ...]
set -euo pipefail
usage="usage: scripts/dev/compile_compare_join.sh OUT_DIR SEED COUNT compile_work.tgz [...]"
out=${1:?$usage} seed=${2:?$usage} count=${3:?$usage}
shift 3
(($# >= 1)) || { echo "$usage" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$root/scripts/heldout_shapes.py" --compile --seed "$seed" --count "$count" --max-mnk "${MAX_MNK:-3.2e10}" \
  --out "$tmp/draw" > /dev/null
parts=()
: > "$tmp/clocks.txt"
i=0
for tgz in "$@"; do
  [[ -f $tgz ]] || { echo "compile_compare_join: $tgz: no such file" >&2; exit 2; }
  mkdir -p "$tmp/slice$i"
  tar -C "$tmp/slice$i" -xzf "$tgz"
  found=0
  for p in "$tmp/slice$i/compile/seed$seed"/part*/; do
    [[ -f $p/bench.json && -f $p/torch.json && -f $p/sweep.json ]] || continue
    parts+=(--bench "$p/bench.json" --torch "$p/torch.json" --sweep "$p/sweep.json")
    found=1
  done
  ((found)) || { echo "compile_compare_join: $tgz holds no finished part of seed $seed" >&2; exit 2; }
  cat "$tmp/slice$i/compile/seed$seed"/part*/clocks.txt >> "$tmp/clocks.txt" 2> /dev/null || true
  i=$((i + 1))
done
mkdir -p "$out"
python3 "$root/scripts/compile_report.py" "${parts[@]}" --shapes "$tmp/draw/shapes.json" --clocks "$tmp/clocks.txt" \
  --out "$out/compile_compare.json"
