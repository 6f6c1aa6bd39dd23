#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# http.sh - GET /v1/best side by side with nginx serving the same JSON bytes from a file.
# Starts tiletuned (temporary SQLite, one tuned GEMM shape) and Debian's nginx-light on free
# loopback ports with configs written to a temp dir, then runs wrk (2 threads) at 4, 64 and
# 512 connections against each and prints throughput, the tiletune/nginx ratio and p99.
# Also times POST /v1/predict (top 16 of the 102 400-config GEMM space).
# Each connection count runs ROUNDS alternating rounds (tiletune, nginx, tiletune, ...) and
# prints the medians, so that a load change on a shared machine hits both servers alike.
# Usage: bash bench/http.sh [BUILD_DIR] [SECONDS] [ROUNDS]   (needs wrk and nginx; bench/README.md)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
secs="${2:-10}"
rounds="${3:-3}"
bin="$build/bin/tiletuned"
[ -x "$bin" ] || { echo "build first: cmake --build $build" >&2; exit 1; }
if ! command -v wrk >/dev/null || ! [ -x /usr/sbin/nginx ]; then
  echo "wrk or nginx not installed (deploy/install-deps.sh); using bench_http"
  exec "$build/bin/bench_http" --seconds "$secs"
fi
work="$(mktemp -d)"
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port="$(freeport)"
nport="$(freeport)"
hash="$("$bin" hash-token bench)"
cat > "$work/c.json" <<CONF
{"listen": "127.0.0.1:$port", "db": "sqlite:$work/tt.db", "workers": 1, "log_level": "warning",
 "max_connections": 1024, "max_connections_per_ip": 1024,
 "tokens": [{"name": "bench", "secret_sha256": "$hash", "scopes": "tune"}]}
CONF
"$bin" serve --config-file "$work/c.json" >"$work/log" 2>&1 &
pid=$!
npid=""
cleanup() {
  kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
  [ -n "$npid" ] && kill "$npid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
url="http://127.0.0.1:$port"
path="/v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024&dtype=float16"
for _ in $(seq 1 100); do curl -fs "$url/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs -X POST "$url/v1/tune" -H "Authorization: Bearer bench" \
  -d '{"template":"gemm","problem":{"M":1024,"N":1024,"K":1024},"target":"a2","budget":{"trials":8}}' >/dev/null
for _ in $(seq 1 300); do
  curl -fs "$url$path" -o "$work/best.json" 2>/dev/null && break
  sleep 0.1
done
mkdir -p "$work/www" "$work/nginx"
chmod 755 "$work" "$work/www"   # nginx workers may run as another user (root starts them as nobody)
cp "$work/best.json" "$work/www/best.json"
chmod 644 "$work/www/best.json"
cat > "$work/nginx/nginx.conf" <<NGX
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
daemon off;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nport;
    root $work/www;
    location = /best.json { default_type application/json; add_header Cache-Control no-store; }
  }
}
NGX
/usr/sbin/nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" 2>"$work/nginx/stderr" &
npid=$!
for _ in $(seq 1 50); do curl -fs "http://127.0.0.1:$nport/best.json" >/dev/null 2>&1 && break; sleep 0.1; done
echo "body: tiletune $(wc -c <"$work/best.json") bytes, nginx $(curl -fs "http://127.0.0.1:$nport/best.json" | wc -c) bytes"

# wrk's summary -> "req/s p99_ms errors"
wrk_run() {
  local out
  out="$(wrk -t2 -c"$1" -d"${secs}s" --latency "$2")"
  echo "$out" | awk '
    /Requests\/sec/ { rps = $2 }
    /^ +99%/ { v = $2; if (v ~ /us$/) { sub(/us/, "", v); p = v / 1000 }
               else if (v ~ /ms$/) { sub(/ms/, "", v); p = v }
               else if (v ~ /s$/) { sub(/s/, "", v); p = v * 1000 } }
    /Non-2xx|Socket errors/ { err = err " " $0 }
    END { printf "%s %s %s\n", rps, p, (err == "" ? "-" : err) }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "== GET /v1/best vs nginx, wrk 2 threads, ${rounds} alternating rounds of ${secs}s per server and connection count, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "   (medians over the rounds; the per-round ratios show the spread a shared machine adds)"
printf '| connections | tiletune req/s | nginx req/s | ratio | ratio per round | tiletune p99 ms | nginx p99 ms |\n'
printf '|---|---|---|---|---|---|---|\n'
for c in 4 64 512; do
  : >"$work/t.txt"; : >"$work/n.txt"; per=""
  for _ in $(seq 1 "$rounds"); do   # alternate, so that load changes hit both servers alike
    read -r trps tp99 terr <<<"$(wrk_run "$c" "$url$path")"
    read -r nrps np99 nerr <<<"$(wrk_run "$c" "http://127.0.0.1:$nport/best.json")"
    echo "$trps $tp99" >>"$work/t.txt"
    echo "$nrps $np99" >>"$work/n.txt"
    per="$per $(awk -v a="$trps" -v b="$nrps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
    [ "$terr" != "-" ] && echo "   tiletune errors:$terr"
    [ "$nerr" != "-" ] && echo "   nginx errors:$nerr"
  done
  trps="$(cut -d' ' -f1 "$work/t.txt" | median)"; tp99="$(cut -d' ' -f2 "$work/t.txt" | median)"
  nrps="$(cut -d' ' -f1 "$work/n.txt" | median)"; np99="$(cut -d' ' -f2 "$work/n.txt" | median)"
  ratio="$(awk -v a="$trps" -v b="$nrps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
  printf '| %d | %.0f | %.0f | %s |%s | %.2f | %.2f |\n' "$c" "$trps" "$nrps" "$ratio" "$per" "$tp99" "$np99"
done
echo "== POST /v1/predict top 16 of 102400 configs"
for _ in 1 2 3; do
  curl -s -o /dev/null -w '%{time_total}s\n' -X POST "$url/v1/predict" \
    -d '{"template":"gemm","target":"a2","problem":{"M":4096,"N":4096,"K":4096},"top":16}'
done
