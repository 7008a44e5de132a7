#!/usr/bin/env bash
# Two gemmtune binaries (a kernel change's before and after) timed on the same pinned candidates, alternating, in one
# device call: per cell and round, µs a call over ITERS back-to-back calls of tf32 bias+gelu (`gemmtune run`, CUDA
# events, each process's first call checked against fp64: a cell whose check fails prints "unverified", one that
# does not run "failed"), then new/old. An empty candidate is the runtime's no-entry default.
#   usage: OLD=bin NEW=bin [ROUNDS=2] [ITERS=300] scripts/dev/binary_ab.sh "M N K [CANDIDATE]" ...
set -uo pipefail
old=${OLD:?OLD=gemmtune binary before} new=${NEW:?NEW=gemmtune binary after}
rounds=${ROUNDS:-2} iters=${ITERS:-300}
# shellcheck source=device_check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_check_lib.sh"
run() { run_us "$1" tf32 "$2" "$3" "$4" "$5" "$iters" /tmp/binary_ab_none.db; }
printf '%-20s %-44s %-6s %10s %10s %8s\n' shape candidate round old_us new_us new/old
for cell in "$@"; do
  read -r m n k candidate <<< "$cell"
  for ((round = 1; round <= rounds; ++round)); do
    a=$(run "$old" "$m" "$n" "$k" "$candidate")
    b=$(run "$new" "$m" "$n" "$k" "$candidate")
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN{if (a + 0 > 0 && b + 0 > 0) printf "%.3f", b / a; else print "-"}')
    printf '%-20s %-44s %-6s %10s %10s %8s\n' "${m}x${n}x${k}" "${candidate:-default}" "$round" "$a" "$b" "$ratio"
  done
done
