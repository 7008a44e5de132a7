#!/usr/bin/env bash
# Builds gemmtune and runs the whole test suite through ctest. Without a GPU every GPU test is reported as
# skipped, with its reason; everything else (db, profiles, gate, command generation, CLI errors) still runs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
