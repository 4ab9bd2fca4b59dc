#!/usr/bin/env bash
# Kimi-K2's tiktoken vocabulary (deepseek2) against outside oracles. The tiny deepseek2 fixture
# (rebox-mkfixture --arch deepseek2) gets a Kimi-K2 style tokenizer instead of tokenizer.json
# (kimi_tiktoken.mjs fixture: all 100,256 ranks of cl100k_base as npm tiktoken ships them, written as
# tiktoken.model, Kimi-K2's own file being in no package; Kimi's pat_str and 256 + 2 reserved ids in
# tokenization_kimi.py; added_tokens_decoder in Kimi-K2's layout; vocab_size ranks + 256 as
# Kimi-K2's, the embedding rows widened to it by real_tokenizer_fixture.widen_rows), then
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
RANKS=30000  # the first 30,000 ranks of cl100k_base (the converter's Python BPE over all 100,256 takes 2 min)
"$MKFIXTURE" "$dir" --preset tiny --arch deepseek2 --format float --force >/dev/null
node "$CLIENTS_DIR/kimi_tiktoken.mjs" fixture "$dir" "$RANKS"
(cd "$CLIENTS_DIR" && ggufpy -c 'import json, sys; from real_tokenizer_fixture import widen_rows
rows = json.load(open(sys.argv[1] + "/config.json"))["vocab_size"]
widen_rows(sys.argv[1] + "/model.safetensors", rows, {"model.embed_tokens.weight", "lm_head.weight"})' "$dir")
"$REBOX" convert "$dir" -o "$dir.gguf" --quiet
"$REBOX" verify "$dir" "$dir.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/kimi_tiktoken_converter.py" "$BUILD/llama-src" "$dir" "$dir.gguf"
node "$CLIENTS_DIR/kimi_tiktoken.mjs" tokenize "$dir" "$dir.gguf" "$CLIENTS_DIR/corpus.txt"

cp "$dir/tiktoken.model" "$WORK/good.model"
printf 'AAA! %d\n' "$RANKS" >>"$dir/tiktoken.model"
set +e
out="$("$REBOX" convert "$dir" -o "$dir-refused.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 1 && ! -e "$dir-refused.gguf" ]] || { echo "FAIL: bad base64: exit $code"; echo "$out"; exit 1; }
[[ $(grep -c "tiktoken.model: line $((RANKS + 1))" <<<"$out") -eq 1 ]] || { echo "FAIL: not one line: $out"; exit 1; }
echo "PASS test_kimi_tiktoken ($(clients_elapsed))"
