#!/usr/bin/env bash
# cuBLASLt algos the heuristic never answered, named by editing an answered one's id (split-k count, reduction scheme,
# tile), run through `gemmtune run --candidate`: each verified against fp64 in its process, then µs per call over
# ITERS warm calls from a stream, ROUNDS rounds in turn. A config cuBLASLt rejects prints "failed".
#   usage: [ROUNDS=3] [ITERS=300] scripts/dev/lt_config_variants.sh "M N K" CANDIDATE...
set -uo pipefail
rounds=${ROUNDS:-3} iters=${ITERS:-300}
read -r m n k <<< "${1:?usage: lt_config_variants.sh \"M N K\" CANDIDATE...}"
shift
run() {
  build/gemmtune run --m "$m" --n "$n" --k "$k" --bias --act gelu --mode fp32 --candidate "$1" --iters "$iters" \
    --warmup 30 --no-replays --db /tmp/lt_config_variants_none.db 2>&1 |
    awk '/^verify/{ok = $NF == "ok"} /^time/{us = $2} END{print us == "" ? "failed" : ok ? us : "unverified"}'
}
for ((round = 1; round <= rounds; ++round)); do
  for c in "$@"; do printf '%-6s %-48s %s\n' "$round" "$c" "$(run "$c")"; done
done
