#!/usr/bin/env bash
# rebox verify --imatrix on files llama.cpp's own llama-quantize (lib/llama_quantize.sh) wrote with
# an importance matrix written by gguf-py's GGUFWriter (the GGUF format) or byte by byte (the
# legacy imatrix.dat), from rebox's exact conversion of rebox-mkfixture checkpoints: verify's own
# imatrix reader and re-quantizer must agree with llama-quantize's (verify_imatrix_llama.py).
# Usage: bash tests/clients/test_verify_imatrix_llama.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
source "$(dirname "$0")/lib/llama_quantize.sh"
clients_init verify_imatrix_llama "${1:-}"
ggufpy_setup "$BUILD"
llama_quantize_setup

ggufpy "$CLIENTS_DIR/verify_imatrix_llama.py" "$LLAMA_QUANTIZE" "$REBOX" "$MKFIXTURE" "$WORK"
echo "PASS test_verify_imatrix_llama ($(clients_elapsed))"
