#!/usr/bin/env bash
# Runtime builds against PyTorch eager, alternating, in one machine's session (issue 48; results/nvidia-h200/
# trial_placement_ab.json.gz and trial_min_calls_ab.json.gz): per pass, one build's libgemmtune_runtime.so (a copy of
# build/src/runtime/libgemmtune_runtime.so* made before rebuilding, in a folder of its own; `current` for the build's
# own) is put in front by LD_LIBRARY_PATH, and scripts/eager_same_process.py times the runtime with an empty db (the
# first-use trial decides) against eager in one process on the same tensors, tf32 bias+gelu.
#   usage: scripts/dev/eager_ab.sh OUT_DIR PASSES LIB_DIR|current ...   e.g. eager_ab.sh /tmp/ab 2 /tmp/lib_old current
# SHAPES (default scripts/dev/eager_loss_shapes.json) and BUILD_DIR (default build) may be set. Writes
# OUT_DIR/ab_<pass>_<build>.json; the builds alternate, pass after pass.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:?usage: eager_ab.sh OUT_DIR PASSES LIB_DIR|current ...}
passes=${2:?usage: eager_ab.sh OUT_DIR PASSES LIB_DIR|current ...}
shift 2
(($#)) || { echo "eager_ab.sh: name at least one build (LIB_DIR or current)" >&2; exit 2; }
build=${BUILD_DIR:-$root/build}
shapes=${SHAPES:-$root/scripts/dev/eager_loss_shapes.json}
mkdir -p "$out"
export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH}
empty_export=$out/empty_export.json
echo '{"schema": "gemmtune.cache", "schema_version": 1, "gemmtune_version": "0.1.0",' \
  '"exported_at": "1970-01-01T00:00:00Z", "entries": []}' > "$empty_export"
rm -f "$out/empty.db"
"$build/gemmtune" cache merge --db "$out/empty.db" "$empty_export" > /dev/null
i=0
for ((pass = 0; pass < passes; ++pass)); do
  for lib in "$@"; do
    i=$((i + 1))
    name=$(basename "$lib")
    if [[ $lib == current ]]; then unset LD_LIBRARY_PATH; else export LD_LIBRARY_PATH=$lib; fi
    cp "$out/empty.db" "$out/run$i.db"  # a fresh db each run: its misses table is written at exit
    echo "== run $i: $name"
    python3 "$root/scripts/eager_same_process.py" --shapes "$shapes" --db "$out/run$i.db" --modes tf32 \
      --epilogues bias+gelu --rounds 5 --json "$out/ab_${i}_$name.json"
  done
done
