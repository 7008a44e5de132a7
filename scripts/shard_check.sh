#!/usr/bin/env bash
# Shards, merge, kill/resume and --devices on one GPU (issue 14). Builds nothing: takes a build directory with
# gemmtune and an output directory, runs, and prints a verdict table last. About 5-7 minutes on an H200.
#
#   scripts/shard_check.sh build /tmp/shard_check
#
# 1. `ci` swept unsharded into one db, then as 4 shards one after another into 4 dbs, merged with `cache merge`:
#    the merged db must have the same problem keys, and per problem the same chosen candidate or one within the
#    noise of it. The rule: two different chosen candidates are within noise when, in each of the two sweeps, the
#    other's median is within 3% of the chosen one's or their p10-p90 ranges overlap (the same rule both ways, so
#    a candidate that only won by luck in one sweep and lost clearly in the other fails).
#    The gate and the report also run on the merged db's outputs.
# 2. `ci` shard 1/4 killed with kill -9 after 3 problems, then resumed with --resume: it completes, and measures
#    again none of what it had stored.
# 3. `quick` with --devices all (one worker per GPU; one GPU here) into a db: every problem done; then Ctrl-C
#    (SIGINT) to the coordinator mid-sweep: exit 130, no worker left running, and --resume completes it.
set -uo pipefail
build=$(realpath "${1:?usage: shard_check.sh BUILD_DIR OUT_DIR}")
out=${2:?usage: shard_check.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
out=$(realpath "$out")
gt="$build/gemmtune"
rm -f "$out"/*.db "$out"/*.db-wal "$out"/*.db-shm "$out"/*.json
declare -a verdicts
verdict() { verdicts+=("$(printf '%-44s %-5s %s' "$1" "$2" "$3")"); echo "== $1: $2 $3"; }

# SQL on a db, read-only, one value per line.
sql() { python3 -c "
import sqlite3, sys
con = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
for row in con.execute(sys.argv[2]): print('|'.join(str(v) for v in row))" "$1" "$2"; }
done_count() { sql "$1" "SELECT count(*) FROM problems_done" 2>/dev/null || echo 0; }

nvidia-smi --query-gpu=index,name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
"$gt" devices --json | python3 -c "import json,sys; [print(d['index'], d['key']) for d in json.load(sys.stdin)]"
"$gt" sweep --profile ci --dry-run --shards 4 | tail -8

# 1. Unsharded, then 4 shards one after another, merged.
t0=$SECONDS
"$gt" sweep --profile ci --db "$out/unsharded.db" --json "$out/unsharded.json" > "$out/unsharded.txt" 2> "$out/unsharded.err"
rc_un=$?
t_un=$((SECONDS - t0))
t0=$SECONDS
rc_shards=0
for i in 0 1 2 3; do
  "$gt" sweep --profile ci --shard "$i/4" --db "$out/shard-$i.db" --json "$out/shard-$i.json" \
    > "$out/shard-$i.txt" 2> "$out/shard-$i.err"
  rc=$?
  [[ $rc -gt $rc_shards ]] && rc_shards=$rc
  grep "^gemmtune: shard" "$out/shard-$i.err"
done
t_sh=$((SECONDS - t0))
verdict "ci unsharded sweep (exit, seconds)" "$([[ $rc_un -le 1 ]] && echo ok || echo FAIL)" "exit $rc_un, ${t_un}s"
verdict "ci as 4 shards one after another" "$([[ $rc_shards -le 1 ]] && echo ok || echo FAIL)" "worst exit $rc_shards, ${t_sh}s"

"$gt" cache merge "$out/merged.db" "$out"/shard-{0,1,2,3}.db --sweep-json "$out/merged.json" > "$out/merge.txt" 2>&1
rc_merge=$?
cat "$out/merge.txt"
verdict "cache merge OUT.db shard-*.db --sweep-json" "$([[ $rc_merge -eq 0 ]] && echo ok || echo FAIL)" "exit $rc_merge"

python3 - "$out/unsharded.db" "$out/merged.db" > "$out/compare.txt" <<'PY'
import sqlite3, sys
def open_ro(p): return sqlite3.connect('file:' + p + '?mode=ro', uri=True)
un, me = open_ro(sys.argv[1]), open_ro(sys.argv[2])
def done(c): return {r[0] for r in c.execute("SELECT problem_key FROM problems_done")}
def chosen(c): return dict(c.execute("SELECT problem_key, candidate_id FROM algo_cache"))
def stats(c):  # per problem and candidate, (median, p10, p90) of the measurement behind problems_done
    q = ("SELECT m.problem_key, m.candidate_id, m.median_us, m.p10_us, m.p90_us FROM measurements m JOIN problems_done d "
         "ON d.problem_key = m.problem_key AND d.run_id = m.run_id AND d.device_key = m.device_key WHERE m.status = 'ok'")
    out = {}
    for p, cand, med, p10, p90 in c.execute(q): out.setdefault(p, {})[cand] = (med, p10, p90)
    return out
def close(s, a, b):  # in one sweep's stats s: is b within noise of a?
    if a not in s or b not in s: return False
    (ma, la, ha), (mb, lb, hb) = s[a], s[b]
    return mb <= ma * 1.03 or (lb <= ha and la <= hb)
du, dm = done(un), done(me)
cu, cm = chosen(un), chosen(me)
su, sm = stats(un), stats(me)
print(f"keys: unsharded {len(du)}, merged {len(dm)}, same: {du == dm}")
print(f"measurements: unsharded {un.execute('SELECT count(*) FROM measurements').fetchone()[0]}, "
      f"merged {me.execute('SELECT count(*) FROM measurements').fetchone()[0]}")
same = noise = apart = 0
for p in sorted(set(cu) | set(cm)):
    a, b = cu.get(p), cm.get(p)
    if a == b: same += 1; continue
    if a and b and close(su.get(p, {}), a, b) and close(sm.get(p, {}), b, a):
        noise += 1; print(f"within noise  {p}: {a} vs {b}")
    else:
        apart += 1; print(f"DIFFERENT     {p}: {a} {su.get(p, {}).get(a)} vs {b} {sm.get(p, {}).get(b)}")
print(f"chosen: {same} same, {noise} within noise, {apart} apart")
print("RESULT", "keys_same" if du == dm else "keys_differ", same, noise, apart)
PY
cat "$out/compare.txt"
read -r _ keys same noise apart < <(grep '^RESULT' "$out/compare.txt")
verdict "merged vs unsharded: problem keys" "$([[ $keys == keys_same ]] && echo ok || echo FAIL)" "$keys"
verdict "merged vs unsharded: chosen candidates" "$([[ ${apart:-1} -eq 0 && -n ${same:-} ]] && echo ok || echo FAIL)" \
  "${same:-?} same, ${noise:-?} within noise, ${apart:-?} apart"

"$gt" gate --baseline "$out/unsharded.json" --current "$out/merged.json" > "$out/gate.txt" 2>&1
rc_gate=$?
tail -3 "$out/gate.txt"
# The cases must match (exit 2 would say they do not); a regression (1) between two sweeps is the GPU's noise.
verdict "gate unsharded.json vs merged.json" "$([[ $rc_gate -le 1 ]] && echo ok || echo FAIL)" \
  "exit $rc_gate (0 pass, 1 a case slower beyond noise, 2 cases differ)"
"$gt" report --db "$out/unsharded.db" --out "$out/report-unsharded" --json-only > /dev/null 2>&1
"$gt" report --db "$out/merged.db" --out "$out/report-merged" --json-only > /dev/null 2>&1
report_counts=$(python3 - "$out" <<'PY'
import json, sys
n = [len(json.load(open(f"{sys.argv[1]}/report-{w}/report.json"))["devices"][0]["latest_run"]["measurements"])
     for w in ("unsharded", "merged")]
print(n[0], n[1])
PY
)
read -r rep_un rep_me <<< "${report_counts:-0 1}"
verdict "report: latest measurements, unsharded vs merged" "$([[ $rep_un -eq $rep_me && $rep_un -gt 0 ]] && echo ok || echo FAIL)" \
  "$rep_un vs $rep_me"

# 2. kill -9 midway, then --resume.
shard_size=$(sql "$out/shard-1.db" "SELECT count(*) FROM problems_done")
"$gt" sweep --profile ci --shard 1/4 --db "$out/killed.db" > "$out/killed.txt" 2> "$out/killed.err" &
pid=$!
deadline=$((SECONDS + 240))
while [[ $SECONDS -lt $deadline ]] && kill -0 "$pid" 2>/dev/null; do
  [[ $(done_count "$out/killed.db") -ge 3 ]] && break
  sleep 0.2
done
kill -9 "$pid" 2>/dev/null
wait "$pid"
rc_kill=$?
at_kill=$(done_count "$out/killed.db")
"$gt" sweep --profile ci --shard 1/4 --db "$out/killed.db" --resume > "$out/resumed.txt" 2> "$out/resumed.err"
rc_resume=$?
skipped=$(grep -c "skipped (--resume)" "$out/resumed.err")
final=$(done_count "$out/killed.db")
ok=FAIL
[[ $rc_kill -eq 137 && $at_kill -ge 1 && $at_kill -lt $shard_size && $rc_resume -le 1 && $skipped -eq $at_kill &&
   $final -eq $shard_size ]] && ok=ok
verdict "kill -9 shard 1/4 midway, then --resume" "$ok" \
  "killed (exit $rc_kill) at $at_kill/$shard_size; resume exit $rc_resume skipped $skipped, done $final/$shard_size"

# 3. --devices all, on however many GPUs there are (one here).
t0=$SECONDS
"$gt" sweep --profile quick --devices all --db "$out/devices.db" --json "$out/devices.json" \
  > "$out/devices.txt" 2> "$out/devices.err"
rc_dev=$?
tail -3 "$out/devices.err"
quick_total=$("$gt" sweep --profile quick --dry-run | grep -c '^\[')
dev_done=$(done_count "$out/devices.db")
dev_json=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(len({r['problem_key'] for r in d['results']}))" \
  "$out/devices.json" 2>/dev/null || echo 0)
verdict "--devices all (quick)" "$([[ $rc_dev -le 1 && $dev_done -eq $quick_total && $dev_json -eq $quick_total ]] && echo ok || echo FAIL)" \
  "exit $rc_dev, $((SECONDS - t0))s; db $dev_done/$quick_total problems, json $dev_json"

"$gt" sweep --profile quick --devices all --db "$out/interrupted.db" > "$out/interrupted.txt" 2> "$out/interrupted.err" &
pid=$!
deadline=$((SECONDS + 120))
while [[ $SECONDS -lt $deadline ]] && kill -0 "$pid" 2>/dev/null; do
  [[ $(done_count "$out/interrupted.db") -ge 2 ]] && break
  sleep 0.2
done
kill -INT "$pid"
wait "$pid"
rc_int=$?
sleep 1
left=$(ps -eo args | grep -c "[g]emmtune sweep --profile quick --db $out/interrupted.db")
at_int=$(done_count "$out/interrupted.db")
"$gt" sweep --profile quick --devices all --db "$out/interrupted.db" --resume > "$out/int-resumed.txt" 2> "$out/int-resumed.err"
rc_int_resume=$?
int_final=$(done_count "$out/interrupted.db")
verdict "--devices all: SIGINT, then --resume" \
  "$([[ $rc_int -eq 130 && $left -eq 0 && $rc_int_resume -le 1 && $int_final -eq $quick_total ]] && echo ok || echo FAIL)" \
  "exit $rc_int at $at_int/$quick_total, $left worker(s) left; resume exit $rc_int_resume, done $int_final"

echo
printf '%-44s %-5s %s\n' "check" "ok?" "detail"
printf '%s\n' "${verdicts[@]}"
