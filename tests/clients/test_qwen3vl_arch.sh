#!/usr/bin/env bash
# Qwen3-VL (text arch qwen3vl, projector qwen3vl_merger) against llama.cpp's own code: tiny fixtures
# (rebox-mkfixture --arch qwen3_vl: qwen3's text model of 3 layers under model.language_model.* with
# Qwen3-VL-2B-Instruct's config keys (text_config, the interleaved M-RoPE rope_scaling,
# vision_config.deepstack_visual_indexes [1, 2]) and a float tower of 4 blocks with its published names under
# model.visual.*: the Conv3D patch embedding and its bias, the learned pos_embed, fused attn.qkv, the merger and
# 2 deepstack mergers) in BF16 (tied, and untied with lm_head), in F16, and with a 4-bit text model as mcq-v1
# (F32 tower), AWQ (F16 tower) and MLX (BF16 tower), each converted by rebox (NAME.gguf and mmproj-NAME.gguf),
# then
#  - rebox verify passes on the pair;
#  - ggufpy_qwen3vl.py: every text tensor (name, type, ne, values bit for bit) and every qwen3vl.* KV, in order
#    (rope.dimension_sections from mrope_section, n_deepstack_layers from deepstack_visual_indexes), equal what
#    the bundle's Qwen3VLTextModel chain writes;
#  - ggufpy_mmproj.py: every mmproj tensor (the two temporal slices of the patch embedding, the F32 position
#    table, the fused attn_qkv, v.deepstack.L.* at the layers deepstack_visual_indexes names) and every KV, in
#    order (clip.vision.is_deepstack_layers included), equal what the bundle's Qwen3VLVisionModel chain writes
#    for the matching --outtype;
#  - llama_load.mjs: llama.cpp v0.4.0 loads each text model;
#  - the Qwen3.5 tower (the same converter class, no deepstack mergers) beside the qwen35 and qwen35moe text
#    models (rebox-mkfixture --qwen35-vision): both files against the converter, rebox verify;
#  - rebox quantize of the BF16 mmproj to Q8_0, Q4_K_M and Q6_K: llama-quantize's file byte for byte;
#  - bad input, each one line, exit 2 and neither file: a temporal_patch_size of 3, mergers whose output is not
#    the text model's width, a deepstack index past the tower, and a preprocessor_config.json without image_std.
#  - Qwen3-VL-MoE (qwen3vl_moe_restore.py on the BF16 fixture: router and fused, transposed experts): the
#    text model (default and --outtype f32) against Qwen3VLMoeTextModel's chain, its mmproj against the
#    converter, rebox verify, and llama.cpp's embeddings of the pair (cos >= 0.999); llama.cpp's own mtmd
#    (lib/llama_mtmd.sh) loads the text + mmproj pair, encodes an image and generates 4 tokens, the image
#    embeddings equal to those of the converter-made mmproj beside the same text model (cos >= 0.999);
# Usage: bash tests/clients/test_qwen3vl_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
source "$(dirname "$0")/lib/llama_mtmd.sh"
source "$(dirname "$0")/lib/llama_quantize.sh"
clients_init qwen3vl_arch "${1:-}"
ggufpy_setup "$BUILD"

# name : mkfixture flags : the text GGUF's tensor types : the converter's --outtype for the mmproj
cases=(
  "q3vl:--format float:F32,BF16:bf16"
  "q3vl-untied:--format float --untied:F32,BF16:bf16"
  "q3vl-f16:--format float --dtype f16:F32,F16:f16"
  "q3vl-mcq:--format mcq:F32,Q4_1:f32"
  "q3vl-awq:--format awq:F32,F16,Q4_0,Q4_1,Q5_0:f16"
  "q3vl-mlx:--format mlx:F32,Q4_1:bf16"
)
triples=()
loads=()
for case in "${cases[@]}"; do
  IFS=: read -r name fixture_flags types outtype <<<"$case"
  dir="$WORK/$name"
  # shellcheck disable=SC2086
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --no-pooling --arch qwen3_vl $fixture_flags --force >/dev/null
  "$REBOX" convert "$dir" -o "$WORK/$name.gguf" --quiet
  [[ -f "$WORK/mmproj-$name.gguf" ]] || { echo "FAIL: no mmproj-$name.gguf beside $name.gguf" >&2; exit 1; }
  "$REBOX" verify "$dir" "$WORK/$name.gguf" >/dev/null
  ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$dir" "$WORK/mmproj-$name.gguf" "$outtype"
  triples+=("$dir" "$WORK/$name.gguf" "$types")
  loads+=("$WORK/$name.gguf")
done
# Qwen3-VL-MoE (qwen3vlmoe): the BF16 fixture re-stored in Qwen3-VL-30B-A3B's layout
# (qwen3vl_moe_restore.py: a router and 4 experts per layer, fused and transposed as transformers
# stores them); the converter transposes each expert, and so must rebox; the tower is the same.
moe="$WORK/q3vl-moe"
rm -rf "$moe"
"$GGUFPY_PYTHON" "$CLIENTS_DIR/qwen3vl_moe_restore.py" "$WORK/q3vl" "$moe"
"$REBOX" convert "$moe" -o "$moe.gguf" --quiet
"$REBOX" convert "$moe" -o "$moe-f32.gguf" --outtype f32 --no-mmproj --quiet
[[ -f "$WORK/mmproj-q3vl-moe.gguf" ]] || { echo "FAIL: no mmproj-q3vl-moe.gguf" >&2; exit 1; }
"$REBOX" verify "$moe" "$moe.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$moe" "$WORK/mmproj-q3vl-moe.gguf" bf16
triples+=("$moe" "$moe.gguf" F32,BF16 "$moe" "$moe-f32.gguf" F32)
ggufpy "$CLIENTS_DIR/ggufpy_qwen3vl.py" "$BUILD/llama-src" "${triples[@]}"
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 4 --min-cos 0.999 \
  "qwen3vlmoe:$moe.gguf:$moe-f32.gguf"
echo "qwen3vl text models and mmproj files compared with llama.cpp's converter ($(clients_elapsed))"
# mtmd loads the Qwen3-VL-MoE pair (the qwen3vlmoe text model's input held at hidden_size x (1 + 2 deepstack
# layers)), encodes an image and generates; its image embeddings equal the converter-made mmproj's (lib/llama_mtmd.sh).
llama_mtmd_setup
llama_mtmd_converter_cos q3vl-moe "$moe" "$moe.gguf" "$WORK/mmproj-q3vl-moe.gguf" bf16 \
  --image-max-tokens 16 --chat-template chatml
out="$(node "$CLIENTS_DIR/llama_load.mjs" "${loads[@]}")"
[[ $(grep -c '^LOADED' <<<"$out") -eq ${#loads[@]} ]] || { echo "FAIL: llama.cpp refused: $out" >&2; exit 1; }
echo "llama.cpp v0.4.0 loads the ${#loads[@]} qwen3vl text models ($(clients_elapsed))"

# The Qwen3.5 tower (Qwen3VLVisionModel converts it too: no deepstack mergers, is_deepstack_layers all false)
# beside rebox's qwen35 / qwen35moe text models: rebox-mkfixture --arch qwen35 / qwen35moe --qwen35-vision
# (Qwen3_5(Moe)ForConditionalGeneration, text under model.language_model., BF16).
for arch in qwen35 qwen35moe; do
  dir="$WORK/$arch-vision"
  "$MKFIXTURE" "$dir" --preset tiny --arch "$arch" --qwen35-vision --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
  [[ -f "$WORK/mmproj-$arch-vision.gguf" ]] || { echo "FAIL: no mmproj beside $arch-vision.gguf" >&2; exit 1; }
  "$REBOX" verify "$dir" "$dir.gguf" >/dev/null
  ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$dir" "$WORK/mmproj-$arch-vision.gguf" bf16
done
ggufpy "$CLIENTS_DIR/ggufpy_qwen35.py" "$BUILD/llama-src" "$WORK/qwen35-vision" "$WORK/qwen35-vision.gguf" F32,BF16 \
  "$WORK/qwen35moe-vision" "$WORK/qwen35moe-vision.gguf" F32,BF16
echo "the Qwen3.5 towers and their text models compared with llama.cpp's converter ($(clients_elapsed))"

# rebox quantize on the Qwen3-VL mmproj (attn_qkv, the deepstack mergers, the patch bias) writes llama-quantize
# v0.4.0's bytes (its dummy LLM_ARCH_CLIP; the position table never quantized).
llama_quantize_setup
for type in Q8_0 Q4_K_M Q6_K; do
  "$LLAMA_QUANTIZE" "$WORK/mmproj-q3vl.gguf" "$WORK/llama-$type.gguf" "$type" >/dev/null 2>&1 ||
    { echo "FAIL: llama-quantize refused the mmproj for $type" >&2; exit 1; }
  "$REBOX" quantize "$WORK/mmproj-q3vl.gguf" "$WORK/rebox-$type.gguf" "$type" >/dev/null
  cmp "$WORK/llama-$type.gguf" "$WORK/rebox-$type.gguf" ||
    { echo "FAIL: rebox quantize $type of the Qwen3-VL mmproj differs from llama-quantize's" >&2; exit 1; }
done
echo "rebox quantize of the Qwen3-VL mmproj: Q8_0, Q4_K_M, Q6_K byte for byte as llama-quantize ($(clients_elapsed))"

refused() {  # NAME PATTERN EDIT MKFIXTURE_FLAGS... (EDIT: a python statement on c = config.json, p =
  local name="$1" pattern="$2" edit="$3"  # preprocessor_config.json, or "")
  shift 3
  local dir="$WORK/$name"
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --no-pooling --arch qwen3_vl --format float "$@" \
    --force >/dev/null
  if [[ -n "$edit" ]]; then
    "$GGUFPY_PYTHON" - "$dir" "$edit" <<'PY'
import json, sys
d, edit = sys.argv[1], sys.argv[2]
c = json.load(open(f"{d}/config.json"))
p = json.load(open(f"{d}/preprocessor_config.json"))
exec(edit)
json.dump(c, open(f"{d}/config.json", "w"), indent=2)
json.dump(p, open(f"{d}/preprocessor_config.json", "w"), indent=2)
PY
  fi
  set +e
  local out code
  out="$("$REBOX" convert "$dir" -o "$WORK/$name.gguf" 2>&1)"
  code=$?
  set -e
  [[ $code -eq 2 && ! -e "$WORK/$name.gguf" && ! -e "$WORK/mmproj-$name.gguf" ]] ||
    { echo "FAIL: $name: exit $code, or a file written"; echo "$out"; exit 1; }
  [[ $(grep -c "$pattern" <<<"$out") -eq 1 ]] || { echo "FAIL: $name: not one line: $out"; exit 1; }
}
refused temporal3 "temporal size 3" "" --vl-temporal 3
refused narrow "merger.linear_fc2.weight" "" --vl-merger-width 48
refused deepstack9 "deepstack_visual_indexes" 'c["vision_config"]["deepstack_visual_indexes"] = [1, 9]'
refused nostd "image_std" 'del p["image_std"]'
echo "PASS test_qwen3vl_arch ($(clients_elapsed))"
