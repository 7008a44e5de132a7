#!/usr/bin/env bash
# Builds gemmtune and runs the main job: a quick sweep on this machine's GPU into results/gemmtune.db.
# Exit codes: 0 ok, 1 a check failed, 2 bad set-up or input, 3 no usable GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GEMMTUNE_ROOT"

# `devices` exits 3 with a one-line reason when there is no usable GPU; say so and stop with that code.
"$BUILD_DIR/gemmtune" devices || {
  rc=$?
  echo "gemmtune: no usable GPU here, so no sweep (exit $rc). The tests still run: scripts/test.sh" >&2
  exit "$rc"
}
mkdir -p results
exec "$BUILD_DIR/gemmtune" sweep --profile "${PROFILE:-quick}" --db results/gemmtune.db \
  --json results/sweep-"${PROFILE:-quick}".json --csv results/sweep-"${PROFILE:-quick}".csv "$@"
