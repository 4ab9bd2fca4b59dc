#!/usr/bin/env bash
# gguf-py (llama.cpp's GGUFReader + gguf.quants.dequantize) reads rebox-converted GGUFs of the tiny
# fixture and of the Qwen3-0.6B-shape fixture; every Q4_1 tensor must dequantize bit for bit to the
# values computed in numpy from the source mcq safetensors (Q5_1 too, from a 5-bit source tensor), F32 tensors must equal the source, and the
# 0.6B file must match the reference figures (310 tensors = 197 Q4_1 + 113 F32, 151,669 tokens, size).
# Usage: bash tests/clients/test_ggufpy_read.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init ggufpy_read "${1:-}"
ggufpy_setup "$BUILD"

"$MKFIXTURE" "$WORK/tiny" --preset tiny --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force
"$REBOX" convert "$WORK/tiny" -o "$WORK/tiny.gguf" --quiet
ggufpy "$CLIENTS_DIR/ggufpy_dequant.py" "$WORK/tiny" "$WORK/tiny.gguf"
echo "tiny fixture checked ($(clients_elapsed))"

# A 5-bit source tensor becomes Q5_1 by default (--outtype auto): gguf-py's Q5_1 dequantizer must
# agree bit for bit too.
"$MKFIXTURE" "$WORK/bits5" --preset tiny --tokenizer small --defect bits5 --force
"$REBOX" convert "$WORK/bits5" -o "$WORK/bits5.gguf" --quiet
ggufpy "$CLIENTS_DIR/ggufpy_dequant.py" "$WORK/bits5" "$WORK/bits5.gguf" --expect-q5_1

clients_q06b
ggufpy "$CLIENTS_DIR/ggufpy_dequant.py" "$Q06B_DIR" "$Q06B_GGUF" --expect-qwen3-0.6b
echo "PASS test_ggufpy_read ($(clients_elapsed))"
