#!/usr/bin/env bash
# Unpacks Debian's libsqlite3-dev into .deps/sqlite (ignored by git) for building on a machine without it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
[[ -f .deps/sqlite/usr/include/sqlite3.h ]] && exit 0
tmp=$(mktemp -d)
(cd "$tmp" && apt-get download libsqlite3-dev >/dev/null)
mkdir -p .deps
dpkg -x "$tmp"/libsqlite3-dev_*.deb .deps/sqlite
rm -rf "$tmp"
echo "ready: .deps/sqlite/usr/include/sqlite3.h"
