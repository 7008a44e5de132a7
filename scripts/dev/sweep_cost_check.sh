#!/usr/bin/env bash
# One GPU, two builds side by side (issue 39): how much GPU time a sweep of the `default` profile takes with the OLD
# build and with the NEW one, on the same GPU one after the other, and whether they chose the same candidates.
# Builds nothing: give two build directories with gemmtune (e.g. main's and this branch's). About 3.5 minutes on an
# H200 (the old build's sweep 140 s), 6 with BREAKDOWN=1.
#
#   scripts/dev/sweep_cost_check.sh OLD_BUILD NEW_BUILD OUT_DIR
#
# Environment: PROFILE (default: default), DEVICE (CUDA index, default 0), BREAKDOWN=1 to also sweep with NEW
# --no-prune (today's rules, with the new build's per-stage cost in its JSON: where the old sweep's time goes).
#
# What it writes under OUT_DIR: old.db/.json/.txt/.err, new.*, choices.json (scripts/dev/compare_sweep_dbs.py: same,
# within noise, apart), estimate_*.txt (the dry-run estimates) and sweep_cost.json, the verdicts:
#   gpu_time: the NEW sweep's wall time over the OLD's (target <= 0.5); a sweep holds its GPU throughout, so its wall
#             time is the GPU time it costs;
#   choices:  the same problem keys, and the same chosen candidate or one within noise at >= 95% of problems;
#   estimate: the NEW build's dry-run estimate for one GPU, made before its sweep, against the measured wall (within
#             20%); and, after it, the estimates at the rates that sweep measured for 2 GPUs (which shard_check.sh
#             measures) and for `full` on 8 GPUs.
# Prints a summary table last.
set -uo pipefail
usage="usage: sweep_cost_check.sh OLD_BUILD NEW_BUILD OUT_DIR"
old_build=$(realpath "${1:?$usage}")
new_build=$(realpath "${2:?$usage}")
out=${3:?$usage}
mkdir -p "$out"
out=$(realpath "$out")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
profile=${PROFILE:-default}
device=${DEVICE:-0}
for b in "$old_build" "$new_build"; do
  [[ -x $b/gemmtune ]] || { echo "sweep_cost_check: no $b/gemmtune" >&2; exit 2; }
done
rm -f "$out"/{old,new,noprune}.{db,db-wal,db-shm,json,txt,err}

nvidia-smi --query-gpu=index,name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader -i "$device"

# Seconds of one GPU that a dry run estimates (its "whole plan ... (S s) of one GPU" line).
estimate_s() { sed -n 's/^whole plan .* (\([0-9.]*\) s) of one GPU.*/\1/p' "$1" | head -n1; }

"$new_build/gemmtune" sweep --profile "$profile" --dry-run --no-db --shards 1 > "$out/estimate_before.txt"
tail -4 "$out/estimate_before.txt"

# sweep NAME BUILD [ARGS...]: one sweep of the profile into OUT/NAME.db, its wall seconds in OUT/NAME.wall.
sweep() {
  local name=$1 build=$2
  shift 2
  local t0 t1
  t0=$(date +%s.%N)
  "$build/gemmtune" sweep --profile "$profile" --device "$device" --db "$out/$name.db" --json "$out/$name.json" "$@" \
    > "$out/$name.txt" 2> "$out/$name.err"
  local rc=$?
  t1=$(date +%s.%N)
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$t1" > "$out/$name.wall"
  echo "$rc" > "$out/$name.rc"
  echo "== $name: exit $rc, $(cat "$out/$name.wall") s"
  grep "^cost:" "$out/$name.txt"
}
sweep old "$old_build"
sweep new "$new_build"
[[ ${BREAKDOWN:-0} == 1 ]] && sweep noprune "$new_build" --no-prune

python3 "$here/compare_sweep_dbs.py" "$out/old.db" "$out/new.db" --label-a old --label-b new \
  --json "$out/choices.json" > "$out/choices.txt"
tail -3 "$out/choices.txt"

"$new_build/gemmtune" sweep --profile "$profile" --dry-run --db "$out/new.db" --shards 2 > "$out/estimate_2gpu.txt"
# full's dry run lists every problem and candidate first (about a million lines, 160 MB): keep its summary.
"$new_build/gemmtune" sweep --profile full --dry-run --db "$out/new.db" --shards 8 |
  tail -n 40 > "$out/estimate_full_8gpu.txt"
tail -2 "$out/estimate_full_8gpu.txt"

python3 - "$out" "$profile" "$(estimate_s "$out/estimate_before.txt")" "$(estimate_s "$out/estimate_2gpu.txt")" \
  "$(estimate_s "$out/estimate_full_8gpu.txt")" <<'PY'
import json, os, re, sys
out, profile, before, calibrated, full = sys.argv[1:6]
def run(name):
    path = f"{out}/{name}.json"
    r = {"wall_s": float(open(f"{out}/{name}.wall").read()), "exit": int(open(f"{out}/{name}.rc").read())}
    if os.path.exists(path):
        doc = json.load(open(path))
        r["device"] = doc["device"]["key"]
        r["records"] = len(doc["results"])
        r["problems"] = len(doc["problems"])
        if "cost" in doc:
            r["cost"] = doc["cost"]
    return r
def parallel_line(path):
    m = re.search(r"in parallel: about \S+ \(([0-9.]+) s", open(path).read())
    return float(m.group(1)) if m else None
old, new = run("old"), run("new")
doc = {"profile": profile, "device": new.get("device"), "old": old, "new": new}
if os.path.exists(f"{out}/noprune.wall"):
    doc["new_without_pruning"] = run("noprune")
ch = json.load(open(f"{out}/choices.json"))
ratio = new["wall_s"] / old["wall_s"]
est = float(before) if before else None
doc["gpu_time"] = {"new_over_old": ratio, "target": 0.5, "met": ratio <= 0.5}
doc["choices"] = {k: ch[k] for k in ("keys_a", "keys_b", "keys_same", "choices", "same", "within_noise", "apart",
                                     "same_or_within_noise_share")}
doc["choices"]["target_share"] = 0.95
doc["choices"]["met"] = ch["keys_same"] and ch["same_or_within_noise_share"] >= 0.95
doc["estimate"] = {
    "one_gpu_builtin_s": est,
    "one_gpu_measured_s": new["wall_s"],
    "error_pct": 100 * (est - new["wall_s"]) / new["wall_s"] if est else None,
    "met": bool(est) and abs(est - new["wall_s"]) <= 0.2 * new["wall_s"],
    "two_gpus_at_measured_rates_s": parallel_line(f"{out}/estimate_2gpu.txt"),
    "full_one_gpu_at_measured_rates_s": float(full) if full else None,
    "full_8_gpus_at_measured_rates_s": parallel_line(f"{out}/estimate_full_8gpu.txt"),
}
json.dump(doc, open(f"{out}/sweep_cost.json", "w"), indent=2)
c = new.get("cost", {})
print()
print(f"{'check':44s} {'ok?':5s} detail")
print(f"{'GPU time, new / old (<= 0.5)':44s} {'ok' if ratio <= 0.5 else 'FAIL':5s} "
      f"{new['wall_s']:.1f} s / {old['wall_s']:.1f} s = {ratio:.2f} (exits {old['exit']}, {new['exit']})")
print(f"{'same keys; same choice or within noise >=95%':44s} {'ok' if doc['choices']['met'] else 'FAIL':5s} "
      f"keys {ch['keys_a']}/{ch['keys_b']}, {ch['same']} same, {ch['within_noise']} within noise, {ch['apart']} apart "
      f"({100 * ch['same_or_within_noise_share']:.1f}%)")
if est:
    print(f"{'dry-run estimate before the run (within 20%)':44s} {'ok' if doc['estimate']['met'] else 'FAIL':5s} "
          f"{est:.1f} s estimated, {new['wall_s']:.1f} s measured ({doc['estimate']['error_pct']:+.0f}%)")
if c:
    print(f"{'new: where the time went':44s} {'':5s} prepare {c['prepare_s']:.1f}, verify+first batch "
          f"{c['verify_s']:.1f}, sampling {c['sample_s']:.1f}, finalists {c['finalist_s']:.1f}, db {c['store_s']:.1f}, "
          f"setup {c['setup_s']:.1f} s")
    print(f"{'new: candidates':44s} {'':5s} {c['candidates']}: {c['sampled']} sampled, {c['pruned']} pruned; "
          f"{c['finalists']} challengers timed, {c['out_of_reach']} out of reach")
e = doc["estimate"]
print(f"{'estimates at the rates the new sweep measured':44s} {'':5s} 2 GPUs {e['two_gpus_at_measured_rates_s']} s; "
      f"full: {e['full_one_gpu_at_measured_rates_s']} s on one GPU, {e['full_8_gpus_at_measured_rates_s']} s on 8")
PY
