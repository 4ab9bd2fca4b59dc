#!/usr/bin/env bash
# Sets up (apt + npm test clients), builds, and runs every test: unit and integration tests (GoogleTest),
# the outside-client tests (llama.cpp via node-llama-cpp, @huggingface/gguf, gguf-py), the fault and
# install tests; then the sanitizer stage: the GoogleTest suite again under ASan + UBSan (clang) and
# a 20-second fuzz smoke run of each libFuzzer harness (scripts/sanitize.sh; FUZZ_SECONDS changes it:
# longer runs belong to fuzz/run.sh on their own, not to every CI run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --with-test-clients
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 1500
FUZZ_SECONDS=${FUZZ_SECONDS:-20} bash scripts/sanitize.sh
