#!/usr/bin/env bash
# Proves an installed gemmtune needs nothing from the tree it was built from: with the source tree hidden (a tmpfs
# mounted over it in a private mount namespace) and / as the working directory, PREFIX/bin/gemmtune must print its
# version, plan `sweep --profile default --dry-run`, print the ncu command of a case (the quick section set), and
# write a report (the report script) of a db filled by `cache import`, and run a command under `apply` (its GEMM shim
# found in PREFIX/lib/gemmtune, the backend beside it resolving the installed runtime).
#   scripts/check_install.sh PREFIX                 an install (cmake --install, or a .deb unpacked with dpkg -x)
#   scripts/check_install.sh --install-from BUILD   installs BUILD into a temporary prefix first (the ctest test)
# Exit 0: all worked; 1: one failed; 77: this machine cannot hide the source tree (no mount namespaces).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d /tmp/gemmtune-install-check.XXXXXX)
trap 'rm -rf "$work"' EXIT

if [[ ${1:-} == --install-from ]]; then
  cmake --install "$2" --prefix "$work/prefix" >/dev/null
  prefix=$work/prefix
else
  prefix=$(cd "${1:?usage: check_install.sh PREFIX | --install-from BUILD}" && pwd)
fi
case "$prefix/" in "$root"/*) echo "check_install: $prefix is inside the source tree, which the check hides" >&2; exit 2 ;; esac

# One verified cache entry, so that `report` has something to draw.
cat >"$work/export.json" <<'JSON'
{"schema": "gemmtune.cache", "schema_version": 1, "gemmtune_version": "0.1.0", "exported_at": "2026-11-24T00:32:20Z",
 "entries": [{"device_key": "NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt130100",
  "problem_key": "fwd:1024x1024x1024:nn:row:none:tf32",
  "problem": {"act": "none", "bias": false, "dropout": 0.0, "k": 1024, "key": "fwd:1024x1024x1024:nn:row:none:tf32",
              "layout": "nn", "m": 1024, "mode": "tf32", "n": 1024, "out": "row", "pass": "fwd", "save_z": false},
  "candidate": {"backend": "own", "id": "own/tf32_64x64x32_w32x32_s3", "variant": "tf32_64x64x32_w32x32_s3",
                "heuristic_rank": 0},
  "status": "ok",
  "stats": {"median_us": 29.2, "p10_us": 29.0, "p90_us": 29.5, "mean_us": 29.25, "stddev_us": 0.2, "min_us": 28.9,
            "max_us": 30.1, "samples": 160, "timer": "cupti", "sm_clock_mhz": 1980.0, "events_per_call_us": 31.0},
  "verify_error": 0.0002, "tolerance": 0.001,
  "run": {"id": 1, "origin": "check.db", "gemmtune_version": "0.1.0"}, "updated_at": "2026-11-24T00:32:20Z"}]}
JSON

checks=$(cat <<CHECKS
set -e
mount -t tmpfs gemmtune-source-hidden "$root"
test ! -e "$root/profiles"
cd /
unset GEMMTUNE_DATA_DIR GEMMTUNE_PROFILES GEMMTUNE_REPORT_SCRIPT
echo "== gemmtune --version"; "$prefix/bin/gemmtune" --version
echo "== sweep --profile default --dry-run"; "$prefix/bin/gemmtune" sweep --profile default --dry-run | tail -3
echo "== ncu (the quick section set)"
"$prefix/bin/gemmtune" ncu --m 1024 --n 1024 --k 1024 --mode tf32 --candidate own/tf32_64x64x32_w32x32_s3 | tail -2
echo "== cache import, report"
"$prefix/bin/gemmtune" cache import --db "$work/t.db" "$work/export.json"
if python3 -c 'import matplotlib' 2>/dev/null; then
  "$prefix/bin/gemmtune" report --db "$work/t.db" --out "$work/report"
  test -s "$work/report/index.html"
else
  echo "(no matplotlib here: report must say what it needs)"
  if "$prefix/bin/gemmtune" report --db "$work/t.db" --out "$work/report" 2>"$work/err"; then exit 1; fi
  grep -q python3-matplotlib "$work/err"
fi
echo "== apply: the GEMM shim and its backend from the install"
"$prefix/bin/gemmtune" apply --db "$work/t.db" -- true
if ldd "$prefix/lib/gemmtune/libgemmtune_apply_backend.so" | grep "not found"; then exit 1; fi
echo "== all ran with $root hidden"
CHECKS
)
if [[ $(id -u) -eq 0 ]]; then ns=(unshare --mount --propagation private); else ns=(unshare --map-root-user --mount --propagation private); fi
if ! "${ns[@]}" true 2>/dev/null; then
  echo "check_install: cannot create a mount namespace here (${ns[*]}), so the source tree cannot be hidden" >&2
  exit 77
fi
"${ns[@]}" bash -c "$checks"
