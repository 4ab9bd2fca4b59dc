#!/usr/bin/env bash
# The Qwen3.5 (qwen35) and Gemma 4 (gemma4) tokenizers, from the vocabulary files llama.cpp ships in its
# source with .inp / .out (test strings and the ids a Hugging Face tokenizer gave):
# models/ggml-vocab-gemma-4.gguf, the converter's output on Gemma 4's tokenizer, and
# models/ggml-vocab-qwen35.gguf, Qwen3.5's pre-tokenizer over Qwen2's 151,936-entry table (byte for byte
# ggml-vocab-qwen2.gguf but for the pre string; released Qwen3.5 checkpoints have 248,320 rows, a table
# the bundle does not hold).
# real_tokenizer_fixture.py rebuilds the tokenizer files (tokenizer.json, tokenizer_config.json, Gemma 4's
# chat_template.jinja) into a tiny rebox-mkfixture checkpoint of each family whose embedding and output
# rows are widened to the real vocabulary; rebox converts it, rebox verify passes, then
#  - real_tokenizer_kvs.py: every tokenizer.* KV of the vocabulary file (tokens, token types, scores,
#    merges, pre, the special ids, the add_* flags, the chat template) equals rebox's; the only other
#    keys and values are the two explained there (add_bos / add_eos false where the converter writes
#    none, qwen35's [PAD<id>] fillers UNUSED where the older vocabulary file has USER_DEFINED);
#  - real_tokenizer.mjs (one llama.cpp process per family): llama.cpp v0.4.0 tokenizes every .inp
#    string on rebox's file to exactly the .out ids, @lenml/tokenizers on the rebuilt tokenizer.json
#    does too, and the two agree on corpus.txt plus corpus_marks.txt (combining marks: Devanagari,
#    Thai, Vietnamese, decomposed accents, which Qwen3.5's split regex keeps in the letter runs and
#    Qwen2's does not), with and without special-token parsing; BOS / EOS and the CONTROL /
#    USER_DEFINED added tokens as llama.cpp reads them.
# A missing vocabulary file fails the test (the bundle is llama.cpp's own source tree).
# Usage: bash tests/clients/test_real_tokenizers.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init real_tokenizers "${1:-}"
ggufpy_setup "$BUILD"

for kind in qwen35 gemma4; do
  vocab="$GGUFPY_SRC/models/ggml-vocab-${kind/gemma4/gemma-4}.gguf"
  for f in "$vocab" "$vocab.inp" "$vocab.out"; do
    [[ -f "$f" ]] || { echo "FAIL: $f missing (llama.cpp's source bundle is incomplete)"; exit 1; }
  done
  dir="$WORK/$kind"
  "$MKFIXTURE" "$dir" --preset tiny --arch "$kind" --format float --force >/dev/null
  "$GGUFPY_PYTHON" "$CLIENTS_DIR/real_tokenizer_fixture.py" "$kind" "$vocab" "$dir"
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
  "$REBOX" verify "$dir" "$dir.gguf" >/dev/null
  (cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" real_tokenizer_kvs.py "$kind" "$vocab" "$dir.gguf")
  (cd "$CLIENTS_DIR" && node real_tokenizer.mjs "$kind" "$dir" "$dir.gguf" "$dir.tests.json" corpus.txt \
    corpus_marks.txt)
done
echo "PASS test_real_tokenizers ($(clients_elapsed))"
