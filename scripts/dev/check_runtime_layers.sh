#!/usr/bin/env bash
# The runtime library a program links carries no tuner: no source of src/runtime includes tuner/, and no function
# the tuner library defines is defined in the shared runtime library too. Exit 1 naming what breaks that, else 0.
#   usage: scripts/dev/check_runtime_layers.sh RUNTIME_SO TUNER_ARCHIVE
set -uo pipefail
[[ $# == 2 && -f $1 && -f $2 ]] || { echo "usage: check_runtime_layers.sh RUNTIME_SO TUNER_ARCHIVE" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
status=0

if includes=$(grep -rn '#include "tuner/' "$root/src/runtime"); then
  echo "src/runtime includes the tuner:"
  echo "$includes"
  status=1
fi

# Strong text symbols only: inline functions and templates (W) may be defined in both without either linking the other.
defined_text() { nm -C --defined-only "$1" 2>/dev/null | awk '$2 == "T" { $1 = ""; $2 = ""; sub(/^  /, ""); print }' | sort -u; }
shared=$(comm -12 <(defined_text "$1") <(defined_text "$2"))
if [[ -n $shared ]]; then
  echo "$(basename "$1") defines $(wc -l <<<"$shared") functions of $(basename "$2"), e.g.:"
  head -5 <<<"$shared"
  status=1
fi
tuner_functions=$(defined_text "$2" | wc -l)
[[ $tuner_functions -gt 0 ]] || { echo "no functions found in $2: is it the tuner library?"; exit 2; }
[[ $status == 0 ]] && echo "the runtime library shares none of the tuner's $tuner_functions functions and includes no tuner/ header"
exit $status
