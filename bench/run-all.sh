#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-all.sh - run every benchmark program once, in one go, and print their tables.
# Usage: bash bench/run-all.sh [BUILD_DIR]   (default build; configure + build first)
# The machine is shared and noisy: compare ratios within one run, not across runs.
set -euo pipefail
cd "$(dirname "$0")/.."
b=${1:-build}
bin=$b/bin
echo "# bench/run-all.sh on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for cmd in "bench_expr 1" "bench_space 0.5" "bench_model" "bench_model --fidelity" "bench_fidelity" \
           "bench_sim" "bench_rank" "bench_store 0.5" "bench_job" "bench_tuning" "bench_tuning --library" \
           "bench_http --seconds 3 --connections 4 --bin $bin/tiletuned"; do
  echo
  echo "## $cmd"
  # shellcheck disable=SC2086
  "$bin"/$cmd
done
