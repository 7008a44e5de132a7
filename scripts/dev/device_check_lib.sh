# shellcheck shell=bash
# What the issue checks run on the GPU machine (scripts/dev/*_device_check.sh) share; sourced, after they set `here`
# (the repository):
#   start_check "$@"        takes the check's one argument, OUT_DIR (else usage, exit 2), makes it, and sets `out` (it,
#                           absolute), `build` (BUILD_DIR, default $here/build) and `G` (its gemmtune)
#   note LINE               prints "== LINE" and keeps it for the summary a check prints last (${summary[@]})
#   build_unless_skipped    builds into $build (scripts/dev/device_build.sh; its log in $out/build.log) unless
#                           SKIP_BUILD=1 says $build holds one already (a carried build: scripts/dev/prebuilt.sh); a
#                           failed build ends the check (exit 1)
#   gpu_slug                GPU 0's results folder name, as `gemmtune devices --json` gives it; no GPU ends it (exit 3)
#   run_us BIN MODE M N K CANDIDATE ITERS DB
#                           µs per call of `BIN run`, bias+gelu, ITERS timed calls after 30, no graph replays;
#                           "unverified" where its check against fp64 failed, "failed" where it printed no time; an
#                           empty CANDIDATE is the runtime's own choice
summary=()

# shellcheck disable=SC2034 # out, build and G are the sourcing check's
start_check() {
  if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
  fi
  mkdir -p "$1"
  out=$(cd "$1" && pwd)
  build=${BUILD_DIR:-$here/build}
  G=$build/gemmtune
}

note() { summary+=("$1"); echo "== $1"; }

build_unless_skipped() {
  [[ ${SKIP_BUILD:-0} == 1 ]] && return 0
  local began=$SECONDS
  if ! BUILD_DIR=$build bash "$(dirname "${BASH_SOURCE[0]}")/device_build.sh" >"$out/build.log" 2>&1; then
    tail -40 "$out/build.log"
    echo "build failed (see $out/build.log)"
    exit 1
  fi
  note "build: $((SECONDS - began)) s"
}

gpu_slug() {
  "$build/gemmtune" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["slug"])' || exit 3
}

run_us() {
  "$1" run --m "$3" --n "$4" --k "$5" --bias --act gelu --mode "$2" ${6:+--candidate "$6"} --iters "$7" --warmup 30 \
    --no-replays --db "$8" 2>&1 |
    awk '/^verify/{ok = $NF == "ok"} /^time/{us = $2} END{print us == "" ? "failed" : ok ? us : "unverified"}'
}
