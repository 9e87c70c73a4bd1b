#!/usr/bin/env bash
# Runs a command with MONGODB_URI pointing at a fresh embedded FerretDB (SQLite in a
# temporary folder), unless MONGODB_URI is already set. Used by `make test`.
set -euo pipefail

if [[ -n "${MONGODB_URI:-}" ]]; then
  exec "$@"
fi

tmp=$(mktemp -d)
bin="$tmp/ferretdb"
go build -o "$bin" ./deploy/local/cmd/ferretdb
fifo="$tmp/out"
mkfifo "$fifo"
FERRETDB_DIR="$tmp/data" FERRETDB_ADDR=127.0.0.1:0 "$bin" >"$fifo" 2>"$tmp/ferretdb.log" &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

uri=""
exec 3<"$fifo"
if ! IFS= read -r -t 60 line <&3; then
  echo "with-db: the embedded database did not start" >&2
  cat "$tmp/ferretdb.log" >&2
  exit 1
fi
uri=${line#MONGODB_URI=}
export MONGODB_URI="$uri"
echo "with-db: embedded database at $MONGODB_URI" >&2
"$@"
