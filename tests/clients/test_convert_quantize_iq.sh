#!/usr/bin/env bash
# rebox convert --quantize to IQ2_XXS and IQ1_M with an imatrix against llama.cpp's llama-quantize
# of the exact float conversion, byte for byte; rebox verify re-derives the i-quant blocks and fails
# on one flipped block (convert_quantize_iq_oracle.py).
# Usage: bash tests/clients/test_convert_quantize_iq.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
source "$(dirname "$0")/lib/llama_quantize.sh"
clients_init convert_quantize_iq "${1:-}"
ggufpy_setup "$BUILD"
llama_quantize_setup
ggufpy "$CLIENTS_DIR/convert_quantize_iq_oracle.py" "$LLAMA_QUANTIZE" "$REBOX" "$MKFIXTURE" "$WORK"
echo "PASS test_convert_quantize_iq ($(clients_elapsed))"
