#!/usr/bin/env bash
# Builds the Debian package gemmtune_<version>_amd64.deb (CPack, cmake/package_deb.cmake) from BUILD_DIR (default
# build/, configured and built as scripts/setup.sh does when it is not there yet), prints its control fields, and
# checks it: unpacked with dpkg -x into a fresh root, its gemmtune runs from / with the source tree hidden
# (scripts/check_install.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
if [[ ! -f $build/CMakeCache.txt ]]; then
  BUILD_DIR=$build source "$root/scripts/setup.sh"
fi
cmake --build "$build" -j "$(nproc)"
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls -t "$build"/gemmtune_*_amd64.deb | head -1)
dpkg-deb --field "$deb" Package Version Architecture Depends
echo "$deb: $(du -h "$deb" | cut -f1)"

fresh=$(mktemp -d /tmp/gemmtune-deb-root.XXXXXX)
trap 'rm -rf "$fresh"' EXIT
dpkg -x "$deb" "$fresh"
"$root/scripts/check_install.sh" "$fresh/usr"
