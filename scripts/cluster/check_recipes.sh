#!/bin/bash
# Tests the cluster recipes as far as a machine without Slurm, Kubernetes or a GPU allows: their syntax, the
# scheduler variables gemmtune reads, and the commands they run, as dry runs (`sweep --dry-run`) whose shards must
# together be the whole plan, each problem once. Usage: scripts/cluster/check_recipes.sh path/to/gemmtune
set -euo pipefail

gemmtune=$(realpath "${1:?usage: $0 path/to/gemmtune}")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check NAME COMMAND...: runs the command, reports it
  local name=$1
  shift
  if "$@"; then echo "ok    $name"; else echo "FAIL  $name"; failures=$((failures + 1)); fi
}

# The problem keys a dry run lists ("[3/40] fwd:...").
plan_keys() { sed -n 's/^\[[0-9]*\/[0-9]*\] \([^ ]*\)$/\1/p'; }

"$gemmtune" sweep --profile ci --dry-run | plan_keys | sort > "$work/whole.txt"
[[ -s "$work/whole.txt" ]] || { echo "FAIL  the ci plan lists no problems"; exit 1; }

# Each file a recipe consists of parses.
for script in slurm_sweep.sbatch slurm_merge.sbatch slurm_submit.sh check_recipes.sh; do
  check "bash -n $script" bash -n "$here/$script"
done

# The shards' keys, concatenated, are the whole plan: sorted, no key twice, none missing.
same_as_whole() { sort "$1" > "$1.sorted" && cmp -s "$1.sorted" "$work/whole.txt"; }

# Slurm: every array task of --array=0-3 and of --array=1-4 runs slurm_sweep.sbatch's command as a dry run.
for min in 0 1; do
  : > "$work/slurm-$min.txt"
  for task in 0 1 2 3; do
    SLURM_ARRAY_TASK_ID=$((task + min)) SLURM_ARRAY_TASK_MIN=$min SLURM_ARRAY_TASK_MAX=$((3 + min)) \
      SLURM_ARRAY_TASK_COUNT=4 OUT_DIR="$work/out" GEMMTUNE="$gemmtune" PROFILE=ci SWEEP_ARGS="--dry-run" \
      bash "$here/slurm_sweep.sbatch" | plan_keys >> "$work/slurm-$min.txt"
  done
  check "slurm --array=$min-$((3 + min)): 4 shards are the whole ci plan" same_as_whole "$work/slurm-$min.txt"
done
expect_status() {  # expect_status CODE COMMAND...
  local want=$1 got=0
  shift
  "$@" > "$work/out.txt" 2>&1 || got=$?
  [[ $got -eq $want ]] || { echo "      exit $got, expected $want: $(tail -1 "$work/out.txt")"; return 1; }
}
check "slurm: a task outside an array is refused" expect_status 1 \
  env -u SLURM_ARRAY_TASK_ID OUT_DIR="$work/out" GEMMTUNE="$gemmtune" bash "$here/slurm_sweep.sbatch"
check "slurm: a malformed task id exits 2" expect_status 2 \
  env SLURM_ARRAY_TASK_ID=x1 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=4 OUT_DIR="$work/out" \
  GEMMTUNE="$gemmtune" PROFILE=ci SWEEP_ARGS=--dry-run bash "$here/slurm_sweep.sbatch"
check "slurm: a stepped array (--array=0-6:2) exits 2" expect_status 2 \
  env SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=6 SLURM_ARRAY_TASK_COUNT=4 \
  OUT_DIR="$work/out" GEMMTUNE="$gemmtune" PROFILE=ci SWEEP_ARGS=--dry-run bash "$here/slurm_sweep.sbatch"

# slurm_submit.sh: the array, then the merge with afterok on it, through a stand-in sbatch that records its calls.
cat > "$work/sbatch" <<'FAKE'
#!/bin/bash
echo "$*" >> "$FAKE_SBATCH_LOG"
if grep -q slurm_sweep.sbatch <<< "$*"; then echo "4242;cluster"; else echo 4243; fi
FAKE
chmod +x "$work/sbatch"
submitted() {
  FAKE_SBATCH_LOG="$work/sbatch.log" SBATCH="$work/sbatch" bash "$here/slurm_submit.sh" 8 "$work/tune" ci -- \
    --partition=gpu > "$work/submit.txt" &&
    grep -q -- "--array=0-7 .*--partition=gpu .*slurm_sweep.sbatch" <(sed -n 1p "$work/sbatch.log") &&
    grep -q -- "--dependency=afterok:4242 .*--partition=gpu .*slurm_merge.sbatch" <(sed -n 2p "$work/sbatch.log")
}
check "slurm_submit.sh: array of 8, then merge with --dependency=afterok" submitted
check "slurm_submit.sh: N must be a positive integer" expect_status 2 \
  env SBATCH="$work/sbatch" FAKE_SBATCH_LOG="$work/sbatch.log" bash "$here/slurm_submit.sh" 0 "$work/tune"

# slurm_merge.sbatch: refuses a missing shard; merges what is there with a stand-in gemmtune that records its call.
mkdir -p "$work/merge"
touch "$work/merge/shard-0.db" "$work/merge/shard-1.db"
printf '#!/bin/bash\necho "$*" > "%s/merge-call.txt"\n' "$work" > "$work/fake-gemmtune"
chmod +x "$work/fake-gemmtune"
check "slurm_merge.sbatch: 2 shard dbs where 3 were expected exits 2" expect_status 2 \
  env OUT_DIR="$work/merge" SHARDS=3 GEMMTUNE="$work/fake-gemmtune" bash "$here/slurm_merge.sbatch"
merged() {
  OUT_DIR="$work/merge" SHARDS=2 GEMMTUNE="$work/fake-gemmtune" bash "$here/slurm_merge.sbatch" &&
    grep -q "^cache merge $work/merge/merged.db $work/merge/shard-0.db $work/merge/shard-1.db --sweep-json" \
      "$work/merge-call.txt"
}
check "slurm_merge.sbatch: cache merge OUT.db shard-*.db --sweep-json" merged

# Kubernetes: the manifest parses; the sweep Job is Indexed with one GPU a pod and agrees with itself and the merge
# Job on SHARDS; its pod command, run as a dry run for every completion index, covers the whole plan.
python3 - "$here/k8s_sweep_job.yaml" "$work" <<'PY'
import json, sys
path, work = sys.argv[1], sys.argv[2]
try:
    import yaml
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
except ImportError:  # no PyYAML: the structure is checked by the shell's greps only
    docs = None
if docs is not None:
    sweep, merge = docs
    assert sweep["kind"] == "Job" and merge["kind"] == "Job", "two Jobs"
    spec = sweep["spec"]
    assert spec["completionMode"] == "Indexed", "the sweep is an Indexed Job"
    pod = spec["template"]["spec"]
    box = pod["containers"][0]
    assert box["resources"]["limits"]["nvidia.com/gpu"] == 1, "one GPU per pod"
    env = {e["name"]: e["value"] for e in box["env"]}
    merge_env = {e["name"]: e["value"] for e in merge["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert int(env["SHARDS"]) == spec["completions"] == int(merge_env["SHARDS"]), "SHARDS agrees in three places"
    claims = {v["persistentVolumeClaim"]["claimName"] for d in docs for v in d["spec"]["template"]["spec"]["volumes"]}
    assert len(claims) == 1, "sweep and merge share one volume"
    json.dump({"sweep": box["args"][0], "merge": merge["spec"]["template"]["spec"]["containers"][0]["args"][0],
               "shards": spec["completions"], "profile": env["PROFILE"]}, open(work + "/k8s.json", "w"))
print("ok    k8s_sweep_job.yaml: " + ("parsed with PyYAML" if docs is not None else "PyYAML missing, not parsed"))
PY
if [[ -f "$work/k8s.json" ]]; then
  read_field() { python3 -c "import json,sys; print(json.load(open('$work/k8s.json'))['$1'])"; }
  sweep_cmd=$(read_field sweep)
  merge_cmd=$(read_field merge)
  shards=$(read_field shards)
  mkdir -p "$work/bin" "$work/results"
  ln -sf "$gemmtune" "$work/bin/gemmtune"
  # The pod's command as the pod runs it, with the volume in a scratch directory and --dry-run added.
  dry_cmd=${sweep_cmd//\/results/$work/results}
  dry_cmd=${dry_cmd/gemmtune sweep/gemmtune sweep --dry-run}
  : > "$work/k8s-keys.txt"
  for ((index = 0; index < shards; ++index)); do
    PATH="$work/bin:$PATH" JOB_COMPLETION_INDEX=$index PROFILE=ci SHARDS=$shards sh -c "$dry_cmd" |
      plan_keys >> "$work/k8s-keys.txt"
  done
  check "k8s: $shards completion indices are the whole ci plan" same_as_whole "$work/k8s-keys.txt"
  done_marks() { [[ $(ls "$work/results"/shard-*.done | wc -l) -eq $shards ]]; }
  check "k8s: every pod that succeeded leaves its done-mark" done_marks
  check "k8s: an index past --shards exits 2" expect_status 2 \
    env PATH="$work/bin:$PATH" JOB_COMPLETION_INDEX=$shards PROFILE=ci SHARDS=$shards sh -c "$dry_cmd"
  merge_line() { grep -q "gemmtune cache merge /results/merged.db /results/shard-\*.db --sweep-json" <<< "$merge_cmd"; }
  check "k8s: the merge Job runs cache merge over every shard db" merge_line
else
  grep -q "completionMode: Indexed" "$here/k8s_sweep_job.yaml" && grep -q "nvidia.com/gpu: 1" "$here/k8s_sweep_job.yaml" ||
    { echo "FAIL  k8s_sweep_job.yaml structure"; failures=$((failures + 1)); }
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all cluster recipe checks passed"
