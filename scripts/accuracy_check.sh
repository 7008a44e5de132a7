#!/usr/bin/env bash
# Issue 13 on the GPU, from prebuilt binaries (builds nothing):
#   accuracy  `gemmtune accuracy` over k = 256..16384, uniform and wide inputs: every variant and cuBLASLt fp32/tf32
#             vs fp64 (OUT/accuracy.json); exits 1 there if a 3xtf32 point is above 2x cuBLASLt fp32's error
#   tests     the GPU tests of 3xtf32 (every variant vs fp64 on edge shapes, layouts, epilogues), the accuracy grid
#             test, the fp32-equivalent sweep test and the CPU accumulation model
#   speed     3xtf32 vs cuBLASLt fp32 at 2048^3 and 4096^3, plain and bias+gelu (profiles/dev_3xtf32.json, read by
#             scripts/bench_kernels.py as bench_kernels.sh does)
#   runtime   the fp32-equivalent policy end to end: sweep profiles/runtime_bench_fp32_equivalent.json into a db, then
#             the forward runtime benchmark (bench/runtime_bench.cu) with RuntimeOptions::fp32_equivalent on
#             and off, against cuBLASLt fp32 heuristic-first with the same fused bias+gelu
# Prints a short table last. PARTS (default all: accuracy,tests,speed,runtime) runs a subset, e.g. to split the work
# over two calls (PARTS=accuracy,tests,speed then PARTS=runtime): about 4 + 4 minutes on an H200.
#
# usage: scripts/accuracy_check.sh BUILD_DIR OUT_DIR
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: accuracy_check.sh BUILD_DIR OUT_DIR}" && pwd)
out=${2:?usage: accuracy_check.sh BUILD_DIR OUT_DIR}
parts=",${PARTS:-accuracy,tests,speed,runtime},"
mkdir -p "$out"
out=$(cd "$out" && pwd)
bin=$build/gemmtune
export GEMMTUNE_PROFILES=$root/profiles
cd "$root"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$out/gpu.txt" 2>&1
declare -A rc

if [[ $parts == *,accuracy,* ]]; then
  timeout 180 "$bin" accuracy --out "$out/accuracy.json" --max-3xtf32-ratio 2 > "$out/accuracy.txt" 2> "$out/accuracy.err"
  rc[accuracy]=$?
fi
if [[ $parts == *,tests,* ]]; then
  timeout 240 "$build/tests/gemmtune_tests" \
    --gtest_filter='Mma3xTf32Gemm.*:Families/WgmmaGemm.*/ThreeXTf32:DropoutOffsetGpu.*3xTf32:AccuracyBenchmark.*:SweepFp32Equivalent.*:TensorCoreModel.*:Fp32Equivalent.*' \
    > "$out/tests.txt" 2>&1
  rc[tests]=$?
fi
if [[ $parts == *,speed,* ]]; then
  timeout 200 "$bin" sweep --profile dev_3xtf32 --no-db --json "$out/speed_sweep.json" > "$out/speed_sweep.txt" 2>&1
  rc[speed]=$?
  python3 scripts/bench_kernels.py "$out/speed_sweep.json" "$out/speed.json" > "$out/speed.txt" 2>&1 || rc[speed]=$?
fi
if [[ $parts == *,runtime,* ]]; then
  db=$out/fp32_equivalent.db
  rm -f "$db" "$db-wal" "$db-shm"
  timeout 300 "$bin" sweep --profile runtime_bench_fp32_equivalent --db "$db" --json "$out/runtime_sweep.json" \
    > "$out/runtime_sweep.txt" 2>&1
  rc[runtime_sweep]=$?
  for policy in on off; do
    flag=()
    [[ $policy == on ]] && flag=(--fp32-equivalent)
    timeout 120 "$build/bench/runtime_bench" --db "$db" --profile runtime_bench_fp32_equivalent --forward-only \
      "${flag[@]}" --json "$out/runtime_$policy.json" > "$out/runtime_$policy.txt" 2>&1
    rc[runtime_$policy]=$?
  done
fi

for part in "${!rc[@]}"; do echo "$part rc=${rc[$part]}"; done | sort > "$out/exit_codes.txt"
python3 - "$out" <<'PY'
import json, math, os, sys
out = sys.argv[1]

def load(name):
    path = os.path.join(out, name)
    return json.load(open(path)) if os.path.exists(path) else None

print("== exit codes"); print(open(os.path.join(out, "exit_codes.txt")).read().strip())
tests = os.path.join(out, "tests.txt")
if os.path.exists(tests):
    lines = [l.rstrip() for l in open(tests) if l.startswith(("[  PASSED", "[  FAILED", "[  SKIPPED"))]
    print("== GPU tests"); print("\n".join(lines[-12:]))

acc = load("accuracy.json")
if acc:
    print("== accuracy (m=n=%d): worst own error / cuBLASLt fp32's, per mode" % acc["m"])
    cells = {}
    for r in acc["records"]:
        if not r["candidate"].startswith("own/"):
            continue
        e = math.inf if r["rel_err"] is None else r["rel_err"]
        ratio = e / r["lt_fp32_rel_err"] if r["lt_fp32_rel_err"] else math.inf
        key = (r["dist"], r["k"])
        cell = cells.setdefault(key, {"lt": r["lt_fp32_rel_err"]})
        cell[r["mode"]] = max(cell.get(r["mode"], 0), ratio)
    print("%-8s %6s %10s %8s %8s %8s" % ("dist", "k", "Lt fp32", "fp32", "tf32", "3xtf32"))
    for (dist, k), c in sorted(cells.items()):
        f = lambda m: "%8.2f" % c[m] if m in c else "%8s" % "-"
        print("%-8s %6d %10.2e %s %s %s" % (dist, k, c["lt"], f("fp32"), f("tf32"), f("3xtf32")))
    worst = max((c.get("3xtf32", 0) for c in cells.values()), default=0)
    print("3xtf32 worst ratio %.2f (target <= 2): %s" % (worst, "met" if worst <= 2 else "MISSED"))

speed = load("speed.json")
if speed:
    print("== 3xtf32 speed vs cuBLASLt fp32 (>1: ours faster; target >= 1.3)")
    for r in speed["rows"]:
        if r["mode"] == "3xtf32":
            best, first = r["own_speed_vs_lt_best"], r["own_speed_vs_lt_heuristic_first"]
            print("%-16s %-10s own %9.1f us  vs Lt best x%s  vs Lt first x%s" % (
                r["shape"], r["epilogue"], r["own_us"] or 0, "%.3f" % best if best else "-",
                "%.3f" % first if first else "-"))

for policy in ("on", "off"):
    rt = load("runtime_%s.json" % policy)
    if not rt:
        continue
    cases = rt["forward"]
    geo = math.exp(sum(math.log(c["speedup"]) for c in cases) / len(cases)) if cases else float("nan")
    worst = min(cases, key=lambda c: c["speedup"]) if cases else None
    uses_3x = [c["problem"] for c in cases if "3xtf32" in c["runtime_candidate"]]
    print("== runtime fp32 bias+gelu vs cuBLASLt fp32 heuristic-first, fp32_equivalent %s" % policy)
    for c in cases:
        print("  %-44s x%.3f  %s" % (c["problem"], c["speedup"], c["runtime_candidate"]))
    line = "  geomean x%.3f, min x%.3f at %s; %d shapes on 3xtf32" % (
        geo, worst["speedup"] if worst else float("nan"), worst["problem"] if worst else "-", len(uses_3x))
    if policy == "on":
        ok = cases and geo >= 1.15 and worst["speedup"] >= 0.98
        line += " (targets geomean >= 1.15, min >= 0.98): " + ("met" if ok else "MISSED")
    else:
        line += " (target: none, fp32 results unchanged): " + ("met" if not uses_3x else "MISSED")
    print(line)
PY
