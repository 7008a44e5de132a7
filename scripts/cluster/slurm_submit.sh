#!/bin/bash
# Queues a sharded gemmtune sweep on Slurm: an N-task array (slurm_sweep.sbatch, one GPU per task), then the merge
# (slurm_merge.sbatch), which waits for the whole array with --dependency=afterok.
#
#   scripts/cluster/slurm_submit.sh N OUT_DIR [PROFILE] [-- SBATCH_OPTION...]
#   scripts/cluster/slurm_submit.sh 16 /shared/tune full -- --partition=gpu --account=ml
#
# Choose N from `gemmtune sweep --profile PROFILE --dry-run --shards N` (estimated time per shard). GEMMTUNE,
# SWEEP_ARGS and SCRATCH are passed on to the tasks (see slurm_sweep.sbatch). SBATCH names the sbatch to call.
set -euo pipefail

usage() {
  echo "usage: $0 N OUT_DIR [PROFILE] [-- SBATCH_OPTION...]" >&2
  exit 2
}
[[ $# -ge 2 ]] || usage
shards=$1
out_dir=$2
shift 2
profile=full
if [[ $# -gt 0 && $1 != "--" ]]; then
  profile=$1
  shift
fi
if [[ $# -gt 0 ]]; then
  [[ $1 == "--" ]] || usage
  shift
fi
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "$0: N must be a positive integer, not '$shards'" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SBATCH=${SBATCH:-sbatch}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
export OUT_DIR=$out_dir PROFILE=$profile SHARDS=$shards

# --parsable prints "jobid" or "jobid;cluster".
sweep_job=$("$SBATCH" --parsable --array="0-$((shards - 1))" --export=ALL "$@" "$here/slurm_sweep.sbatch")
sweep_job=${sweep_job%%;*}
merge_job=$("$SBATCH" --parsable --dependency="afterok:$sweep_job" --export=ALL "$@" "$here/slurm_merge.sbatch")
merge_job=${merge_job%%;*}
echo "sweep: array job $sweep_job ($shards shards of profile $profile, one GPU each) -> $out_dir/shard-*.db"
echo "merge: job $merge_job after all of $sweep_job succeed -> $out_dir/merged.db, $out_dir/merged.json"
