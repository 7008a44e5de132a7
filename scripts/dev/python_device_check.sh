#!/usr/bin/env bash
# The Python package on the GPU machine (issue 36): builds the tree (scripts/device_build.sh, with pybind11 from
# python3's pip), runs the Python tests (ctest -R '^python\.': CPU checks and the GPU checks against fp64 PyTorch),
# checks that PyTorch's process and the CLI see one cache key (GPU, driver, cuBLASLt), and runs a small smoke of
# scripts/bench_torch_step.py. Logs and JSON go to OUT_DIR; a summary prints last. Exit 0 only if every step passed.
#   usage: scripts/dev/python_device_check.sh OUT_DIR [bench_torch_step.py args, which replace the smoke's]
# e.g. the benchmark itself, in parts of under 10 minutes each, merged afterwards (--merge):
#   scripts/dev/python_device_check.sh "$OUT" --sizes 1024,2048 --modes tf32 --out "$OUT/torch_step_tf32_a.json"
set -uo pipefail
out=${1:?usage: scripts/dev/python_device_check.sh OUT_DIR [bench args]}
shift
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
status=0
summary=()

# step NAME TIMEOUT_S COMMAND...: runs it with its output in OUT_DIR/NAME.log and one summary line.
step() {
  local name=$1 limit=$2 start rc
  shift 2
  start=$(date +%s)
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || status=1
  summary+=("$(printf '%-8s rc=%-4s %5s s' "$name" "$rc" "$(($(date +%s) - start))")")
  return $rc
}

if ! step build 420 bash "$root/scripts/dev/device_build.sh"; then
  tail -20 "$out/build.log"
  printf '%s\n' "${summary[@]}"
  exit 1
fi
export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH}

# One key or two: a Python process that imported PyTorch first runs PyTorch's cuBLASLt; the CLI runs the toolkit's.
step keys 120 python3 - "$build/gemmtune" <<'PY'
import json, os, subprocess, sys, tempfile
import torch, gemmtune
from gemmtune.tuning import loaded_cublaslt
with tempfile.TemporaryDirectory() as tmp:
    python_key = gemmtune.Runtime(os.path.join(tmp, "k.db")).device_key
devices = subprocess.run([sys.argv[1], "devices", "--json"], capture_output=True, text=True, check=True).stdout
cli_keys = [d["key"] for d in json.loads(devices)]
print("torch", torch.__version__, "python", sys.version.split()[0], "cuBLASLt loaded:", loaded_cublaslt())
print("python runtime key:", python_key)
print("cli device keys:   ", cli_keys)
print("same key" if python_key in cli_keys else "DIFFERENT keys: sweep_misses preloads this process's cuBLASLt")
PY

step tests 480 ctest --test-dir "$build" -R '^python\.' -V
grep -E '(FAIL|ERROR):|skipped ' "$out/tests.log" | sed 's/^[0-9]*: //' | sort -u >"$out/tests_notes.txt"

bench_args=(--sizes 1024 --tokens 1000 --modes tf32 --variants nn_eager,fused_eager,nn_graph,fused_graph
            --steps 20 --timed-steps 20 --out "$out/torch_step_smoke.json")
[[ $# -gt 0 ]] && bench_args=("$@")
step bench 540 python3 "$root/scripts/bench_torch_step.py" --db-dir "$out/dbs" "${bench_args[@]}"

echo "== keys =="
tail -3 "$out/keys.log"
echo "== python tests: failures and skips (details in tests.log) =="
cat "$out/tests_notes.txt"
grep -E '% tests passed' "$out/tests.log"
echo "== bench_torch_step =="
grep -vE '^(tuned|d=[0-9]+ tokens)' "$out/bench.log" | tail -25
echo "== summary =="
printf '%s\n' "${summary[@]}"
exit $status
