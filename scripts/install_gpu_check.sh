#!/usr/bin/env bash
# GPU check of issue 16 (an installed gemmtune on the GPU machine): installs BUILD (already built; nothing is
# compiled here) into OUT/prefix, then from another directory, with no GEMMTUNE_* variables, runs the installed
# binary: a one-shape sweep into a db, `ncu --exec` of a case (the quick section set from share/gemmtune, the
# report imported into the db), `report` (the report script from share/gemmtune), and the too-large problems of
# `run` and `sweep`, which must exit 2 naming the bytes needed and free. Prints a table last; exit 1 if a row failed.
#   scripts/install_gpu_check.sh BUILD OUT
set -uo pipefail
build=$(cd "${1:?usage: install_gpu_check.sh BUILD OUT}" && pwd)
mkdir -p "${2:?usage: install_gpu_check.sh BUILD OUT}"
out=$(cd "$2" && pwd)
prefix=$out/prefix
rm -rf "$prefix" "$out/work"
mkdir -p "$out/work"
unset GEMMTUNE_DATA_DIR GEMMTUNE_PROFILES GEMMTUNE_REPORT_SCRIPT
rows=()
failed=0
row() {  # name, expected, actual, detail
  local verdict=ok
  [[ $2 == "$3" ]] || { verdict=FAILED; failed=1; }
  rows+=("$(printf '%-34s expected %-4s got %-4s %-6s %s' "$1" "$2" "$3" "$verdict" "$4")")
}

cmake --install "$build" --prefix "$prefix" >"$out/install.log" 2>&1
row "cmake --install" 0 $? "$prefix"
gt=$prefix/bin/gemmtune
cd "$out/work"

cat >"$out/one_shape.json" <<'JSON'
{"name": "install_check", "shapes": [[1024, 1024, 1024]], "modes": ["tf32"], "backends": ["own", "lt"]}
JSON
"$gt" sweep --profile "$out/one_shape.json" --db "$out/t.db" >"$out/sweep.log" 2>&1
rc=$?; [[ $rc -eq 1 ]] && rc=0  # 1: a candidate failed verification; the others' timings still stand
row "sweep (one shape) into a db" 0 $rc "$(tail -1 "$out/sweep.log")"

"$gt" ncu --m 1024 --n 1024 --k 1024 --mode tf32 --candidate own/tf32_64x64x32_w32x32_s3 --db "$out/t.db" --exec \
  >"$out/ncu.log" 2>&1
row "ncu --exec (quick set, import)" 0 $? "$(grep -m1 -E 'imported|error' "$out/ncu.log")"

"$gt" report --db "$out/t.db" --out "$out/report" >"$out/report.log" 2>&1
rc=$?
row "report" 0 $rc "$( [[ -s $out/report/index.html ]] && echo "index.html written" || tail -1 "$out/report.log")"

"$gt" run --m 100000 --n 100000 --k 100000 --db "$out/t.db" >"$out/run_large.log" 2>&1
rc=$?
row "run 100000^3 (does not fit)" 2 $rc "$(tail -1 "$out/run_large.log" | cut -c1-160)"
grep -q "needs .* bytes) of GPU memory, but only .* are free" "$out/run_large.log" || row "run 100000^3 names both sizes" yes no ""
grep -q "device_buffer\|\.hpp:\|\.cpp:" "$out/run_large.log" && row "run 100000^3 names no source path" yes no ""

cat >"$out/huge.json" <<'JSON'
{"name": "huge", "shapes": [[100000, 100000, 100000]], "modes": ["tf32"]}
JSON
runs_before=$(sqlite3 "$out/t.db" 'select count(*) from runs' 2>/dev/null || echo "?")
"$gt" sweep --profile "$out/huge.json" --db "$out/t.db" >"$out/sweep_large.log" 2>&1
rc=$?
runs_after=$(sqlite3 "$out/t.db" 'select count(*) from runs' 2>/dev/null || echo "?")
row "sweep 100000^3 (does not fit)" 2 $rc "runs in db: $runs_before -> $runs_after; $(tail -1 "$out/sweep_large.log" | cut -c1-120)"

printf '%s\n' "${rows[@]}"
exit $failed
