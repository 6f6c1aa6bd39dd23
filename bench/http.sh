#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# http.sh - GET /v1/best throughput with wrk (if installed) against a daemon started here;
# falls back to build/bin/bench_http.  Usage: bash bench/http.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
secs="${2:-5}"
bin="$build/bin/tiletuned"
[ -x "$bin" ] || { echo "build first: cmake --build $build" >&2; exit 1; }
if ! command -v wrk >/dev/null; then
  echo "wrk not installed; using bench_http"
  exec "$build/bin/bench_http" --seconds "$secs"
fi
work="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
hash="$("$bin" hash-token bench)"
cat > "$work/c.json" <<CONF
{"listen": "127.0.0.1:$port", "db": "sqlite:$work/tt.db", "workers": 1, "log_level": "warning",
 "tokens": [{"name": "bench", "secret_sha256": "$hash", "scopes": "tune"}]}
CONF
"$bin" serve --config-file "$work/c.json" >"$work/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 1 100); do curl -fs "$url/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs -X POST "$url/v1/tune" -H "Authorization: Bearer bench" \
  -d '{"template":"gemm","problem":{"M":1024,"N":1024,"K":1024},"target":"a2","budget":{"trials":8}}' >/dev/null
for _ in $(seq 1 300); do
  curl -fs "$url/v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024" >/dev/null 2>&1 && break
  sleep 0.1
done
echo "== wrk: GET /v1/best, 2 threads, 16 connections, ${secs}s"
wrk -t2 -c16 -d"${secs}s" --latency "$url/v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024"
echo "== POST /v1/predict top 16 of 102400 configs"
for _ in 1 2 3; do
  curl -s -o /dev/null -w '%{time_total}s\n' -X POST "$url/v1/predict" \
    -d '{"template":"gemm","target":"a2","problem":{"M":4096,"N":4096,"K":4096},"top":16}'
done
