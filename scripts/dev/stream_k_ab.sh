#!/usr/bin/env bash
# Stream-K per call (results/nvidia-h200/stream_k_ab.txt): for each shape, tf32 bias+gelu, the runtime with no db
# (cuBLASLt's heuristic-first) and each Stream-K tile's variant with and without `_streamk`, two rounds, a process per
# cell, µs per call over 200 back-to-back calls (`gemmtune run`). GT names the gemmtune binary (default build/gemmtune).
#   usage: [GT=build/gemmtune] scripts/dev/stream_k_ab.sh ["M N K" ...]
set -uo pipefail
gt=${GT:-build/gemmtune}
run() {
  "$gt" run --m "$1" --n "$2" --k "$3" --bias --act gelu --mode tf32 ${4:+--candidate "$4"} --iters 200 --warmup 20 \
    --db /tmp/stream_k_ab_none.db 2>&1 | awk '/^time/{print $2}'
}
shapes=("$@")
((${#shapes[@]})) || shapes=("1515 2288 6340" "1024 1024 8192" "4096 4096 4096" "3000 3000 3000" "2560 2560 4096"
  "1536 4096 2048")
for shape in "${shapes[@]}"; do
  read -r m n k <<< "$shape"
  for round in 1 2; do
    line="${m}x${n}x${k} r$round default $(run "$m" "$n" "$k")"
    for t in 256x128x32_s4 192x128x32_s4 128x128x32_s4; do
      line="$line | $t $(run "$m" "$n" "$k" "own/wgmma_tf32_$t") sk $(run "$m" "$n" "$k" "own/wgmma_tf32_${t}_streamk")"
    done
    echo "$line"
  done
done
