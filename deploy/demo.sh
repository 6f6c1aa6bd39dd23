#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# demo.sh - the main job, end to end: install the dependencies, build, start tiletuned on an
# embedded SQLite database in a temporary directory on a free port, tune a GEMM
# (1024x1024x1024 fp16 on a2, backend sim, strategy model-refine, 16 trials) over HTTP with
# curl, wait for it, print the best config and its SIMULATED time, stop the daemon.
# Exits non-zero on any failure (the daemon's log is printed then).
#   bash deploy/demo.sh                 # from the repository root
#   TT_SKIP_DEPS=1 bash deploy/demo.sh  # dependencies already installed
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

if [ -z "${TT_SKIP_DEPS:-}" ]; then
  bash deploy/install-deps.sh
fi
build="${TT_BUILD_DIR:-$root/build}"
echo "== building in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target tiletuned -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
bin="$build/bin/tiletuned"

work="$(mktemp -d "${TMPDIR:-/tmp}/tiletune-demo.XXXXXX")"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
url="http://127.0.0.1:$port"
secret="demo-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
hash="$("$bin" hash-token "$secret")"
cat > "$work/tiletune.conf" <<CONF
{
  "listen": "127.0.0.1:$port",
  "db": "sqlite:$work/tiletune.db",
  "workers": 2,
  "work_dir": "$work/work",
  "tokens": [{"name": "demo", "secret_sha256": "$hash", "scopes": "read,tune"}],
  "open_reads": true
}
CONF
pid=""
cleanup() {
  status=$?
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  if [ $status -ne 0 ]; then
    echo "demo FAILED (exit $status); daemon log:" >&2
    tail -n 40 "$work/tiletuned.log" >&2 2>/dev/null || true
    echo "(kept $work)" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

echo "== starting tiletuned on $url (database $work/tiletune.db)"
"$bin" serve --config-file "$work/tiletune.conf" >"$work/tiletuned.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  curl -fs "$url/healthz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { echo "tiletuned exited early" >&2; exit 1; }
  sleep 0.1
done
curl -fs "$url/healthz" >/dev/null

echo "== POST /v1/tune: gemm M=N=K=1024 float16 on a2, backend sim, strategy model-refine, budget 16"
resp="$(curl -fsS -X POST "$url/v1/tune" -H "Authorization: Bearer $secret" \
  -d '{"template": "gemm", "problem": {"M": 1024, "N": 1024, "K": 1024, "dtype": "float16"},
       "target": "a2", "backend": "sim", "strategy": "model-refine", "budget": {"trials": 16},
       "seed": 1}')"
job="$(printf '%s' "$resp" | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"])')"
echo "   job $job queued"

state=""
for _ in $(seq 1 600); do
  j="$(curl -fsS "$url/v1/jobs/$job")"
  state="$(printf '%s' "$j" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["state"])')"
  prog="$(printf '%s' "$j" | python3 -c 'import json,sys; d=json.load(sys.stdin)["progress"]; print("%d/%d" % (d["done"], d["planned"]))')"
  printf '\r   %-9s trials %s' "$state" "$prog"
  case "$state" in done|failed|cancelled) break ;; esac
  sleep 0.2
done
echo
[ "$state" = "done" ] || { echo "job $job ended $state" >&2; exit 1; }

best="$(curl -fsS "$url/v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024&dtype=float16&backend=sim")"
printf '%s' "$best" | python3 -c '
import json, sys
b = json.load(sys.stdin)
assert b["time_kind"] == "simulated", b
cfg = ", ".join("%s=%s" % kv for kv in b["config"].items())
print("== best config for gemm 1024x1024x1024 float16 on %s:" % b["target"])
print("   %s" % cfg)
print("   SIMULATED time: %.2f us (built-in pipeline simulator, not hardware)" % b["median_us"])
if b.get("predicted_us"):
    print("   cost-model prediction for it: %.2f us" % b["predicted_us"])
print("   from trial %d of job %d" % (b["trial"], b["job"]))
'
echo "== stopping tiletuned"
kill -TERM "$pid"
wait "$pid"
pid=""
echo "demo OK"
