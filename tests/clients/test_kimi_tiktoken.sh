#!/usr/bin/env bash
# Kimi-K2's tiktoken vocabulary (deepseek2) against outside oracles. The deepseek2 fixture
# (rebox-mkfixture --arch deepseek2, vocab 512) gets a Kimi-K2 style tokenizer instead of
# tokenizer.json (kimi_tiktoken.mjs fixture: the first 400 ranks of cl100k_base as npm tiktoken
# ships them, written as tiktoken.model; Kimi's pat_str and 256 + 2 reserved ids in
# tokenization_kimi.py; added_tokens_decoder in Kimi-K2's layout), then
#  - rebox converts it and rebox verify passes;
#  - kimi_tiktoken_converter.py: every tokenizer.* KV equals what llama.cpp's own converter
#    (DeepseekV2Model.set_vocab's kimi-k2 branch, QwenModel.bpe, gguf-py's SpecialVocab) writes for
#    the same folder;
#  - kimi_tiktoken.mjs tokenize: llama.cpp v0.4.0 (its kimi-k2 pre-tokenizer) tokenizes every corpus
#    line of rebox's file exactly as real tiktoken (npm tiktoken) does with the same ranks, specials
#    and pat_str;
#  - a tiktoken.model with a token that is not base64 is refused: one line, exit 1, no file.
# Usage: bash tests/clients/test_kimi_tiktoken.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init kimi_tiktoken "${1:-}"
ggufpy_setup "$BUILD"
[[ -f "$CLIENTS_DIR/node_modules/tiktoken/package.json" ]] ||
  { echo "FAIL: npm tiktoken missing: run npm ci in tests/clients"; exit 1; }

dir="$WORK/kimi"
"$MKFIXTURE" "$dir" --preset tiny --arch deepseek2 --format float --force >/dev/null
node "$CLIENTS_DIR/kimi_tiktoken.mjs" fixture "$dir" 400
"$REBOX" convert "$dir" -o "$dir.gguf" --quiet
"$REBOX" verify "$dir" "$dir.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/kimi_tiktoken_converter.py" "$BUILD/llama-src" "$dir" "$dir.gguf"
node "$CLIENTS_DIR/kimi_tiktoken.mjs" tokenize "$dir" "$dir.gguf" "$CLIENTS_DIR/corpus.txt"

cp "$dir/tiktoken.model" "$WORK/good.model"
printf 'AAA! 400\n' >>"$dir/tiktoken.model"
set +e
out="$("$REBOX" convert "$dir" -o "$dir-refused.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 1 && ! -e "$dir-refused.gguf" ]] || { echo "FAIL: bad base64: exit $code"; echo "$out"; exit 1; }
[[ $(grep -c "tiktoken.model: line 401" <<<"$out") -eq 1 ]] || { echo "FAIL: not one line: $out"; exit 1; }
echo "PASS test_kimi_tiktoken ($(clients_elapsed))"
