#!/usr/bin/env bash
# cuBLASLt algos the heuristic never answered, named by editing an answered one's id (split-k count, reduction scheme,
# tile), run through `gemmtune run --candidate`: each verified against fp64 in its process, then µs per call over
# ITERS warm calls from a stream, ROUNDS rounds in turn. A config cuBLASLt rejects prints "failed".
#   usage: [ROUNDS=3] [ITERS=300] scripts/dev/lt_config_variants.sh "M N K" CANDIDATE...
set -uo pipefail
rounds=${ROUNDS:-3} iters=${ITERS:-300}
read -r m n k <<< "${1:?usage: lt_config_variants.sh \"M N K\" CANDIDATE...}"
shift
# shellcheck source=device_check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_check_lib.sh"
run() { run_us build/gemmtune fp32 "$m" "$n" "$k" "$1" "$iters" /tmp/lt_config_variants_none.db; }
for ((round = 1; round <= rounds; ++round)); do
  for c in "$@"; do printf '%-6s %-48s %s\n' "$round" "$c" "$(run "$c")"; done
done
