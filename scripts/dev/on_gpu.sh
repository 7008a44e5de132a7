#!/usr/bin/env bash
# Runs one step of a device session on one GPU of a several-GPU machine, so independent steps share a lease:
#   scripts/dev/on_gpu.sh GPU NAME LIMIT_S OUT_DIR CMD ARGS...
# CMD runs with CUDA_VISIBLE_DEVICES=GPU (its device 0 is that GPU), its output in OUT_DIR/NAME.log; one line
# "NAME gpu=GPU rc=RC S s" goes to OUT_DIR/summary.txt and stdout. Two steps on two GPUs: run two of these with &.
set -uo pipefail
gpu=$1 name=$2 limit=$3 out=$4
shift 4
mkdir -p "$out"
start=$(date +%s)
CUDA_VISIBLE_DEVICES=$gpu PYTHONUNBUFFERED=1 timeout "$limit" "$@" >"$out/$name.log" 2>&1
rc=$?
line=$(printf '%-14s gpu=%s rc=%-3s %4s s' "$name" "$gpu" "$rc" "$(($(date +%s) - start))")
echo "$line" | tee -a "$out/summary.txt"
exit $rc
