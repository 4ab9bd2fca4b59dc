#!/usr/bin/env bash
# Configures and builds build-san/: clang 14 with ASan + UBSan (-fno-sanitize-recover) for the
# library, the tools, the GoogleTest suite and the libFuzzer harnesses (the library also gets
# coverage instrumentation for libFuzzer). One build serves scripts/sanitize.sh and fuzz/run.sh.
# -O1 with line tables: readable sanitizer stacks at a third of a RelWithDebInfo build's time
# (the GoogleTest files themselves at -O0: tests/CMakeLists.txt). Not -O0: the CLI tests bound the
# CPU time of hostile inputs (a 1 MiB config.json parses in under a second), which -O0 misses.
# REBOX_MKFIXTURE_EXE=PATH: take that fixture generator (test tooling) instead of compiling one
# (scripts/test.sh passes the release build's).
# Usage: scripts/build_sanitized.sh [TARGET...]   (default: everything the two scripts run)
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
((${#targets[@]})) || targets=(rebox_unit_tests rebox_cli_tests rebox_cli rebox_mkfixture
                                fuzz_gguf fuzz_safetensors fuzz_model_dir fuzz_json_inputs fuzz_config_plan)
CXX=clang++ CC=clang cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
  -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -gline-tables-only" -DREBOX_SANITIZE=ON -DREBOX_FUZZ=ON \
  -DREBOX_BUILD_BENCH=OFF -DREBOX_MKFIXTURE_EXE="${REBOX_MKFIXTURE_EXE:-}" >/dev/null
cmake --build build-san -j"${JOBS:-$(nproc)}" --target "${targets[@]}"
