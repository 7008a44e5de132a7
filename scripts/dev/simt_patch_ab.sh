#!/usr/bin/env bash
# One device call that judges a SIMT kernel patch against main, as the eighty-sixth stop judged four
# (results/nvidia-h100-80gb-hbm3/simt_interior_loop_ab.txt): the patched build's SimtGemm and KernelRegistry GPU
# tests, compute-sanitizer memcheck of the SimtGemm tests (racecheck too with RACECHECK=1), then main's gemmtune and
# the patched one in turns (main, patch; ROUNDS rounds) over the drawn profile with L2 cold, warm and k rounded up
# to a multiple of 4, and the trade profile; scripts/dev/sweep_variant_ab.py's verdict per sweep; and, given the
# patched simt_gemm.cu object, scripts/dev/sass_loop_stats.py on the kernels of the trades (a whole gemmtune takes
# cuobjdump two minutes).
# Leaves sweeps, logs and summary.txt in OUT (a device call returns a few files: tar OUT); starts no sweep once LIMIT
# seconds have passed.
#   usage: [OUT=dir] [ROUNDS=2] [LIMIT=400] [RACECHECK=1] \
#          scripts/dev/simt_patch_ab.sh MAIN_GEMMTUNE PATCHED_BUILD_DIR [SIMT_OBJECT]
set -uo pipefail
usage="usage: simt_patch_ab.sh MAIN_GEMMTUNE PATCHED_BUILD_DIR [SIMT_OBJECT]"
main_bin=${1:?$usage}
build=${2:?$usage}
object=${3:-}
out=${OUT:-/tmp/simt_patch_ab} rounds=${ROUNDS:-2} limit=${LIMIT:-400}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
for f in "$main_bin" "$build/gemmtune" "$build/tests/gemmtune_tests"; do
  [[ -x $f ]] || { echo "simt_patch_ab: $f is not an executable" >&2; exit 2; }
done
[[ -z $object || -r $object ]] || { echo "simt_patch_ab: cannot read $object" >&2; exit 2; }
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee "$out/gpu.txt"

GEMMTUNE_REQUIRE_GPU=1 timeout 150 "$build/tests/gemmtune_tests" --gtest_filter='SimtGemm*:KernelRegistry*' \
  > "$out/tests.txt" 2>&1
echo "GPU tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/tests.txt" | tr '\n' ' ')" | tee "$out/summary.txt"
# racecheck of the SimtGemm tests ran past 200 s on an H100 (the eighty-seventh stop): only where asked, RACECHECK=1.
tools=(memcheck)
[[ ${RACECHECK:-0} == 1 ]] && tools+=(racecheck)
for tool in "${tools[@]}"; do
  timeout 200 compute-sanitizer --tool "$tool" "$build/tests/gemmtune_tests" --gtest_filter='SimtGemm*' \
    > "$out/$tool.txt" 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.txt")" | tee -a "$out/summary.txt"
done

# The drawn profile as committed (L2 cold), with L2 warm, and with k rounded up to a multiple of 4 (the aligned
# instantiation on the same shapes); the trade profile as committed.
python3 - "$root/scripts/dev/simt_256_drawn_profile.json" "$out" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    drawn = json.load(f)
warm = dict(drawn, name=drawn["name"] + "_warm", timing=dict(drawn["timing"], l2="warm"))
aligned = dict(drawn, name=drawn["name"] + "_aligned", shapes=[[m, n, (k + 3) // 4 * 4] for m, n, k in drawn["shapes"]])
for name, profile in (("warm", warm), ("aligned", aligned)):
    with open(f"{sys.argv[2]}/profile_{name}.json", "w") as f:
        json.dump(profile, f)
PY
declare -A profiles=([cold]=$root/scripts/dev/simt_256_drawn_profile.json [warm]=$out/profile_warm.json
                     [aligned]=$out/profile_aligned.json [trades]=$root/scripts/dev/simt_256_c2_profile.json)
for sweep in cold warm aligned trades; do
  for ((round = 1; round <= rounds; ++round)); do
    for side in main patch; do
      [[ $SECONDS -lt $limit ]] || continue
      bin=$main_bin
      [[ $side == patch ]] && bin=$build/gemmtune
      name=${sweep}_${side}_$round
      timeout 120 "$bin" sweep --profile "${profiles[$sweep]}" --no-db --json "$out/$name.json" \
        > "$out/$name.log" 2>&1 || echo "sweep $name failed (rc=$?)" | tee -a "$out/summary.txt"
    done
  done
  args=()
  for ((round = 1; round <= rounds; ++round)); do
    [[ -s $out/${sweep}_main_$round.json && -s $out/${sweep}_patch_$round.json ]] &&
      args+=(--round "$out/${sweep}_main_$round.json" "$out/${sweep}_patch_$round.json")
  done
  if ((${#args[@]})); then
    echo "== $sweep (main/patch; > 1: the patch is faster)" >> "$out/summary.txt"
    python3 "$root/scripts/dev/sweep_variant_ab.py" --family own/fp32 "${args[@]}" --out "$out/${sweep}_ab.json" |
      grep -v '^  *own/' >> "$out/summary.txt"
  fi
done

# The 64x64 8x4 tile, aligned and unaligned rows, and the 64x128 8x8 one split, unaligned: the trades' tiles.
if [[ -n $object ]]; then
  cuobjdump -sass "$object" > "$out/simt.sass"
  for kernel in ILi64ELi64ELi16ELi32ELi32ELi8ELi4ELi2ELi1EEELb0ELb0E \
                ILi64ELi64ELi16ELi32ELi32ELi8ELi4ELi2ELi1EEELb0ELb1E \
                ILi64ELi128ELi16ELi32ELi64ELi8ELi8ELi2ELi1EEELb1ELb1E; do
    awk -v k="$kernel" '/Function : / { keep = index($0, k) > 0 } keep' "$out/simt.sass" > "$out/$kernel.sass"
    python3 "$root/scripts/dev/sass_loop_stats.py" "$out/$kernel.sass" >> "$out/summary.txt"
  done
  gzip -9 "$out/simt.sass"
fi
echo "done at ${SECONDS}s" | tee -a "$out/summary.txt"
