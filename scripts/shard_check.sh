#!/usr/bin/env bash
# Shards, merge, kill/resume and --devices (issues 14, 15, 39). Builds nothing: takes a build directory with gemmtune
# and an output directory, runs, and prints a verdict table last.
#
#   scripts/shard_check.sh BUILD_DIR OUT_DIR
#
# With two GPUs or more (GPUS, default 0,1; PROFILE, default `default`): the two-GPU form, about 4-6 minutes on two
# H100s or H200s, which writes OUT_DIR/scale.json.
#   A. PROFILE with --devices 0 (one worker on GPU 0): the one-GPU reference (one.db).
#   B. PROFILE with --devices 0,1 (one worker per GPU, into one db): the speedup over A (target >= 1.8x), the same
#      problem keys, the same chosen candidates or ones within noise (scripts/dev/compare_sweep_dbs.py).
#   C. two shard workers pinned one per GPU (--shard 0/2 --device 0, --shard 1/2 --device 1), each into its own db;
#      shard 1 killed with kill -9 once it has stored 5 problems and restarted with --resume; then `cache merge`:
#      the merged db against A as in B, and the resumed worker measured none of what it had stored.
#   D. `sweep --dry-run --shards 2` at the rates A measured (--db one.db): its estimate for two GPUs against B's and
#      C's measured wall time (within 20%); and the estimate for `full` on 8 GPUs at those rates.
#   E. quick with --devices 0,1 and Ctrl-C (SIGINT) to the coordinator mid-sweep: exit 130, no worker left, and
#      --resume completes it.
# scale.json: per run its wall time and each GPU's busy time, the speedups, keys, choices, the estimates.
#
# With one GPU: the one-GPU form of issue 14, about 5-7 minutes on an H200:
# 1. `ci` swept unsharded into one db, then as 4 shards one after another into 4 dbs, merged with `cache merge`: the
#    same problem keys, per problem the same chosen candidate or one within noise; the gate and the report also run
#    on the merged db's outputs.
# 2. `ci` shard 1/4 killed with kill -9 after 3 problems, then resumed with --resume: it completes, and measures
#    again none of what it had stored.
# 3. `quick` with --devices all into a db: every problem done; then E above on the one GPU.
set -uo pipefail
build=$(realpath "${1:?usage: shard_check.sh BUILD_DIR OUT_DIR}")
out=${2:?usage: shard_check.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
out=$(realpath "$out")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
gt="$build/gemmtune"
rm -f "$out"/*.db "$out"/*.db-wal "$out"/*.db-shm "$out"/*.json
declare -a verdicts
verdict() { verdicts+=("$(printf '%-46s %-5s %s' "$1" "$2" "$3")"); echo "== $1: $2 $3"; }

# SQL on a db, read-only, one value per line.
sql() { python3 -c "
import sqlite3, sys
con = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
for row in con.execute(sys.argv[2]): print('|'.join(str(v) for v in row))" "$1" "$2"; }
done_count() { sql "$1" "SELECT count(*) FROM problems_done" 2>/dev/null || echo 0; }
now() { date +%s.%N; }
seconds() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }
# compare NAME A.db B.db: chosen candidates of B against A; leaves "KEYS SAME NOISE APART" in $compared.
compare() {
  python3 "$here/dev/compare_sweep_dbs.py" "$2" "$3" --json "$out/compare-$1.json" > "$out/compare-$1.txt"
  tail -2 "$out/compare-$1.txt"
  compared=$(grep '^RESULT' "$out/compare-$1.txt" | cut -d' ' -f2-)
}
choices_ok() { local k s _ a; read -r k s _ a <<< "$1"; [[ $k == keys_same && ${a:-1} -eq 0 && -n ${s:-} ]]; }
# kill9_after DB COUNT PID: kill -9 the sweep PID once DB has COUNT problems done (or after 240 s). The caller waits.
kill9_after() {
  local deadline=$((SECONDS + 240))
  while [[ $SECONDS -lt $deadline ]] && kill -0 "$3" 2>/dev/null; do
    [[ $(done_count "$1") -ge $2 ]] && break
    sleep 0.2
  done
  kill -9 "$3" 2>/dev/null
}

nvidia-smi --query-gpu=index,name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
"$gt" devices --json | python3 -c "import json,sys; [print(d['index'], d['key']) for d in json.load(sys.stdin)]"
gpu_count=$("$gt" devices --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))" 2>/dev/null || echo 0)

# E: SIGINT to a --devices coordinator mid-sweep, then --resume.
interrupt_and_resume() {
  local devices=$1 quick_total
  quick_total=$("$gt" sweep --profile quick --dry-run --no-db | grep -c '^\[')
  "$gt" sweep --profile quick --devices "$devices" --db "$out/interrupted.db" > "$out/interrupted.txt" \
    2> "$out/interrupted.err" &
  local pid=$! deadline=$((SECONDS + 120))
  while [[ $SECONDS -lt $deadline ]] && kill -0 "$pid" 2>/dev/null; do
    [[ $(done_count "$out/interrupted.db") -ge 2 ]] && break
    sleep 0.2
  done
  kill -INT "$pid"
  wait "$pid"
  local rc_int=$?
  sleep 1
  local left at_int
  left=$(ps -eo args | grep -c "[g]emmtune sweep --profile quick --db $out/interrupted.db")
  at_int=$(done_count "$out/interrupted.db")
  "$gt" sweep --profile quick --devices "$devices" --db "$out/interrupted.db" --resume > "$out/int-resumed.txt" \
    2> "$out/int-resumed.err"
  local rc_resume=$? final
  final=$(done_count "$out/interrupted.db")
  verdict "--devices $devices: SIGINT, then --resume" \
    "$([[ $rc_int -eq 130 && $left -eq 0 && $rc_resume -le 1 && $final -eq $quick_total ]] && echo ok || echo FAIL)" \
    "exit $rc_int at $at_int/$quick_total, $left worker(s) left; resume exit $rc_resume, done $final"
}

two_gpus() {
  local profile=${PROFILE:-default} gpus=${GPUS:-0,1}
  local g0=${gpus%%,*} g1=${gpus##*,}
  local total
  total=$("$gt" sweep --profile "$profile" --dry-run --no-db | grep -c '^\[')

  # A. One GPU.
  local t0 t1
  t0=$(now)
  "$gt" sweep --profile "$profile" --devices "$g0" --db "$out/one.db" --json "$out/one.json" > "$out/one.txt" \
    2> "$out/one.err"
  local rc_one=$?
  t1=$(now)
  local wall_one
  wall_one=$(seconds "$t0" "$t1")
  grep "^cost:" "$out/one.txt"
  verdict "A. $profile on GPU $g0 alone (--devices $g0)" "$([[ $rc_one -le 1 ]] && echo ok || echo FAIL)" \
    "exit $rc_one, ${wall_one}s, $(done_count "$out/one.db")/$total problems"

  # D, before B and C: what the dry run says two GPUs take, at the rates A measured.
  "$gt" sweep --profile "$profile" --dry-run --db "$out/one.db" --shards 2 > "$out/estimate_2gpu.txt"
  # full's dry run lists every problem and candidate first (about a million lines, 160 MB): keep its summary.
  "$gt" sweep --profile full --dry-run --db "$out/one.db" --shards 8 |
  tail -n 40 > "$out/estimate_full_8gpu.txt"
  tail -3 "$out/estimate_2gpu.txt"
  tail -1 "$out/estimate_full_8gpu.txt"

  # B. Both GPUs, one worker each, one db.
  t0=$(now)
  "$gt" sweep --profile "$profile" --devices "$gpus" --db "$out/two.db" --json "$out/two.json" > "$out/two.txt" \
    2> "$out/two.err"
  local rc_two=$?
  t1=$(now)
  local wall_two
  wall_two=$(seconds "$t0" "$t1")
  grep "^cost:" "$out/two.txt"
  local speedup
  speedup=$(python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$wall_one" "$wall_two")
  verdict "B. --devices $gpus: speedup over A (>= 1.8)" \
    "$([[ $rc_two -le 1 ]] && python3 -c "import sys; sys.exit(float(sys.argv[1]) < 1.8)" "$speedup" && echo ok || echo FAIL)" \
    "exit $rc_two, ${wall_two}s vs ${wall_one}s: ${speedup}x"
  compare devices "$out/one.db" "$out/two.db"
  local devices_choices=$compared
  verdict "B. --devices $gpus vs A: keys, choices" "$(choices_ok "$devices_choices" && echo ok || echo FAIL)" \
    "$devices_choices (keys, same, within noise, apart)"

  # C. Two shard workers pinned one per GPU, each into its own db; shard 1 killed and resumed; merged.
  local shard_size
  shard_size=$("$gt" sweep --profile "$profile" --dry-run --no-db --shard 1/2 | grep -c '^\[')
  t0=$(now)
  # Shard 0 in a subshell that notes when it ends; shard 1 directly, so that kill -9 reaches the sweep itself.
  ( "$gt" sweep --profile "$profile" --shard 0/2 --device "$g0" --db "$out/pinned-0.db" > "$out/pinned-0.txt" \
      2> "$out/pinned-0.err"
    echo $? > "$out/pinned-0.rc"
    now > "$out/pinned-0.end" ) &
  local pid0=$!
  "$gt" sweep --profile "$profile" --shard 1/2 --device "$g1" --db "$out/pinned-1.db" > "$out/pinned-1.txt" \
    2> "$out/pinned-1.err" &
  local pid1=$!
  kill9_after "$out/pinned-1.db" 5 "$pid1"
  wait "$pid1"
  local rc_kill=$? t_kill at_kill
  t_kill=$(now)
  at_kill=$(done_count "$out/pinned-1.db")
  "$gt" sweep --profile "$profile" --shard 1/2 --device "$g1" --db "$out/pinned-1.db" --resume \
    > "$out/pinned-1-resumed.txt" 2> "$out/pinned-1-resumed.err"
  local rc_resume=$? t_resumed
  t_resumed=$(now)
  wait "$pid0"
  local rc_pinned0 t_done0 skipped final
  rc_pinned0=$(cat "$out/pinned-0.rc" 2>/dev/null || echo 99)
  t_done0=$(cat "$out/pinned-0.end" 2>/dev/null || now)
  skipped=$(grep -c "skipped (--resume)" "$out/pinned-1-resumed.err")
  final=$(done_count "$out/pinned-1.db")
  verdict "C. shard 1/2 on GPU $g1: kill -9, then --resume" \
    "$([[ $rc_kill -eq 137 && $at_kill -ge 1 && $at_kill -lt $shard_size && $rc_resume -le 1 && $skipped -eq $at_kill && $final -eq $shard_size ]] && echo ok || echo FAIL)" \
    "killed (exit $rc_kill) at $at_kill/$shard_size; resume exit $rc_resume skipped $skipped, done $final/$shard_size"
  "$gt" cache merge "$out/pinned-merged.db" "$out/pinned-0.db" "$out/pinned-1.db" > "$out/pinned-merge.txt" 2>&1
  local rc_merge=$?
  local wall_pinned wall_pinned0 wall_pinned1
  wall_pinned0=$(seconds "$t0" "$t_done0")
  wall_pinned1=$(seconds "$t0" "$t_resumed")
  wall_pinned=$(python3 -c "import sys; print(max(float(a) for a in sys.argv[1:]))" "$wall_pinned0" "$wall_pinned1")
  compare pinned "$out/one.db" "$out/pinned-merged.db"
  local pinned_choices=$compared
  verdict "C. pinned shards merged vs A: keys, choices" \
    "$([[ $rc_pinned0 -le 1 && $rc_merge -eq 0 ]] && choices_ok "$pinned_choices" && echo ok || echo FAIL)" \
    "$pinned_choices; shard 0 exit $rc_pinned0, merge exit $rc_merge, ${wall_pinned}s with the kill"

  python3 - "$out" "$profile" "$wall_one" "$wall_two" "$wall_pinned0" "$wall_pinned1" "$t0" "$t_kill" "$at_kill" \
    "$skipped" "$rc_one" "$rc_two" "$devices_choices" "$pinned_choices" > "$out/scale_summary.txt" <<'PY'
import json, re, sys
(out, profile, one, two, pinned0, pinned1, t0, t_kill, at_kill, skipped, rc_one, rc_two, devices_choices,
 pinned_choices) = sys.argv[1:15]
one, two, pinned0, pinned1 = float(one), float(two), float(pinned0), float(pinned1)
def doc(name):
    try:
        return json.load(open(f"{out}/{name}.json"))
    except (OSError, ValueError):
        return {}
def choices(name):
    try:
        c = json.load(open(f"{out}/compare-{name}.json"))
    except (OSError, ValueError):
        return {}
    return {k: c[k] for k in ("keys_a", "keys_b", "keys_same", "same", "within_noise", "apart",
                              "same_or_within_noise_share")}
def parallel_s(path):
    m = re.search(r"in parallel: about \S+ \(([0-9.]+) s", open(path).read())
    return float(m.group(1)) if m else None
def whole_s(path):
    m = re.search(r"whole plan \S+ \(([0-9.]+) s\) of one GPU", open(path).read())
    return float(m.group(1)) if m else None
d_one, d_two = doc("one"), doc("two")
est2 = parallel_s(f"{out}/estimate_2gpu.txt")
pinned = max(pinned0, pinned1)
scale = {
    "profile": profile,
    "device": d_one.get("device", {}).get("key"),
    "one_gpu": {"wall_s": one, "exit": int(rc_one), "cost": d_one.get("cost")},
    "devices_two_gpus": {
        "wall_s": two, "exit": int(rc_two), "speedup": one / two, "target_speedup": 1.8,
        "per_gpu": d_two.get("cost", {}).get("gpus"), "choices_vs_one_gpu": choices("devices"),
    },
    "pinned_shards": {
        "wall_s": pinned, "speedup": one / pinned,
        "per_gpu": [{"shard": "0/2", "wall_s": pinned0},
                    {"shard": "1/2", "wall_s": pinned1, "killed_after_s": float(t_kill) - float(t0),
                     "killed_at_problems": int(at_kill), "resume_skipped": int(skipped)}],
        "choices_vs_one_gpu": choices("pinned"),
    },
    "estimate": {
        "source": "sweep --dry-run --shards 2 --db one.db (the rates run A measured)",
        "two_gpus_s": est2,
        "devices_measured_s": two,
        "devices_error_pct": 100 * (est2 - two) / two if est2 else None,
        "pinned_measured_s": pinned,
        "within_20pct_of_devices": bool(est2) and abs(est2 - two) <= 0.2 * two,
        "full_one_gpu_s": whole_s(f"{out}/estimate_full_8gpu.txt"),
        "full_8_gpus_s": parallel_s(f"{out}/estimate_full_8gpu.txt"),
    },
}
json.dump(scale, open(f"{out}/scale.json", "w"), indent=2)
e = scale["estimate"]
print("ok" if e["within_20pct_of_devices"] else "FAIL",
      f"{est2} s estimated for 2 GPUs, {two:.1f} s measured (--devices), {pinned:.1f} s (pinned, with the kill); "
      f"full: {e['full_one_gpu_s']} s on one GPU, {e['full_8_gpus_s']} s on 8")
PY
  local est_line
  est_line=$(cat "$out/scale_summary.txt")
  verdict "D. dry-run estimate for 2 GPUs (within 20%)" "${est_line%% *}" "${est_line#* }"
}

one_gpu() {
  "$gt" sweep --profile ci --dry-run --no-db --shards 4 | tail -8

  # 1. Unsharded, then 4 shards one after another, merged.
  local t0=$SECONDS
  "$gt" sweep --profile ci --db "$out/unsharded.db" --json "$out/unsharded.json" > "$out/unsharded.txt" \
    2> "$out/unsharded.err"
  local rc_un=$? t_un=$((SECONDS - t0))
  t0=$SECONDS
  local rc_shards=0 i rc
  for i in 0 1 2 3; do
    "$gt" sweep --profile ci --shard "$i/4" --db "$out/shard-$i.db" --json "$out/shard-$i.json" \
      > "$out/shard-$i.txt" 2> "$out/shard-$i.err"
    rc=$?
    [[ $rc -gt $rc_shards ]] && rc_shards=$rc
    grep "^gemmtune: shard" "$out/shard-$i.err"
  done
  local t_sh=$((SECONDS - t0))
  verdict "ci unsharded sweep (exit, seconds)" "$([[ $rc_un -le 1 ]] && echo ok || echo FAIL)" "exit $rc_un, ${t_un}s"
  verdict "ci as 4 shards one after another" "$([[ $rc_shards -le 1 ]] && echo ok || echo FAIL)" \
    "worst exit $rc_shards, ${t_sh}s"

  "$gt" cache merge "$out/merged.db" "$out"/shard-{0,1,2,3}.db --sweep-json "$out/merged.json" > "$out/merge.txt" 2>&1
  local rc_merge=$?
  cat "$out/merge.txt"
  verdict "cache merge OUT.db shard-*.db --sweep-json" "$([[ $rc_merge -eq 0 ]] && echo ok || echo FAIL)" \
    "exit $rc_merge"
  compare merged "$out/unsharded.db" "$out/merged.db"
  verdict "merged vs unsharded: keys, chosen candidates" "$(choices_ok "$compared" && echo ok || echo FAIL)" \
    "$compared (keys, same, within noise, apart)"

  "$gt" gate --baseline "$out/unsharded.json" --current "$out/merged.json" > "$out/gate.txt" 2>&1
  local rc_gate=$?
  tail -3 "$out/gate.txt"
  # The cases must match (exit 2 would say they do not); a regression (1) between two sweeps is the GPU's noise.
  verdict "gate unsharded.json vs merged.json" "$([[ $rc_gate -le 1 ]] && echo ok || echo FAIL)" \
    "exit $rc_gate (0 pass, 1 a case slower beyond noise, 2 cases differ)"
  "$gt" report --db "$out/unsharded.db" --out "$out/report-unsharded" --json-only > /dev/null 2>&1
  "$gt" report --db "$out/merged.db" --out "$out/report-merged" --json-only > /dev/null 2>&1
  local report_counts rep_un rep_me
  report_counts=$(python3 - "$out" <<'PY'
import json, sys
n = [len(json.load(open(f"{sys.argv[1]}/report-{w}/report.json"))["devices"][0]["latest_run"]["measurements"])
     for w in ("unsharded", "merged")]
print(n[0], n[1])
PY
)
  read -r rep_un rep_me <<< "${report_counts:-0 1}"
  verdict "report: latest measurements, unsharded vs merged" \
    "$([[ $rep_un -eq $rep_me && $rep_un -gt 0 ]] && echo ok || echo FAIL)" "$rep_un vs $rep_me"

  # 2. kill -9 midway, then --resume.
  local shard_size
  shard_size=$(sql "$out/shard-1.db" "SELECT count(*) FROM problems_done")
  "$gt" sweep --profile ci --shard 1/4 --db "$out/killed.db" > "$out/killed.txt" 2> "$out/killed.err" &
  local pid=$!
  kill9_after "$out/killed.db" 3 "$pid"
  wait "$pid"
  local rc_kill=$? at_kill
  at_kill=$(done_count "$out/killed.db")
  "$gt" sweep --profile ci --shard 1/4 --db "$out/killed.db" --resume > "$out/resumed.txt" 2> "$out/resumed.err"
  local rc_resume=$? skipped final
  skipped=$(grep -c "skipped (--resume)" "$out/resumed.err")
  final=$(done_count "$out/killed.db")
  verdict "kill -9 shard 1/4 midway, then --resume" \
    "$([[ $rc_kill -eq 137 && $at_kill -ge 1 && $at_kill -lt $shard_size && $rc_resume -le 1 && $skipped -eq $at_kill && $final -eq $shard_size ]] && echo ok || echo FAIL)" \
    "killed (exit $rc_kill) at $at_kill/$shard_size; resume exit $rc_resume skipped $skipped, done $final/$shard_size"

  # 3. --devices all, on the one GPU.
  t0=$SECONDS
  "$gt" sweep --profile quick --devices all --db "$out/devices.db" --json "$out/devices.json" \
    > "$out/devices.txt" 2> "$out/devices.err"
  local rc_dev=$? quick_total dev_done dev_json
  tail -3 "$out/devices.err"
  quick_total=$("$gt" sweep --profile quick --dry-run --no-db | grep -c '^\[')
  dev_done=$(done_count "$out/devices.db")
  dev_json=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(len({r['problem_key'] for r in d['results']}))" \
    "$out/devices.json" 2>/dev/null || echo 0)
  verdict "--devices all (quick)" \
    "$([[ $rc_dev -le 1 && $dev_done -eq $quick_total && $dev_json -eq $quick_total ]] && echo ok || echo FAIL)" \
    "exit $rc_dev, $((SECONDS - t0))s; db $dev_done/$quick_total problems, json $dev_json"
}

if [[ $gpu_count -ge 2 ]]; then
  two_gpus
  interrupt_and_resume "${GPUS:-0,1}"
else
  one_gpu
  interrupt_and_resume all
fi

echo
printf '%-46s %-5s %s\n' "check" "ok?" "detail"
printf '%s\n' "${verdicts[@]}"
if [[ -f $out/scale.json ]]; then echo "scale.json: $out/scale.json"; fi
