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
# Noise (when FAKE_RUNS is set): every run appends its BLOCK to $FAKE_RUNS; the c-th run of a
# BLOCK adds (c - 1) / 8 us to each sample (deterministic per run counter), and a rerun of
# BLOCK = $FAKE_SLOW_BLOCK adds 100 us (a config whose re-measurement is slower).
frac=0
if [ -n "${FAKE_RUNS:-}" ]; then
    echo "$block" >> "$FAKE_RUNS"
    c=$(grep -c "^$block\$" "$FAKE_RUNS")
    frac=$(( (c - 1) * 125 ))
    if [ "$c" -gt 1 ] && [ "$block" = "${FAKE_SLOW_BLOCK:-}" ]; then lat=$((lat + 100)); fi
fi
echo "warm-up: 5 runs"
echo '{"latency_us": [1, 2], "correct": true, "note": "not the last JSON line"}'
s() { x=$(( $1 + frac )); printf '%d.%03d' $((lat + x / 1000)) $((x % 1000)); }
printf '{"latency_us": [%s, %s, %s], "correct": true}\n' "$(s 500)" "$(s 0)" "$(s 250)"
echo "Kernel Output Match!"
