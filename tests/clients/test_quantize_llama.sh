#!/usr/bin/env bash
# rebox quantize against llama.cpp's own llama-quantize (lib/llama_quantize.sh: built from the
# source bundled in node-llama-cpp against its prebuilt libraries). Per-tensor types (--dry-run)
# for every TYPE and option, dry-run sizes and totals, and whole files byte for byte, also with
# --include-weights / --exclude-weights, --override-kv and --prune-layers (quantize_oracle.py).
# Usage: bash tests/clients/test_quantize_llama.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
source "$(dirname "$0")/lib/llama_quantize.sh"
clients_init quantize_llama "${1:-}"
ggufpy_setup "$BUILD"

# Types whose files are compared byte for byte: the TYPEs, and every ggml type their recipes choose
# (a file is compared only when all of its tensor types are listed here).
WRITE_TYPES="IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ3_XXS IQ3_XS IQ3_S IQ3_M Q1_0 Q2_0 TQ1_0 TQ2_0 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q2_K_S Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS MXFP4 NVFP4 MXFP4_MOE Q3_K Q4_K Q5_K F16 BF16 F32"

llama_quantize_setup

ggufpy "$CLIENTS_DIR/quantize_oracle.py" "$LLAMA_QUANTIZE" "$REBOX" "$WORK" "$WRITE_TYPES"
echo "PASS test_quantize_llama ($(clients_elapsed))"
