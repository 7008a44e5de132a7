#!/usr/bin/env bash
# GPU checks of `gemmtune trace` (issue 17). Builds nothing: takes a build directory (with gemmtune, its two trace
# libraries and mlp_step) and an output directory; logs, trace files and dbs go there; a short table prints last.
#
#   scripts/trace_check.sh BUILD_DIR OUT_DIR [PARTS]     PARTS: torch,mlp,cross (default: all three)
#
# Each part fits one 10-minute device call (its sweeps stop at 240 s); run them as separate calls if need be.
#
# 1. The PyTorch MLP step (scripts/trace_mlp_torch.py), fp32 and tf32, traced with --gemms --db: the tables, the GEMM
#    share, the recorded problems; `sweep --from-misses` (quick settings) on them; traced again; `trace diff`.
#    (PyTorch does not read gemmtune's db, so its GEMM time should not move: the diff says so.)
# 2. src/examples/mlp_step (which runs its GEMMs through gemmtune's runtime and records its own misses): traced,
#    tuned with `sweep --from-misses`, traced again: the diff shows the GEMM time that moved.
# 3. Cross-checks: per-call kernel time of `gemmtune run` of an own candidate under trace vs that candidate's sweep
#    median (within 3%); traced vs untraced wall time of a run whose kernels last >= 1 ms (<= 1.05x); every kernel of
#    the run's timed calls counted (one kernel per call, --iters calls).
set -uo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 BUILD_DIR OUT_DIR [torch,mlp,cross]" >&2
  exit 2
fi
parts=,${3:-torch,mlp,cross},
want() { [[ $parts == *",$1,"* ]]; }
build=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
G=$build/gemmtune
mlp_step=$(find "$build" -maxdepth 3 -type f -name mlp_step -perm -u+x | head -1)
export PYTHONUNBUFFERED=1
summary=()
note() { summary+=("$1"); }

# --- 1. PyTorch MLP ------------------------------------------------------------------------------------------
if want torch; then
torch_db=$out/torch.db
rm -f "$torch_db"
for mode in fp32 tf32; do
  "$G" trace --gemms --db "$torch_db" --out "$out/torch_$mode.json" -- \
    python3 "$here/scripts/trace_mlp_torch.py" --mode "$mode" --steps 20 >"$out/torch_$mode.log" 2>&1
  rc=$?
  note "torch $mode trace rc=$rc: $(grep -E 'GEMM \(% of kernel time\)' "$out/torch_$mode.log" | tr -s ' ')"
  echo "=== torch $mode: trace tables"
  cat "$out/torch_$mode.log"
done
timeout 240 "$G" sweep --from-misses --db "$torch_db" --profile quick --json "$out/torch_sweep.json" \
  >"$out/torch_sweep.log" 2>&1
note "torch sweep --from-misses rc=$? ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["problems"]))' \
  "$out/torch_sweep.json" 2>/dev/null || echo 0) problems)"
tail -30 "$out/torch_sweep.log"
"$G" trace --gemms --out "$out/torch_tf32_after.json" --no-tables -- \
  python3 "$here/scripts/trace_mlp_torch.py" --mode tf32 --steps 20 >"$out/torch_after.log" 2>&1
echo "=== torch tf32: diff before/after tuning (PyTorch does not read gemmtune's db)"
"$G" trace diff "$out/torch_tf32.json" "$out/torch_tf32_after.json" | tee "$out/torch_diff.txt" | head -40
fi

# --- 2. mlp_step through gemmtune's runtime ----------------------------------------------------------------
if ! want mlp; then
  :
elif [[ -n $mlp_step ]]; then
  mlp_db=$out/mlp_step.db
  rm -f "$mlp_db"
  "$G" trace --gemms --out "$out/mlp_before.json" -- "$mlp_step" "$mlp_db" >"$out/mlp_before.log" 2>&1
  note "mlp_step trace (untuned) rc=$?: $(grep -E 'GEMM \(% of kernel time\)' "$out/mlp_before.log" | tr -s ' ')"
  cat "$out/mlp_before.log"
  timeout 240 "$G" sweep --from-misses --db "$mlp_db" --profile quick >"$out/mlp_sweep.log" 2>&1
  note "mlp_step sweep --from-misses rc=$?"
  tail -20 "$out/mlp_sweep.log"
  "$G" trace --gemms --out "$out/mlp_after.json" -- "$mlp_step" "$mlp_db" >"$out/mlp_after.log" 2>&1
  note "mlp_step trace (tuned) rc=$?: $(grep -E 'GEMM \(% of kernel time\)' "$out/mlp_after.log" | tr -s ' ')"
  echo "=== mlp_step: diff before/after tuning"
  "$G" trace diff "$out/mlp_before.json" "$out/mlp_after.json" | tee "$out/mlp_diff.txt" | head -60
else
  note "mlp_step: not found under $build (build the examples)"
fi

# --- 3. Cross-checks -----------------------------------------------------------------------------------------
if want cross; then
# 2048^3 (45 us a call: 200 calls are too short for the power limit to lower the clock) and 4096^3 (where it does).
for size in 2048 4096; do
cat >"$out/tiny_$size.json" <<EOF
{"name": "trace_tiny_$size", "description": "One tf32 cube, our kernels only: a candidate and its sweep median. gemmtune run times one input set where the sweep rotates several, which changes little for a compute-bound cube.",
 "shapes": [[$size, $size, $size]], "layouts": ["nn"], "epilogues": ["none"], "modes": ["tf32"], "backends": ["own"],
 "lt": {"top_k": 1, "workspace_mib": 64},
 "timing": {"warmup_calls": 5, "batch_calls": 20, "min_samples": 40, "max_noise_pct": 0.5, "min_time_ms": 5,
            "max_time_ms": 150}}
EOF
timeout 240 "$G" sweep --profile "$out/tiny_$size.json" --db "$out/tiny_$size.db" --json "$out/tiny_sweep_$size.json" \
  >"$out/tiny_sweep_$size.log" 2>&1
note "tiny sweep $size^3 rc=$?"
read -r cand median < <(python3 -c "
import json,sys
p=json.load(open(sys.argv[1]))['problems'][0]
print(p['best_candidate'], p['best_us'])" "$out/tiny_sweep_$size.json" 2>/dev/null)
# One run as long as a sweep batch (20 calls, the sweep's timing.batch_calls), then longer ones. The H200 holds 700 W by
# lowering its clock within tens of ms of full load (1980 -> ~1500 MHz at 4096^3 tf32), so a long run's later calls
# are slower than the sweep's short batches: the trace shows what the program paid, and the SM clock is logged beside.
if [[ -n ${cand:-} ]]; then
  for iters in 20 200 $( ((size == 4096)) && echo 1000); do
    nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits -lms 20 >"$out/clock_${size}_$iters.txt" 2>/dev/null &
    smi=$!
    "$G" trace --out "$out/run_cross_${size}_$iters.json" --no-tables -- "$G" run --m $size --n $size --k $size --mode tf32 \
      --candidate "$cand" --iters $iters --db "$out/tiny_$size.db" >"$out/run_cross_${size}_$iters.log" 2>&1
    rc=$?
    kill $smi 2>/dev/null
    note "traced gemmtune run $size^3 --iters $iters rc=$rc"
    note "$(python3 - "$out/run_cross_${size}_$iters.json" "$median" $iters "$out/clock_${size}_$iters.txt" $size <<'EOF'
import json, statistics, sys
t = json.load(open(sys.argv[1]))
median_sweep, iters = float(sys.argv[2]), int(sys.argv[3])
clocks = [int(l) for l in open(sys.argv[4]) if l.strip().isdigit()]
names = t["kernel_names"]
cases = [r for r in t["ranges"] if r["domain"] == "gemmtune" and "|own|" in r["name"]]
inside = []
for k in t["kernels"]:
    if k["launch_tid"] is None:
        continue
    if any(r["pid"] == k["pid"] and r["start"] <= k["launch_ns"] <= r["end"] for r in cases):
        inside.append(k)
inside.sort(key=lambda k: k["start"])
us = [(k["end"] - k["start"]) / 1e3 for k in inside]
med = statistics.median(us) if us else float("nan")
ratio = med / median_sweep if us else float("nan")
ok_time = abs(ratio - 1) <= 0.03
ok_count = len(cases) == iters and len(inside) == iters
first, last = (statistics.median(us[:20]), statistics.median(us[-20:])) if us else (float("nan"),) * 2
print(f"{sys.argv[5]}^3 --iters {iters}: per-call kernel time {med:.3f} us traced vs sweep median {median_sweep:.3f} us: ratio "
      f"{ratio:.4f} ({'PASS' if ok_time else 'FAIL'} within 3%; first 20 calls {first:.1f} us, last 20 {last:.1f} us; "
      f"SM clock {min(clocks, default=0)}-{max(clocks, default=0)} MHz); kernels in the {len(cases)} case ranges: "
      f"{len(inside)} of {iters} calls ({'PASS' if ok_count else 'FAIL'}); kernels in trace: {len(t['kernels'])}, "
      f"distinct in ranges: {sorted(set(names[k['name']][:40] for k in inside))}")
EOF
)"
  done
else
  note "cross-check skipped: the tiny sweep gave no candidate (see $out/tiny_sweep_$size.log)"
fi
done

# Overhead: fp32 4096^3 on a SIMT kernel, several ms a call.
# CUPTI's start costs the traced process a fixed ~50-70 ms (the per-kernel cost is what the check is about), so the
# program runs ~1.5 s: 300 calls of 2.7 ms; five alternating runs each, medians.
long_run=("$G" run --m 4096 --n 4096 --k 4096 --mode fp32 --iters 300 --warmup 3
  --db "$out/none.db")
plain=()
traced=()
for i in 1 2 3 4 5; do
  s=$EPOCHREALTIME; "${long_run[@]}" >"$out/long_plain_$i.log" 2>&1; e=$EPOCHREALTIME
  plain+=("$s:$e")
  s=$EPOCHREALTIME; "$G" trace --no-tables --out "$out/long_$i.json" -- "${long_run[@]}" >"$out/long_traced_$i.log" 2>&1
  e=$EPOCHREALTIME
  traced+=("$s:$e")
done
note "$(python3 - "${plain[*]}" "${traced[*]}" "$(echo "$out"/long_{1..5}.json)" <<'EOF'
import json, statistics, sys
def walls(arg):
    return [float(e) - float(s) for s, e in (pair.split(":") for pair in arg.split())]
plain, traced = walls(sys.argv[1]), walls(sys.argv[2])
program = [json.load(open(f))["wall_ms"] / 1e3 for f in sys.argv[3].split()]
t = json.load(open(sys.argv[3].split()[0]))
kernel_ms = sorted((k["end"] - k["start"]) / 1e6 for k in t["kernels"])
if not kernel_ms:
    print("overhead: no kernel was recorded (see long_traced_1.log)")
    sys.exit(0)
ratio = statistics.median(program) / statistics.median(plain)
whole = statistics.median(traced) / statistics.median(plain)
print(f"overhead: traced program wall {statistics.median(program):.3f} s (fork to exit, from the trace) vs untraced "
      f"{statistics.median(plain):.3f} s, medians of 5: ratio {ratio:.3f} ({'PASS' if ratio <= 1.05 else 'FAIL'} "
      f"<= 1.05, +{1e3 * (statistics.median(program) - statistics.median(plain)):.0f} ms); with gemmtune trace's own "
      f"start and aggregation {whole:.3f}; kernels {len(kernel_ms)}, "
      f"GEMM call median {statistics.median(kernel_ms[-150:]):.2f} ms")
EOF
)"

fi

echo
echo "=== trace_check summary"
for line in "${summary[@]}"; do echo "  $line"; done
