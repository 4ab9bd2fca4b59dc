#!/usr/bin/env bash
# Outside checks of `rebox meta` / `rebox hash` on the Qwen3-0.6B-shape fixture (real tokenizer):
# the name and chat template are changed; gguf-py (GGUFReader) and @huggingface/gguf read the new
# values and unchanged tensors; `rebox hash --check` against the original's manifest names only the
# KV section (exit 1) and passes with --tensors-only; llama.cpp (node-llama-cpp) embeds the edited
# file exactly as the original. Then a tiny fixture edited in place with general.alignment 64.
# Usage: bash tests/clients/test_gguf_tools.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init gguf_tools "${1:-}"
ggufpy_setup "$BUILD"
LINES="${REBOX_META_EMBED_LINES:-6}"

clients_q06b
name="rebox meta edited 0.6B"
printf '%s\n' "{%- for message in messages %}<|im_start|>{{ message.role }}" \
  "{{ message.content }}<|im_end|>{% endfor %}{%- if add_generation_prompt %}<|im_start|>assistant{% endif %}" \
  >"$WORK/template.jinja"
"$REBOX" hash "$Q06B_GGUF" >"$WORK/orig.manifest"
"$REBOX" meta "$Q06B_GGUF" -o "$WORK/edited.gguf" --set "general.name=$name" \
  --chat-template-file "$WORK/template.jinja"
before=$(sha256sum <"$Q06B_GGUF")

ggufpy "$CLIENTS_DIR/ggufpy_meta.py" "$Q06B_GGUF" "$WORK/edited.gguf" "$name" "$WORK/template.jinja"
node "$CLIENTS_DIR/meta_read_hf.mjs" "$Q06B_GGUF" "$WORK/edited.gguf" "$name" "$WORK/template.jinja"

set +e
"$REBOX" hash "$WORK/edited.gguf" --check "$WORK/orig.manifest" >"$WORK/check.txt"
code=$?
set -e
[[ $code == 1 ]] || { echo "FAIL: hash --check exit $code, expected 1" >&2; exit 1; }
[[ "$(head -n -1 "$WORK/check.txt")" == "kv: DIFFERS" ]] ||
  { echo "FAIL: hash --check should name only the kv entry:" >&2; cat "$WORK/check.txt" >&2; exit 1; }
"$REBOX" hash "$WORK/edited.gguf" --check "$WORK/orig.manifest" --tensors-only
echo "hash --check: only the KV section differs ($(clients_elapsed))"

node "$CLIENTS_DIR/meta_embed_same.mjs" "$Q06B_GGUF" "$WORK/edited.gguf" "$CLIENTS_DIR/corpus.txt" "$LINES" "$name"
[[ "$(sha256sum <"$Q06B_GGUF")" == "$before" ]] || { echo "FAIL: the input changed" >&2; exit 1; }

# In place, with a larger alignment: the data section moves to a 64-byte boundary.
"$MKFIXTURE" "$WORK/tiny" --preset tiny --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force
"$REBOX" convert "$WORK/tiny" -o "$WORK/tiny.gguf" --quiet
cp "$WORK/tiny.gguf" "$WORK/tiny-edited.gguf"
"$REBOX" meta "$WORK/tiny-edited.gguf" --set general.name=tiny-in-place --set general.alignment:UINT32=64 \
  --chat-template-file "$WORK/template.jinja" --quiet
ggufpy "$CLIENTS_DIR/ggufpy_meta.py" "$WORK/tiny.gguf" "$WORK/tiny-edited.gguf" tiny-in-place "$WORK/template.jinja" 64
node "$CLIENTS_DIR/meta_embed_same.mjs" "$WORK/tiny.gguf" "$WORK/tiny-edited.gguf" "$CLIENTS_DIR/corpus.txt" 4 tiny-in-place
echo "PASS test_gguf_tools ($(clients_elapsed))"
