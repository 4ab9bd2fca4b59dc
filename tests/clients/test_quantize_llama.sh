#!/usr/bin/env bash
# rebox quantize against llama.cpp's own llama-quantize: tools/quantize/ of the llama.cpp source
# bundled in node-llama-cpp, compiled (a few seconds of g++, cached under the build dir, never
# part of the product) against the prebuilt libllama.v0.4.0.so / libllama-common.so / libggml*.so
# of @node-llama-cpp/linux-x64. Per-tensor types (--dry-run) for every TYPE and option, and whole
# files byte for byte for the types whose kernels this build has (quantize_oracle.py).
# Usage: bash tests/clients/test_quantize_llama.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init quantize_llama "${1:-}"
ggufpy_setup "$BUILD"

# Types whose files are compared byte for byte (the kernels of quantize_rows this branch has).
WRITE_TYPES="Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q2_K_S Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS F16 BF16 F32"

LIBS="$CLIENTS_DIR/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
ORACLE_DIR="$BUILD/llama-quantize-oracle"
ORACLE="$ORACLE_DIR/llama-quantize"
stamp="$(cat "$GGUFPY_SRC/.rebox-clone-complete" "$LIBS/libllama.v0.4.0.so" | sha256sum | cut -c1-16)"
if [[ "$(cat "$ORACLE_DIR/stamp" 2>/dev/null)" != "$stamp" || ! -x "$ORACLE" ]]; then
  mkdir -p "$ORACLE_DIR"
  command -v g++ >/dev/null || { echo "FAIL: g++ needed to build llama-quantize" >&2; exit 1; }
  src="$GGUFPY_SRC"
  g++ -std=c++17 -O1 -I"$src/include" -I"$src/ggml/include" -I"$src/common" -I"$src/vendor" \
    "$src/tools/quantize/quantize.cpp" "$src/tools/quantize/main.cpp" -o "$ORACLE.part" \
    -L"$LIBS" -l:libllama-common.so -l:libllama.v0.4.0.so -l:libggml.v0.4.0.so -l:libggml-base.so \
    -Wl,-rpath,"$LIBS"
  mv "$ORACLE.part" "$ORACLE"
  echo "$stamp" >"$ORACLE_DIR/stamp"
fi

ggufpy "$CLIENTS_DIR/quantize_oracle.py" "$ORACLE" "$REBOX" "$WORK" "$WRITE_TYPES"
echo "PASS test_quantize_llama ($(clients_elapsed))"
