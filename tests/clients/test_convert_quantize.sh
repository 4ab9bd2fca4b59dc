#!/usr/bin/env bash
# rebox convert --quantize (one pass from the checkpoint) against llama.cpp's llama-quantize of the
# exact float conversion, byte for byte; block tensors of a packed checkpoint stay exact
# (convert_quantize_oracle.py).
# Usage: bash tests/clients/test_convert_quantize.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
source "$(dirname "$0")/lib/llama_quantize.sh"
clients_init convert_quantize "${1:-}"
ggufpy_setup "$BUILD"
llama_quantize_setup
ggufpy "$CLIENTS_DIR/convert_quantize_oracle.py" "$LLAMA_QUANTIZE" "$REBOX" "$MKFIXTURE" "$WORK"
echo "PASS test_convert_quantize ($(clients_elapsed))"
