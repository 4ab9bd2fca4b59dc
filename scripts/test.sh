#!/usr/bin/env bash
# Sets up (apt + npm test clients), builds, and runs every test. The release build (what users run)
# takes the outside-client tests (llama.cpp via node-llama-cpp, @huggingface/gguf, gguf-py), the
# fault, install, fleet and demo tests, and the GoogleTest cases whose outcome depends on the code
# the release compiler makes (REBOX_TEST_SET=release-checks, tests/CMakeLists.txt: the quantizers'
# and reference kernels' values at full scale, the block encoders, half rounding, the peak-RSS
# bound). Then the sanitizer stage: every GoogleTest case, unit and CLI, under ASan + UBSan (clang),
# and a 20-second fuzz smoke run of each libFuzzer harness (scripts/sanitize.sh; FUZZ_SECONDS
# changes it: longer runs belong to fuzz/run.sh on their own, not to every CI run). Each case is
# compiled and run once where it checks the most, instead of twice.
# The sanitizer build (build-san/) compiles beside the release build and ctest at the lowest CPU
# priority: it takes the cycles they leave idle (npm, links, client tests waiting on a process, the
# last long test running alone) and yields the rest, so no test is slowed by more than the
# scheduler's share of a niced process.
# The last line gives the time of each stage.
set -euo pipefail
cd "$(dirname "$0")/.."
# This run installs every oracle the tests compare with (llama.cpp's libraries, gguf-py, the real
# tokenizers): one that is missing is a failure here, as in CI, not a skip.
export CI=${CI:-true}
export REBOX_TEST_SET=release-checks
# The sanitizer build copies the release build's fixture generator (test tooling) instead of
# compiling its own.
export REBOX_MKFIXTURE_EXE=$PWD/build/rebox-mkfixture
start=$SECONDS
# The packages first: the sanitizer build needs clang.
bash scripts/setup.sh --with-test-clients --packages-only
mkdir -p build-san
rm -f build-san/release-built
# The sanitizer build starts now, beside the release build and then ctest, at the lowest CPU
# priority. setsid gives it a session of its own (to stop the whole build on exit); with the
# kernel's autogroup scheduling a session competes as a whole with the others, whatever nice says
# inside it, so the session's own nice is set too (/proc/self/autogroup). What does not need the
# release build's fixture generator is built first; the rest once the release build is done.
setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null
  exec nice -n 19 bash -c "bash scripts/build_sanitized.sh rebox_unit_tests rebox_cli fuzz_gguf fuzz_safetensors \
    fuzz_model_dir fuzz_json_inputs fuzz_config_plan &&
    while [[ ! -e build-san/release-built ]]; do sleep 1; done && bash scripts/build_sanitized.sh"' \
  >build-san/build.log 2>&1 &
san_pid=$!
trap 'kill -- -"$san_pid" 2>/dev/null || true' EXIT  # its own process group (setsid): ninja too
bash scripts/setup.sh --with-test-clients
touch build-san/release-built
built=$SECONDS

ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 1500
tested=$SECONDS
if ! wait "$san_pid"; then
  echo "test.sh: the sanitizer build failed:" >&2
  tail -n 60 build-san/build.log >&2
  exit 1
fi
trap - EXIT
san_built=$SECONDS
FUZZ_SECONDS=${FUZZ_SECONDS:-20} bash scripts/sanitize.sh
echo "test.sh: setup and build $((built - start)) s, ctest $((tested - built)) s (sanitizer build beside it)," \
  "rest of the sanitizer build $((san_built - tested)) s, sanitizer tests and fuzz smoke $((SECONDS - san_built)) s," \
  "total $((SECONDS - start)) s"
