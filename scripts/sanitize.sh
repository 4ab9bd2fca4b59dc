#!/usr/bin/env bash
# The sanitizer stage of the test run: builds build-san/ (scripts/build_sanitized.sh: clang 14,
# ASan + UBSan, -fno-sanitize-recover), runs the whole GoogleTest suite under it (the CLI the tests
# drive is the sanitized one too, and so is the fixture tool unless REBOX_MKFIXTURE_EXE hands it
# over from another build; leaks are reported, any report fails)
# and the fault tests (tests/hardening: disk full, EIO, signals, against the sanitized CLI), and a
# fuzz smoke run of every libFuzzer harness (fuzz/run.sh, FUZZ_SECONDS each, default 60) beside them.
# The outside-client tests (node, python) are not run here: they drive the same convert paths as
# the GoogleTest integration tests and otherwise exercise foreign code (they pass under it too:
# `ctest --test-dir build-san -L clients`).
# Usage: scripts/sanitize.sh [GTEST_FILTER]      FUZZ_SECONDS=0 skips the fuzz smoke run.
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-*}
fuzz_seconds=${FUZZ_SECONDS:-60}
start=$(date +%s)
bash scripts/build_sanitized.sh >/dev/null
built=$(date +%s)
# verify_asan_link_order=0: the fault tests LD_PRELOAD a shim; ASan's interceptors still run first.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:verify_asan_link_order=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The quantizer oracle and lane tests compare 2^18 values per type and mode here (10^7 and 2^20 in
# the normal build, which checks the values; here the same code paths run under the sanitizers, and
# the rows are the same shapes: at 10^6 these cases took 180 of the suite's 250 CPU-seconds).
export REBOX_QUANT_TEST_VALUES=${REBOX_QUANT_TEST_VALUES:-262144}
# Every GoogleTest case: the library-only ones (label unit) and the ones driving the tools (cli),
# each suite in one shard per core (GoogleTest's own sharding: one process runs every case, so
# unsharded a suite would use a single core). All the shards of both suites run at once: a shard
# that draws the slow cases then overlaps the others instead of leaving a core idle at the end of
# its suite. A failing shard's log is printed whole.
shards=${JOBS:-$(nproc)}
logs=build-san/shard-logs; rm -rf "$logs"; mkdir -p "$logs"
# The fuzz seed corpus is made beside the suites: it takes the cycles their shorter shards leave.
if ((fuzz_seconds > 0)); then
  bash fuzz/make_seed_corpus.sh >"$logs/seeds.log" 2>&1 &
  seeds_pid=$!
fi
suites=(rebox_unit_tests rebox_cli_tests)
declare -A pids=()
for suite in "${suites[@]}"; do
  for ((i = 0; i < shards; ++i)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i ./build-san/tests/$suite --gtest_filter="$filter" \
      --gtest_brief=1 >"$logs/$suite.$i.log" 2>&1 &
    pids[$suite.$i]=$!
  done
done
failed=0
for suite in "${suites[@]}"; do
  for ((i = 0; i < shards; ++i)); do
    if ! wait "${pids[$suite.$i]}"; then
      echo "sanitize: $suite shard $i of $shards failed:" >&2
      cat "$logs/$suite.$i.log" >&2
      failed=1
    fi
  done
done
if ((fuzz_seconds > 0)) && ! wait "$seeds_pid"; then
  echo "sanitize: the fuzz seed corpus (fuzz/make_seed_corpus.sh) failed:" >&2
  cat "$logs/seeds.log" >&2
  failed=1
fi
((failed == 0)) || exit 1
for suite in "${suites[@]}"; do
  passed=$(cat "$logs/$suite".*.log | awk '/^\[  PASSED  \]/ { n += $4 } END { print n + 0 }')
  echo "sanitize: $suite: $passed cases passed in $shards shards"
done
suites_done=$(date +%s)
# The fault tests and the fuzz smoke in two lanes, one per half of the cores: the fault tests
# (serial) then two harnesses, beside the other three harnesses. Each harness keeps a core of its
# own for its FUZZ_SECONDS, as when they ran two at a time after the fault tests; the lanes end
# together instead of the fifth harness running alone.
if ((fuzz_seconds > 0)); then
  lane_jobs=$(($(nproc) / 2)); ((lane_jobs > 0)) || lane_jobs=1
  export FUZZ_PREPARED=1
  (ctest --test-dir build-san -L hardening --output-on-failure &&
     JOBS=$lane_jobs bash fuzz/run.sh "$fuzz_seconds" fuzz_json_inputs fuzz_config_plan) >"$logs/lane.log" 2>&1 &
  lane_pid=$!
  JOBS=$lane_jobs bash fuzz/run.sh "$fuzz_seconds" fuzz_gguf fuzz_safetensors fuzz_model_dir || failed=1
  wait "$lane_pid" || failed=1
  cat "$logs/lane.log"
else
  ctest --test-dir build-san -L hardening --output-on-failure || failed=1
fi
done_at=$(date +%s)
echo "sanitize: build $((built - start)) s, suites $((suites_done - built)) s," \
  "fault tests + fuzz smoke $((done_at - suites_done)) s (ASan+UBSan)"
exit $failed
