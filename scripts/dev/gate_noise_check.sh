#!/usr/bin/env bash
# Does the gate hold between single runs of one build, and does it still catch a real slowdown? (issue 37)
#
#   scripts/dev/gate_noise_check.sh OUT_DIR        RUNS=10 SLOWDOWNS="own:10 lt:10" CALL_BUDGET_S=500 STEP=all|report
#                                                  [SLOWDOWN_BUILDS=DIR]
# SLOWDOWN_BUILDS=DIR: BUILD_DIR is a carried build (scripts/dev/prebuilt.sh), nothing is built, and each slowdown's
# gemmtune is DIR/slow_<backend>_<pct>/gemmtune, built elsewhere with -DGEMMTUNE_TEST_SLOWDOWN=<backend>:<pct>.
#
# 1. Builds this tree (scripts/dev/device_build.sh into $BUILD_DIR, default build/; nothing to do when it is current) and
#    sweeps the `ci` profile RUNS times back to back (--no-db), one process each, timing each sweep.
# 2. Per SLOWDOWNS entry, rebuilds gemmtune with -DGEMMTUNE_TEST_SLOWDOWN=<entry> (only the tuner's sources
#    recompile) and sweeps `ci` once; the build is put back to normal afterwards, and on any exit.
# 3. Gates every pair of single runs, the earlier as baseline (RUNS·(RUNS−1)/2 pairs, 45 for 10), and the reverse;
#    each again with --lone-threshold 0, the rule before issue 37, for comparison; each slowdown sweep against run 1
#    (must exit 1); each single run against the committed results/<gpu>/baseline.json where this GPU has one.
#    Writes OUT_DIR/gate_noise.json (and the sweeps, sweeps.tar.gz) and prints a summary table last.
# A ci sweep took 22-27 s on the H200 (the committed baseline's runs): 10 runs are about 4.5 minutes of GPU time, a
# slowdown about 30 s plus its rebuild. One call starts no sweep or rebuild that would end past CALL_BUDGET_S seconds
# after the call began (a device command may run 10 minutes) and keeps what it swept in $BUILD_DIR/gate-noise/: when
# it ends with "INCOMPLETE" (exit 4), call it again on the same warm machine and it goes on where it stopped (delete
# that folder to start over). STEP=report only gates what is there. Exit 0: no same-build pair failed and every
# slowdown build failed the gate; 1: one of those did not hold; 2: a build or sweep failed.
set -uo pipefail
out=${1:?usage: gate_noise_check.sh OUT_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
runs=${RUNS:-10}
slowdowns=${SLOWDOWNS:-own:10 lt:10}
budget=${CALL_BUDGET_S:-500}
step=${STEP:-all}
mkdir -p "$out"
out=$(realpath "$out")
work=$build/gate-noise
gt=$build/gemmtune
mkdir -p "$work"
touch "$work/sweeps.txt"

sweep() {  # sweep OUT.json LOG: the ci profile; prints the wall seconds, returns the sweep's exit code
  local t0=$SECONDS
  "$gt" sweep --profile ci --no-db --json "$1" >"$2" 2>&1
  local rc=$?
  echo "$((SECONDS - t0))"
  return $rc
}
configure() {  # configure SLOWDOWN: "" for a normal build
  cmake -S "$root" -B "$build" -DGEMMTUNE_TEST_SLOWDOWN="$1" >/dev/null &&
    cmake --build "$build" --target gemmtune >/dev/null
}
incomplete() {
  echo "INCOMPLETE: $1; call again on this machine to go on (done so far: $(ls "$work" | grep -c '^run_.*json$') runs)"
  exit 4
}
# Would a job of about `$1` seconds end past the budget?
over_budget() { ((SECONDS + $1 > budget)); }

prebuilt=${SLOWDOWN_BUILDS:-}
if [[ $step == all ]]; then
  # A build dir left with a test-only slowdown (an interrupted call) is put back to normal first.
  if [[ -z $prebuilt ]]; then
    CMAKE_EXTRA_ARGS="${CMAKE_EXTRA_ARGS:-} -DGEMMTUNE_TEST_SLOWDOWN=" BUILD_DIR=$build \
      "$root/scripts/dev/device_build.sh" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 2; }
  fi
  echo "build: $SECONDS s"
  nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
  last=40  # a guess for the first sweep of a call; then the last one's time
  for ((i = 1; i <= runs; i++)); do
    [[ -f $work/run_$i.json ]] && continue
    over_budget "$last" && incomplete "the call's budget of $budget s is spent before sweep $i of $runs"
    last=$(sweep "$work/run_$i.json" "$work/run_$i.log")
    rc=$?
    echo "sweep $i: exit $rc, $last s" | tee -a "$work/sweeps.txt"
    # Exit 1 is a candidate that failed verification: its case is missing from that run, which the gate reports.
    ((rc > 1)) && { tail -5 "$work/run_$i.log"; rm -f "$work/run_$i.json"; exit 2; }
  done

  [[ -z $prebuilt ]] && trap 'configure ""' EXIT
  for spec in $slowdowns; do
    name=slow_${spec/:/_}
    [[ -f $work/$name.json ]] && continue
    over_budget $((last + 120)) && incomplete "the call's budget of $budget s is spent before the $spec build"
    t0=$SECONDS
    if [[ -n $prebuilt ]]; then
      seconds=$(gt=$prebuilt/$name/gemmtune sweep "$work/$name.json" "$work/$name.log")
    else
      configure "$spec" >"$out/build_$name.log" 2>&1 || { tail -30 "$out/build_$name.log"; exit 2; }
      seconds=$(sweep "$work/$name.json" "$work/$name.log")
    fi
    rc=$?
    echo "slowdown $spec: rebuilt in $((SECONDS - t0 - seconds)) s, swept in $seconds s (exit $rc)" |
      tee -a "$work/sweeps.txt"
  done
  if [[ -z $prebuilt ]]; then
    configure ""
    trap - EXIT
  fi
fi

[[ -f $work/run_2.json ]] || { echo "gate_noise_check: fewer than two single runs in $work" >&2; exit 2; }
cp "$work/sweeps.txt" "$out/"
tar -czf "$out/sweeps.tar.gz" -C "$work" $(cd "$work" && ls run_*.json slow_*.json 2>/dev/null)
slug=$("$gt" devices --json 2>/dev/null |
  python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["slug"])' 2>/dev/null) || slug=none
python3 - "$gt" "$work" "$out" "$root/results/$slug/baseline.json" "$slowdowns" <<'PY'
import glob, json, os, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

gt, work, out, committed, slowdowns = sys.argv[1:6]
runs = sorted(glob.glob(os.path.join(work, "run_*.json")), key=lambda p: int(re.search(r"run_(\d+)", p)[1]))
seconds = {}
for line in open(os.path.join(work, "sweeps.txt")):
    m = re.match(r"sweep (\d+): exit \d+, (\d+) s", line)
    if m: seconds[int(m[1])] = int(m[2])


def gate(baseline, current, *extra):
    name = "gate_%s_%s%s.json" % (os.path.basename(baseline)[:-5], os.path.basename(current)[:-5], "_".join(extra))
    report = os.path.join(work, name)
    if os.path.exists(report): os.remove(report)
    rc = subprocess.run([gt, "gate", "--baseline", baseline, "--current", current, "--json", report, *extra],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    if not os.path.exists(report):  # refused before comparing (unreadable input, different devices)
        return {"exit": rc, "regressed_problems": 0, "regressed_cases": 0, "isolated": 0, "isolated_max_pct": 0,
                "regressed_keys": []}
    j = json.load(open(report))
    regressed = [c for c in j["cases"] if c["verdict"] == "regressed"]
    isolated = [c for c in j["cases"] if c.get("isolated")]
    return {"exit": rc, "regressed_problems": j["regressed_problems"], "regressed_cases": j["regressed"],
            "isolated": len(isolated),
            "isolated_max_pct": round(100 * (max([c["ratio"] for c in isolated], default=1) - 1), 2),
            "regressed_keys": [c["key"] for c in regressed][:10]}


ordered = [(i, j) for i in range(len(runs)) for j in range(len(runs)) if i != j]
specs = [s for s in slowdowns.split() if os.path.exists(os.path.join(work, "slow_%s.json" % s.replace(":", "_")))]
with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:  # the gate is CPU work: one process per comparison
    now = list(pool.map(lambda p: gate(runs[p[0]], runs[p[1]]), ordered))
    before = list(pool.map(lambda p: gate(runs[p[0]], runs[p[1]], "--lone-threshold", "0"), ordered))
    slowed = list(pool.map(lambda s: gate(runs[0], os.path.join(work, "slow_%s.json" % s.replace(":", "_"))), specs))
    committed_gates = list(pool.map(lambda run: gate(committed, run), runs)) if os.path.exists(committed) else []
pairs = [{"baseline": i + 1, "current": j + 1, **n, "old_rule": b} for (i, j), n, b in zip(ordered, now, before)]
slow = [{"slowdown": s, "baseline": 1, **g} for s, g in zip(specs, slowed)]
against_committed = [{"run": i + 1, **g} for i, g in enumerate(committed_gates)]

forward = [p for p in pairs if p["baseline"] < p["current"]]
backward = [p for p in pairs if p["baseline"] > p["current"]]
def failing(ps, rule=None):  # (failing pairs, failing verdicts)
    results = [p if rule is None else p[rule] for p in ps]
    return (sum(1 for r in results if r["exit"] != 0),
            sum(r["regressed_problems"] + r["regressed_cases"] for r in results))
ok = failing(pairs)[0] == 0 and bool(slow) and all(s["exit"] == 1 for s in slow)
device = json.load(open(runs[0]))["device"]
summary = {"device": device.get("name"), "device_key": device.get("key"), "runs": len(runs),
           "sweep_seconds": [seconds.get(i + 1) for i in range(len(runs))],
           "pairs": pairs, "slowdowns": slow, "against_committed_baseline": against_committed,
           "verdict": "ok" if ok else "FAIL"}
json.dump(summary, open(os.path.join(out, "gate_noise.json"), "w"), indent=1)

rows = []
def row(what, result, detail): rows.append("%-58s %-5s %s" % (what, result, detail))
s = [x for x in summary["sweep_seconds"] if x is not None]
row("ci sweeps (%s)" % summary["device"], "", "%d runs, %s s each (median %s)" % (len(runs), ",".join(map(str, s)),
    sorted(s)[len(s) // 2] if s else "?"))
for name, ps in (("pairs, earlier run as baseline", forward), ("pairs, later run as baseline", backward)):
    n, verdicts = failing(ps)
    row("%d %s" % (len(ps), name), "ok" if n == 0 else "FAIL",
        "%d failing pairs, %d failing verdicts; %d isolated cases (largest +%.1f%%)" % (
            n, verdicts, sum(p["isolated"] for p in ps), max([p["isolated_max_pct"] for p in ps], default=0)))
    n, verdicts = failing(ps, "old_rule")
    row("  same pairs, rule before issue 37 (--lone-threshold 0)", "",
        "%d failing pairs, %d failing verdicts" % (n, verdicts))
for x in slow:
    row("-DGEMMTUNE_TEST_SLOWDOWN=%s build against run 1" % x["slowdown"], "ok" if x["exit"] == 1 else "FAIL",
        "exit %d: %d problems, %d cases regressed" % (x["exit"], x["regressed_problems"], x["regressed_cases"]))
if against_committed:
    n = sum(1 for x in against_committed if x["exit"] != 0)
    row("single runs against the committed baseline of this GPU", "",
        "%d of %d exit non-zero (exits %s)" % (
            n, len(against_committed), sorted({x["exit"] for x in against_committed})))
row("verdict", summary["verdict"], os.path.join(out, "gate_noise.json"))
print("\n".join(rows))
sys.exit(0 if ok else 1)
PY
