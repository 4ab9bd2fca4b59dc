#!/usr/bin/env bash
# Gemma 4's vision tower as an mmproj file (projector gemma4v) against llama.cpp's own code: tiny fixtures
# (rebox-mkfixture --arch gemma4: Gemma4ForConditionalGeneration with a vision tower of 2 layers under
# model.vision_tower.* and its projector model.embed_vision.embedding_projection, google's processor_config.json)
# in four layouts: the dense BF16 one (standardize: std_bias / std_scale), the E2B one (clipped linears: four 0-d
# bounds per projection), the mcq-v1 one (4-bit text model, F32 tower) and the E2B GPTQ one (F16 tower), each
# converted by rebox (NAME.gguf and mmproj-NAME.gguf), then
#  - rebox verify passes on the pair;
#  - ggufpy_mmproj.py: every mmproj tensor (the Linear patch embedding laid out as the Conv2D [32, 3, 8, 8], the
#    F32 position table [2, 128, 32], the four norms and the q / k norms per layer, the seven projections with
#    their clipping bounds as [1] F32, std_bias / std_scale, mm.input_projection) bit for bit and every KV, in
#    order (clip.vision.projector_type gemma4v, image_size 224), equal what the bundle's Gemma4VisionAudioModel
#    chain writes for the matching --outtype;
#  - rebox check takes the pair (the projection's ne[1] is the text model's width);
#  - rebox quantize of the BF16 and E2B mmproj files to Q8_0 and Q4_K_M: llama-quantize's file byte for byte;
#  - llama.cpp's own mtmd (llama-mtmd-cli from the bundle's tools/mtmd, lib/llama_mtmd.sh) loads the BF16 pairs
#    (dense and E2B), encodes tools/mtmd/test-1.jpeg through the gemma4v graph (--image-max-tokens 70) and
#    generates 4 tokens, and the image embeddings equal those of the converter-made mmproj (the bundle's
#    Gemma4VisionAudioModel chain written by gguf-py, ggufpy_mmproj.py) beside the same text model (cos >= 0.999);
#  - bad input, each one line, exit 2 and neither file: a projector whose input is twice the tower's width, and a
#    processor_config.json without image_std.
# Usage: bash tests/clients/test_gemma4_mmproj.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
source "$(dirname "$0")/lib/llama_mtmd.sh"
source "$(dirname "$0")/lib/llama_quantize.sh"
clients_init gemma4_mmproj "${1:-}"
ggufpy_setup "$BUILD"

# name : mkfixture flags : the converter's --outtype the mmproj corresponds to
cases=(
  "g4:--format float:bf16"
  "g4-e2b:--gemma4-e2b --format float:bf16"
  "g4-mcq:--format mcq:f32"
  "g4-e2b-gptq:--gemma4-e2b --format gptq:f16"
)
for case in "${cases[@]}"; do
  IFS=: read -r name fixture_flags outtype <<<"$case"
  dir="$WORK/$name"
  # shellcheck disable=SC2086
  "$MKFIXTURE" "$dir" --preset tiny --arch gemma4 $fixture_flags --force >/dev/null
  "$REBOX" convert "$dir" -o "$WORK/$name.gguf" --quiet
  [[ -f "$WORK/mmproj-$name.gguf" ]] || { echo "FAIL: no mmproj-$name.gguf beside $name.gguf" >&2; exit 1; }
  "$REBOX" verify "$dir" "$WORK/$name.gguf" >/dev/null
  ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$dir" "$WORK/mmproj-$name.gguf" "$outtype"
  "$REBOX" check "$WORK/$name.gguf" --mmproj "$WORK/mmproj-$name.gguf" >/dev/null ||
    { echo "FAIL: rebox check refused the $name pair" >&2; exit 1; }
done
echo "gemma4 mmproj files compared with llama.cpp's converter ($(clients_elapsed))"

# rebox quantize on the gemma4v mmproj (the 3-D position table, the [1] clipping bounds, the reordered patch
# embedding) writes llama-quantize v0.4.0's bytes (its dummy LLM_ARCH_CLIP).
llama_quantize_setup
for name in g4 g4-e2b; do
  for type in Q8_0 Q4_K_M; do
    "$LLAMA_QUANTIZE" "$WORK/mmproj-$name.gguf" "$WORK/llama-$name-$type.gguf" "$type" >/dev/null 2>&1 ||
      { echo "FAIL: llama-quantize refused mmproj-$name.gguf for $type" >&2; exit 1; }
    "$REBOX" quantize "$WORK/mmproj-$name.gguf" "$WORK/rebox-$name-$type.gguf" "$type" >/dev/null
    cmp "$WORK/llama-$name-$type.gguf" "$WORK/rebox-$name-$type.gguf" ||
      { echo "FAIL: rebox quantize $type of mmproj-$name.gguf differs from llama-quantize's" >&2; exit 1; }
  done
done
echo "rebox quantize of the gemma4 mmproj files: Q8_0, Q4_K_M byte for byte as llama-quantize ($(clients_elapsed))"

llama_mtmd_setup
for name in g4 g4-e2b; do
  llama_mtmd_converter_cos "$name" "$WORK/$name" "$WORK/$name.gguf" "$WORK/mmproj-$name.gguf" bf16 \
    --image-max-tokens 70 --chat-template gemma
done

refused() {  # NAME PATTERN EDIT MKFIXTURE_FLAGS... (EDIT: a python statement on p = processor_config.json, or "")
  local name="$1" pattern="$2" edit="$3"
  shift 3
  local dir="$WORK/$name"
  "$MKFIXTURE" "$dir" --preset tiny --arch gemma4 "$@" --force >/dev/null
  if [[ -n "$edit" ]]; then
    "$GGUFPY_PYTHON" - "$dir" "$edit" <<'PY'
import json, sys
d, edit = sys.argv[1], sys.argv[2]
p = json.load(open(f"{d}/processor_config.json"))
exec(edit)
json.dump(p, open(f"{d}/processor_config.json", "w"), indent=2)
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
refused wide "embed_vision.embedding_projection.weight" "" --gemma4-defect projector-width
refused nostd "image_std" 'del p["image_processor"]["image_std"]'
echo "PASS test_gemma4_mmproj ($(clients_elapsed))"
