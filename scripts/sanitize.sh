#!/usr/bin/env bash
# Builds the library and the GoogleTest suite with ASan + UBSan (g++, -DREBOX_SANITIZE=ON) into
# build-asan/ and runs rebox_tests under them: leaks are reported, any UB report stops the run.
# The outside-client tests (node, python) are not run here: they exercise foreign code, not ours.
# Usage: scripts/sanitize.sh [JOBS] [GTEST_FILTER]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${1:-2}
filter=${2:-*}
start=$(date +%s)
CXX=${CXX:-g++} cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREBOX_SANITIZE=ON \
  -DREBOX_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs" --target rebox_tests rebox_cli rebox_mkfixture
built=$(date +%s)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
./build-asan/tests/rebox_tests --gtest_filter="$filter" --gtest_brief=1
done_at=$(date +%s)
echo "sanitize: build $((built - start)) s, tests $((done_at - built)) s (ASan+UBSan, $jobs jobs)"
