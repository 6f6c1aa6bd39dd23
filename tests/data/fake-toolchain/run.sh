#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - fake toolchain run step for the cmd: backend tests: reads the artifact of build.sh
# and prints a deterministic latency computed from the problem and the config, or misbehaves
# according to MODE in $TT_CONFIG_JSON.
set -u
cfg=${TT_CONFIG_JSON:?TT_CONFIG_JSON not set}
get() { printf '%s' "$2" | sed -n "s/.*\"$1\":\(-\{0,1\}[0-9][0-9]*\).*/\1/p"; }
mode=$(get MODE "$cfg")
n=$(get N "${TT_PROBLEM_JSON:?TT_PROBLEM_JSON not set}")
if [ ! -f "$TT_WORK_DIR/kernel.bin" ]; then
    echo "fake run: no kernel.bin, the build did not run" >&2
    exit 4
fi
# the block size comes from the built artifact, not from the config
block=$(sed -n 's/^BLOCK = \([0-9][0-9]*\)$/\1/p' "$TT_WORK_DIR/kernel.bin")
case "$mode" in
3) echo "fake run: illegal memory access (aicore exception)" >&2; exit 3 ;;
4) sleep 30 ;;
5) echo '{"latency_us": [1.0], "correct": false}'; echo "Kernel Output Mismatch!"; exit 0 ;;
6) echo "warming up"; echo "Total Time(us): n/a"; exit 0 ;;
8) echo '{"latency_us": [], "correct": true}'; exit 0 ;;
9) kill -SEGV $$ ;;
esac
lat=$((n / block + 10))
echo "warm-up: 5 runs"
echo '{"latency_us": [1, 2], "correct": true, "note": "not the last JSON line"}'
printf '{"latency_us": [%d.5, %d.0, %d.25], "correct": true}\n' "$lat" "$lat" "$lat"
echo "Kernel Output Match!"
