#!/usr/bin/env bash
# Sets up (apt + npm test clients), builds, and runs every test: unit and integration tests (GoogleTest),
# the outside-client tests (llama.cpp via node-llama-cpp, @huggingface/gguf, gguf-py) and the install test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --with-test-clients
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 1500
