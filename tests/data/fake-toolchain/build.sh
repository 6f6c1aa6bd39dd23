#!/bin/sh
# SPDX-License-Identifier: MIT
# build.sh - fake toolchain build step for the cmd: backend tests: "compiles" $TT_SOURCE into
# kernel.bin in $TT_WORK_DIR and behaves according to MODE in $TT_CONFIG_JSON.
set -u
cfg=${TT_CONFIG_JSON:?TT_CONFIG_JSON not set}
get() { printf '%s' "$cfg" | sed -n "s/.*\"$1\":\(-\{0,1\}[0-9][0-9]*\).*/\1/p"; }
mode=$(get MODE)
# every build (also a failing one) is counted, so tests can see cache hits
if [ -n "${FAKE_COUNTER:-}" ]; then echo "$cfg" >> "$FAKE_COUNTER"; fi
for v in TT_PROBLEM_JSON TT_SOURCE TT_WORK_DIR TT_TARGET; do
    eval "x=\${$v-unset}"
    if [ "$x" = unset ]; then echo "fake build: $v not set" >&2; exit 5; fi
done
case "$mode" in
1) echo "compiling $TT_SOURCE"
   echo "kernel.py:7: error: BLOCK=$(get BLOCK) does not fit in UB (fake compile error)" >&2
   exit 1 ;;
2) sleep 30; exit 0 ;;
esac
if grep -q '{{[A-Za-z_]' "$TT_SOURCE"; then
    echo "fake build: unrendered placeholder in $TT_SOURCE" >&2
    exit 2
fi
cp "$TT_SOURCE" "$TT_WORK_DIR/kernel.bin" || exit 6
echo "built kernel.bin"
