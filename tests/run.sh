#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh - the whole test suite: install deps, build (warnings are errors) and run every
# test with ctest, then the same again under AddressSanitizer + UndefinedBehaviorSanitizer,
# then gcc -Werror builds at -O3 (Release) and -Os (MinSizeRel), compile only (gcc's
# flow warnings, maybe-uninitialized and format-truncation, differ by optimisation level),
# then (when clang is installed) a clang -Werror build with UBSan and its tests (but the
# Python and browser suites).
#   bash tests/run.sh            # both builds
#   TT_NO_SANITIZE=1 bash tests/run.sh   # the plain build only
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (RelWithDebInfo, -Werror) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
echo "== tests =="
(cd build && ctest --output-on-failure -j"$jobs")
cat build/pytest-summary.txt 2>/dev/null || true

if [ -z "${TT_NO_SANITIZE:-}" ]; then
  echo "== build (ASan + UBSan) =="
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTT_WERROR=ON -DTT_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$jobs"
  echo "== tests under sanitizers =="
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  (cd build-asan && TT_SANITIZED=1 ctest --output-on-failure -j"$jobs")
  cat build-asan/pytest-summary.txt 2>/dev/null || true
fi
for bt in Release MinSizeRel; do
  echo "== build ($bt, -Werror; compile only) =="
  cmake -S . -B "build-$bt" -DCMAKE_BUILD_TYPE="$bt" -DTT_WERROR=ON >/dev/null
  cmake --build "build-$bt" -j"$jobs" >/dev/null
done
if command -v clang >/dev/null 2>&1 && [ -z "${TT_NO_CLANG:-}" ]; then
  echo "== build with clang (-Werror, UndefinedBehaviorSanitizer: a second compiler's warnings"
  echo "   and its UB checks, e.g. pointer arithmetic on NULL that gcc's do not flag) =="
  CC=clang cmake -S . -B build-clang -DTT_WERROR=ON -DTT_UBSAN=ON >/dev/null
  cmake --build build-clang -j"$jobs" >/dev/null
  echo "== tests of the clang build (a second compiler's code; the Python and browser suites"
  echo "   drive the same daemon and ran above) =="
  (cd build-clang && ctest --output-on-failure -j"$jobs" -E "test_python|test_ui_browser|test_ui_edge")
fi
echo "tests/run.sh: all tests passed"
