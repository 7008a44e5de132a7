#!/usr/bin/env bash
# GPU proof of issue 38: `gemmtune trace --gemms` records the GEMMs a PyTorch training step sends through cuBLAS as
# well as those it sends through cuBLASLt. Builds gemmtune (scripts/dev/device_build.sh; BUILD_DIR as there), then, on
# scripts/trace_torch_step.py (4 Linear layers 1024-4096-4096-4096-1024, 777 tokens, AdamW), writes under
# OUT_DIR/results/<gpu-slug>/:
#   trace_torch_cublas_imports.txt   the cuBLAS symbols libtorch_cuda.so imports (nm -D --undefined-only), and which
#                                    GEMM entry points among them the shim intercepts
#   trace_torch_step_<mode>.json|txt `gemmtune trace --gemms --db misses.db` of the step, fp32 and tf32: the trace and
#                                    its tables; PASS when the GEMM coverage is >= 95%
#   trace_torch_step_kernels.txt     per recorded problem: entry point, calls, and the kernels it launched (the
#                                    kernel names show tf32 against fp32 math)
#   trace_sweep_from_misses.json|txt `gemmtune sweep --from-misses` on misses.db (quick candidates, short timing);
#                                    PASS when every tunable problem that came through cuBLAS (the backward's) was tuned
#   trace_torch_vs_tuned.txt         per problem: PyTorch's GPU time per call (the trace) against gemmtune's tuned best
#   trace_diff_tf32.txt              `gemmtune trace diff` of the tf32 step before and after the sweep (PyTorch reads
#                                    no gemmtune db: its problems' time should not move)
#   trace_overhead.json              wall time of the step (OVERHEAD_MODE, default tf32: more calls a second than
#                                    fp32) untraced, with the GEMM shim alone (no CUPTI), under `trace` and under
#                                    `trace --gemms`, REPEATS (default 3) alternating runs of the same steps, loop
#                                    >= 1.2 s; PASS when the `trace --gemms` median is <= 1.02x the untraced one
# A short summary prints last. About 3 minutes on an H100 after the build, and about a minute more per REPEATS (four
# runs of the step each).
#
#   scripts/dev/trace_device_check.sh OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
step=$here/scripts/trace_torch_step.py
export PYTHONUNBUFFERED=1
# shellcheck source=device_check_lib.sh
source "$here/scripts/dev/device_check_lib.sh"
start_check "$@"

t0=$SECONDS
build_unless_skipped  # SKIP_BUILD=1: BUILD_DIR holds a build already (a carried one: scripts/dev/prebuilt.sh)
slug=$(gpu_slug) || exit 3
res=$out/results/$slug
mkdir -p "$res"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$res/trace_gpu.txt"

# ONLY_OVERHEAD=1: step 5 alone (the others ran before into OUT_DIR).
if [[ ${ONLY_OVERHEAD:-0} != 1 ]]; then
# --- 1. What PyTorch imports from cuBLAS ------------------------------------------------------------------------
torch_cuda=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')/libtorch_cuda.so
{
  echo "# $torch_cuda: its NEEDED cuBLAS libraries"
  readelf -d "$torch_cuda" | grep -i 'NEEDED.*cublas'
  echo "# nm -D --undefined-only, cublas symbols"
  nm -D --undefined-only "$torch_cuda" | grep -i cublas
} >"$res/trace_torch_cublas_imports.txt" 2>&1
cat "$res/trace_torch_cublas_imports.txt"
# The fp32-capable GEMM entry points: the S routines and the Ex ones (D, C, Z and H routines hold no fp32 problem).
imported=$(nm -D --undefined-only "$torch_cuda" | grep -oE 'cublas(Sgemm|Gemm)[A-Za-z0-9_]*' | sort -u)
shimmed=$(nm -D --defined-only "$build/libgemmtune_trace_gemms.so" | awk '{print $3}' | sort -u)
missing=$(comm -23 <(echo "$imported") <(echo "$shimmed") | tr '\n' ' ')
echo "# GEMM entry points imported and not intercepted: ${missing:-none}" | tee -a "$res/trace_torch_cublas_imports.txt"
note "libtorch_cuda.so imports $(echo "$imported" | grep -c .) fp32 GEMM entry points; not intercepted:" \
  "${missing:-none}"

# --- 2. The step traced with --gemms, fp32 and tf32 -------------------------------------------------------------
db=$out/misses.db
rm -f "$db"
for mode in fp32 tf32; do
  "$G" trace --gemms --db "$db" --out "$res/trace_torch_step_$mode.json" -- \
    python3 "$step" --mode "$mode" --steps 60 >"$res/trace_torch_step_$mode.txt" 2>&1
  rc=$?
  echo "=== $mode: gemmtune trace --gemms (rc=$rc)"
  "$G" trace show "$res/trace_torch_step_$mode.json" --table summary | grep -E "GEMM|Kernel time|Wall"
  "$G" trace show "$res/trace_torch_step_$mode.json" --table gemms
  note "$mode trace rc=$rc: $(python3 - "$res/trace_torch_step_$mode.json" <<'PY'
import json, sys
try:
    t = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("no trace file (FAIL)")
    sys.exit(0)
c = t.get("gemm_coverage")
apis = sorted({g["blas"]["api"] if "blas" in g else "cublasLtMatmul" for g in t["gemm_calls"]})
verdict = "PASS" if c is not None and c >= 0.95 else "FAIL"
print(f"GEMM coverage {100 * c:.1f}% ({verdict} >= 95%)" if c is not None else "no GEMM coverage (FAIL)",
      f"over {len(t['gemm_calls'])} call signatures through {', '.join(apis)}")
PY
)"
done
python3 - "$G" "$res"/trace_torch_step_{fp32,tf32}.json >"$res/trace_torch_step_kernels.txt" <<'PY'
import collections, json, subprocess, sys
gemmtune = sys.argv[1]
for path in sys.argv[2:]:
    t = json.load(open(path))
    names = t["kernel_names"]
    rows = json.loads(subprocess.run([gemmtune, "trace", "show", path, "--table", "gemms", "--format", "json"],
                                     capture_output=True, text=True, check=True).stdout)["tables"]["gemms"]["rows"]
    print(f"# {path}")
    for r in rows:
        print(f"  {r['Problem']}  [{r['API']}]  calls {int(r['Calls'])}  {r['GPU time (us)']:.1f} us  "
              f"tunable: {r['Tunable']}")
    by_call = collections.defaultdict(collections.Counter)
    for k in t["kernels"]:
        if k["gemm"] is not None:
            by_call[k["gemm"]][names[k["name"]][:90]] += 1
    for i, g in enumerate(t["gemm_calls"]):
        call = g.get("blas") or g["desc"]
        api = call.get("api", "cublasLtMatmul")
        what = (f"m {call['m']} n {call['n']} k {call['k']} ops {call['transa']}{call['transb']} "
                f"compute {call['compute']} math {call['math_mode']}") if "api" in call else \
               f"compute {call['compute']} epilogue {call['epilogue']}"
        print(f"  call {i}: {api} {what} x{g['calls']}: {dict(by_call[i])}")
PY
cat "$res/trace_torch_step_kernels.txt"

# --- 3. sweep --from-misses -------------------------------------------------------------------------------------
python3 - "$here/profiles/quick.json" "$out/trace_sweep_profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["name"] = "trace_from_misses"
p["description"] = "quick's candidates with short timing: proof that the traced problems tune, not a benchmark"
p["timing"] = {"warmup_calls": 3, "batch_calls": 10, "min_samples": 10, "max_noise_pct": 2, "min_time_ms": 2,
               "max_time_ms": 40}
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY
t0=$SECONDS
timeout 240 "$G" sweep --from-misses --db "$db" --profile "$out/trace_sweep_profile.json" \
  --json "$res/trace_sweep_from_misses.json" >"$res/trace_sweep_from_misses.txt" 2>&1
rc=$?
tail -25 "$res/trace_sweep_from_misses.txt"
note "sweep --from-misses rc=$rc in $((SECONDS - t0)) s: $(python3 - "$G" "$res" <<'PY'
import json, subprocess, sys
gemmtune, res = sys.argv[1], sys.argv[2]
try:
    sweep = json.load(open(f"{res}/trace_sweep_from_misses.json"))
except (OSError, ValueError):
    print("no sweep JSON (FAIL)")
    sys.exit(0)
tuned = {p["problem_key"]: p for p in sweep["problems"] if p["best_candidate"]}
blas, lines = set(), []
for mode in ("fp32", "tf32"):
    path = f"{res}/trace_torch_step_{mode}.json"
    rows = json.loads(subprocess.run([gemmtune, "trace", "show", path, "--table", "gemms", "--format", "json"],
                                     capture_output=True, text=True, check=True).stdout)["tables"]["gemms"]["rows"]
    for r in rows:
        if r["Tunable"] != "yes":
            continue
        if any(api != "cublasLtMatmul" for api in r["API"].split(",")):
            blas.add(r["Problem"])
        calls = r["Calls"]
        torch_us = r["GPU time (us)"] / calls if calls else float("nan")
        best = tuned.get(r["Problem"])
        lines.append(f"{r['Problem']:44s} {r['API']:32s} torch {torch_us:9.2f} us/call   gemmtune best "
                     + (f"{best['best_us']:9.2f} us ({best['best_candidate']})" if best else "      -   (not tuned)"))
open(f"{res}/trace_torch_vs_tuned.txt", "w").write(
    "# PyTorch's GPU time per call of each recorded problem (from the trace: all its kernels) against the best\n"
    "# candidate gemmtune's sweep found for it (median kernel time, short timing)\n" + "\n".join(lines) + "\n")
untuned = sorted(blas - tuned.keys())
verdict = "PASS" if blas and not untuned else "FAIL"
print(f"{len(tuned)} problems tuned; {len(blas) - len(untuned)} of the {len(blas)} recorded from cuBLAS calls "
      f"(the backward's) among them ({verdict})" + (f"; not tuned: {', '.join(untuned)}" if untuned else ""))
PY
)"
cat "$res/trace_torch_vs_tuned.txt"

# --- 4. trace diff: the tf32 step before and after the sweep ----------------------------------------------------
"$G" trace --gemms --no-tables --out "$out/trace_torch_step_tf32_after.json" -- \
  python3 "$step" --mode tf32 --steps 60 >"$out/trace_torch_step_tf32_after.txt" 2>&1
"$G" trace diff "$res/trace_torch_step_tf32.json" "$out/trace_torch_step_tf32_after.json" \
  >"$res/trace_diff_tf32.txt" 2>&1
note "trace diff rc=$?: $(grep -c 'fwd:' "$res/trace_diff_tf32.txt") problem rows (see trace_diff_tf32.txt)"
sed -n '/GEMM problems, before and after/,$p' "$res/trace_diff_tf32.txt" | head -20

fi
# --- 5. Overhead ------------------------------------------------------------------------------------------------
repeats=${REPEATS:-3}
mode=${OVERHEAD_MODE:-tf32}
calibration=$(python3 "$step" --mode "$mode" --min-seconds 1.2 2>&1 | tee "$out/overhead_calibration.txt")
steps=$(grep -oE 'steps=[0-9]+' <<<"$calibration" | cut -d= -f2)
if [[ -z $steps ]]; then
  note "overhead: the calibration run failed (see $out/overhead_calibration.txt) (FAIL)"
else
  # Each run's line goes to the file as it ends, so a run cut short by a time limit keeps the ones before it.
  runs_file=$out/overhead_runs.txt
  : >"$runs_file"
  for _ in $(seq 1 "$repeats"); do
    s=$EPOCHREALTIME
    line=$(python3 "$step" --mode "$mode" --steps "$steps" 2>&1 | grep '^trace_torch_step:')
    e=$EPOCHREALTIME
    echo "plain $s $e ${line:-failed}" >>"$runs_file"
    # The GEMM shim alone, without CUPTI: what recording the calls costs by itself.
    rm -rf "$out/shim_only" && mkdir -p "$out/shim_only"
    s=$EPOCHREALTIME
    line=$(GEMMTUNE_TRACE_DIR="$out/shim_only" LD_PRELOAD="$build/libgemmtune_trace_gemms.so" \
      python3 "$step" --mode "$mode" --steps "$steps" 2>&1 | grep '^trace_torch_step:')
    e=$EPOCHREALTIME
    echo "shim $s $e ${line:-failed}" >>"$runs_file"
    for kind in trace gemms; do
      flags=(--no-tables --out "$out/overhead.json")
      [[ $kind == gemms ]] && flags+=(--gemms)
      rm -f "$out/overhead.json"
      s=$EPOCHREALTIME
      line=$("$G" trace "${flags[@]}" -- python3 "$step" --mode "$mode" --steps "$steps" 2>&1 |
        grep '^trace_torch_step:')
      e=$EPOCHREALTIME
      wall=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["wall_ms"] / 1e3)' "$out/overhead.json" ||
        echo nan)
      echo "$kind $s $e child_wall_s=$wall ${line:-failed}" >>"$runs_file"
    done
  done
  rm -f "$out/overhead.json"
  # The runs go through a file: python3's stdin holds the program below.
  note "overhead: $(python3 - "$res/trace_overhead.json" "$steps" "$mode" "$runs_file" <<'PY'
import json, re, statistics, sys
walls, child_walls, loops = {}, {}, {}
for line in open(sys.argv[4]):
    kind, s, e, rest = line.split(" ", 3)
    walls.setdefault(kind, []).append(float(e) - float(s))
    child = re.search(r"child_wall_s=([0-9.]+)", rest)
    if child:
        child_walls.setdefault(kind, []).append(float(child.group(1)))
    m = re.search(r"loop_s=([0-9.]+)", rest)
    loops.setdefault(kind, []).append(float(m.group(1)) if m else float("nan"))
med = {k: statistics.median(v) for k, v in walls.items()}
loop = {k: statistics.median(v) for k, v in loops.items()}
ratio = med["gemms"] / med["plain"]
doc = {"what": f"{sys.argv[3]} training step (scripts/trace_torch_step.py), same steps in every run; wall: the "
               "command as a user runs it (python3, or gemmtune trace with its reading and writing of the trace), "
               "measured alike for every kind; child_wall_s: the trace's own wall_ms of the traced process; loop: "
               "the timed steps",
       "mode": sys.argv[3], "steps": int(sys.argv[2]), "wall_s": walls, "child_wall_s": child_walls,
       "loop_s": loops,
       "median_wall_s": med, "median_loop_s": loop,
       "gemms_over_plain_wall": ratio, "trace_over_plain_wall": med["trace"] / med["plain"],
       "gemms_over_plain_loop": loop["gemms"] / loop["plain"], "trace_over_plain_loop": loop["trace"] / loop["plain"],
       "shim_over_plain_loop": loop["shim"] / loop["plain"], "gemms_over_trace_wall": med["gemms"] / med["trace"]}
json.dump(doc, open(sys.argv[1], "w"), indent=1)
print(f"{sys.argv[3]} step x{sys.argv[2]} (loop {loop['plain']:.2f} s), medians of {len(walls['plain'])}: wall "
      f"untraced {med['plain']:.3f} s, trace {med['trace']:.3f} s, trace --gemms {med['gemms']:.3f} s: "
      f"--gemms/untraced {ratio:.4f} ({'PASS' if ratio <= 1.02 else 'FAIL'} <= 1.02); loop --gemms/untraced "
      f"{loop['gemms'] / loop['plain']:.4f}, trace/untraced {loop['trace'] / loop['plain']:.4f}, the shim alone (no "
      f"CUPTI)/untraced {loop['shim'] / loop['plain']:.4f}")
PY
)"
fi

echo
echo "=== trace_device_check summary ($slug; results under $res)"
for line in "${summary[@]}"; do echo "  $line"; done
