#!/usr/bin/env bash
# Issue 46 on the GPU machine: the tuning loop as a new user runs it, from an empty directory, naming no db anywhere.
# XDG_CACHE_HOME is a fresh temporary directory (GEMMTUNE_DB unset), so the default db is
# $XDG_CACHE_HOME/gemmtune/gemmtune.db, made by the first flush. In order:
#   1. `gemmtune paths` in the empty directory;
#   2. README's PyTorch quick start, then default_runtime().flush() and gemmtune.sweep_misses();
#   3. a fresh Python process: gemmtune.Runtime() finds every recorded miss as an exact cache entry;
#   4. from another directory: `gemmtune paths`, `gemmtune sweep --from-misses --dry-run`, `gemmtune cache show`;
#   5. GEMMTUNE_DB through a regular file: flush() raises naming GEMMTUNE_DB, and the exit warns in exactly one line;
#   6. only with ROOFLINE_DEFAULT=1 (about 70 s more): `sweep --profile default` and `gemmtune report` of it, its
#      roofline PNG copied to OUT_DIR and its labels checked apart (tests/scripts/test_report_roofline.py's check).
# Run from the repository root with the build in build/ (BUILD_DIR overrides). Prints what each step printed and a
# summary; exit 0 only if every check passed.
#   usage: [ROOFLINE_DEFAULT=1] scripts/dev/default_db_device_check.sh [OUT_DIR]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${BUILD_DIR:-$root/build}" && pwd) || exit 2
out=${1:-}
[[ -z $out ]] || { mkdir -p "$out" && out=$(cd "$out" && pwd); } || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/app" "$work/other" "$work/cache"
unset GEMMTUNE_DB
export XDG_CACHE_HOME=$work/cache PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH} PATH=$build:$PATH
status=0
summary=()
check() {  # check NAME CONDITION_STATUS
  summary+=("$(printf '%-44s %s' "$1" "$([[ $2 == 0 ]] && echo ok || echo FAILED)")")
  [[ $2 == 0 ]] || status=1
}

echo "== 1. gemmtune paths, in the empty directory $work/app =="
cd "$work/app" || exit 2
gemmtune paths
check "paths names the XDG cache db" "$(gemmtune paths | grep -q "^db    $work/cache/gemmtune/gemmtune.db$"; echo $?)"

echo "== 2. README's PyTorch quick start, flush, sweep_misses =="
timeout 240 python3 - "$work/state.json" <<'PY'
import json, os, sqlite3, sys, time
import torch, gemmtune, gemmtune.torch
layer = gemmtune.torch.FusedLinear(1024, 4096, activation="gelu", dropout=0.1).cuda()
y = layer(torch.randn(512, 1024, device="cuda"))
y.sum().backward()                                # the fused backward
fast = gemmtune.torch.FusedLinear.from_linear(torch.nn.Linear(1024, 4096).cuda(), activation="gelu")
torch.cuda.synchronize()
rt = gemmtune.torch.default_runtime()
print("default runtime:", rt)
print("db exists before flush:", os.path.exists(rt.db))
rt.flush()
print("db exists after flush: ", os.path.exists(rt.db))
with sqlite3.connect(rt.db) as conn:
    misses = [row[0] for row in conn.execute("SELECT problem_key FROM misses WHERE device_key = ?", (rt.device_key,))]
print("misses recorded:", misses)
start = time.time()
done = gemmtune.sweep_misses(capture_output=True, check=False)
print("sweep_misses(): exit %d after %.1f s; its last lines:" % (done.returncode, time.time() - start))
print("\n".join(done.stdout.strip().splitlines()[-8:]))
if done.returncode:
    print(done.stderr)
json.dump({"db": rt.db, "key": rt.device_key, "misses": misses, "sweep_rc": done.returncode}, open(sys.argv[1], "w"))
PY
check "quick start, flush and sweep_misses ran" $?
state_ok=$(python3 -c "
import json, os, sys; s = json.load(open('$work/state.json'))
sys.exit(0 if s['db'] == '$work/cache/gemmtune/gemmtune.db' and os.path.isfile(s['db']) and s['misses']
         and s['sweep_rc'] == 0 else 1)" 2>/dev/null; echo $?)
check "flush made the XDG db; sweep_misses tuned it" "$state_ok"

echo "== 3. a fresh process: gemmtune.Runtime() finds the tuned entries =="
timeout 120 python3 - "$work/state.json" <<'PY'
import json, sys
import torch, gemmtune
state = json.load(open(sys.argv[1]))
rt = gemmtune.Runtime()
print(rt)
exact = 0
for key in state["misses"]:
    line = rt.explain(key)
    print(line)
    exact += "[exact]" in line
print("%d of %d recorded misses are exact cache hits now" % (exact, len(state["misses"])))
sys.exit(0 if exact == len(state["misses"]) and rt.db == state["db"] else 1)
PY
check "a fresh Runtime() finds every miss tuned" $?

echo "== 4. from another directory, $work/other =="
cd "$work/other" || exit 2
gemmtune paths
key=$(python3 -c "import json; print(json.load(open('$work/state.json'))['key'])")
gemmtune sweep --from-misses --device-key "$key" --dry-run >"$work/dry_run.txt" 2>&1
head -12 "$work/dry_run.txt"
check "sweep --from-misses there plans the misses" \
  "$(python3 -c "
import json, sys; s = json.load(open('$work/state.json')); plan = open('$work/dry_run.txt').read()
sys.exit(0 if all(k in plan for k in s['misses']) else 1)"; echo $?)"
gemmtune cache show | tail -4

echo "== 5. GEMMTUNE_DB through a regular file =="
echo "not a directory" >"$work/a-file"
GEMMTUNE_DB=$work/a-file/tune.db timeout 120 python3 - >"$work/refused.out" 2>"$work/refused.err" <<'PY'
import torch, gemmtune
rt = gemmtune.Runtime()
rt.forward(torch.randn(125, 45, device="cuda"), torch.randn(45, 67, device="cuda"))
torch.cuda.synchronize()
try:
    rt.flush()
    print("flush: no error")
except gemmtune.InputError as e:
    print("flush raised InputError:", e)
PY
cat "$work/refused.out"
echo "stderr at exit:"
cat "$work/refused.err"
check "flush() names GEMMTUNE_DB" "$(grep -q 'placed by GEMMTUNE_DB' "$work/refused.out"; echo $?)"
check "the exit warns in one line naming GEMMTUNE_DB" \
  "$([[ $(grep -c 'could not record the cache misses' "$work/refused.err") == 1 ]] &&
     grep -q 'placed by GEMMTUNE_DB' "$work/refused.err"; echo $?)"

if [[ ${ROOFLINE_DEFAULT:-0} == 1 ]]; then
  echo "== 6. the default profile's roofline =="
  start=$(date +%s)
  gemmtune sweep --profile default --db "$work/default.db" >"$work/default_sweep.txt" 2>&1
  check "sweep --profile default" $?
  echo "sweep --profile default: $(($(date +%s) - start)) s"
  python=$(for p in python3 /usr/bin/python3; do "$p" -c 'import matplotlib' 2>/dev/null && { echo "$p"; break; }; done)
  if [[ -z $python ]]; then
    gemmtune report --db "$work/default.db" --out "$work/report" --json-only
    echo "no Python with matplotlib here: report.json only; draw it elsewhere with scripts/report.py"
  else
    gemmtune report --db "$work/default.db" --out "$work/report" --python "$python" --script "$root/scripts/report.py"
    (cd "$root/tests/scripts" && "$python" - "$work/report/report.json" <<'PY'
import json, sys
import test_report_roofline, report
device = json.load(open(sys.argv[1]))["devices"][0]
test_report_roofline.RooflineLabelsTest().assert_readable(device["cache"], device["peaks"])
print("%d cases, %d labels, none over another or a point" % (len(device["cache"]),
                                                             len(report.roofline_picks(device["cache"]))))
PY
    )
    check "default roofline labels apart" $?
  fi
  [[ -z $out ]] || cp "$work/report/"* "$out/" 2>/dev/null
fi

[[ -z $out ]] || cp "$work"/*.json "$work"/*.txt "$work"/refused.* "$out/" 2>/dev/null
echo "== summary =="
printf '%s\n' "${summary[@]}"
exit $status
