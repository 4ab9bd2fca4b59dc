#!/usr/bin/env bash
# Mistral 3's Pixtral vision tower as an mmproj file (projector pixtral) against llama.cpp's own code: tiny fixtures
# (rebox-mkfixture --arch mistral3 --multimodal: Mistral-Small-3.1-24B-Instruct-2503's layout, the text model under
# language_model.model., a 3-layer tower vision_tower.* and its projector multi_modal_projector.* with the patch
# merger, PixtralImageProcessor's preprocessor_config.json, PixtralProcessor's processor_config.json, [IMG_BREAK] an
# added token) in four cases: BF16 (--outtype auto and f32), AWQ (4-bit text model, F16 tower and embedding) and BF16
# in transformers >= 4.52's layout (--vl-split: model.vision_tower.*, model.language_model.*, which v0.4.0's
# LlavaVisionModel skips: ggufpy_mmproj.py feeds it the names without "model."), each converted by rebox (NAME.gguf and mmproj-NAME.gguf), then
#  - rebox verify passes on the pair;
#  - ggufpy_mmproj.py: every mmproj tensor (the patch convolution, attn_q / attn_k through the bundle's
#    LlamaModel.permute, the norms as F32, mm.input_norm, mm.patch_merger, mm.1 / mm.2) bit for bit and every KV in
#    order (clip.projector_type pixtral, layer_norm_epsilon, clip.use_silu, spatial_merge_size) equal what the
#    bundle's LlavaVisionModel -> MmprojModel -> ModelBase chain writes for the matching --outtype; and
#    v.token_embd.img_break equals what LlavaVisionModel.modify_tensors makes of the text embedding (v0.4.0's
#    MmprojModel.filter_tensors drops the embedding before it, so the converter's own file lacks that row);
#  - rebox check takes the pair (the projection's width is the text model's), with no warning; the mmproj without
#    v.token_embd.img_break (as v0.4.0's own converter writes it) is one FINDING, and mtmd refuses that file;
#  - rebox quantize of the BF16 mmproj to Q8_0 and Q4_K_M: llama-quantize's file byte for byte;
#  - llama.cpp's own mtmd (llama-mtmd-cli from the bundle's tools/mtmd, lib/llama_mtmd.sh) loads the BF16 pair,
#    encodes tools/mtmd/test-1.jpeg through the pixtral graph (patch merger, [IMG_BREAK] after each row) and
#    generates 4 tokens, and the image embeddings equal those of the converter-made mmproj beside the same text
#    model (cos >= 0.999);
#  - bad input, each one line, exit 2 and neither file: a projector whose input is not the tower's width, a
#    preprocessor_config.json without image_std, and a tokenizer without [IMG_BREAK].
# Usage: bash tests/clients/test_mistral3_mmproj.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
source "$(dirname "$0")/lib/llama_mtmd.sh"
source "$(dirname "$0")/lib/llama_quantize.sh"
clients_init mistral3_mmproj "${1:-}"
ggufpy_setup "$BUILD"

# name : mkfixture flags : rebox convert flags : the converter's --outtype the mmproj corresponds to
cases=(
  "m3:--format float::bf16"
  "m3-f32:--format float:--outtype f32:f32"
  "m3-awq:--format awq::f16"
  "m3-split:--format float --vl-split::bf16"
)
for case in "${cases[@]}"; do
  IFS=: read -r name fixture_flags convert_flags outtype <<<"$case"
  dir="$WORK/${name%-f32}"
  # shellcheck disable=SC2086
  [[ -d $dir ]] || "$MKFIXTURE" "$dir" --preset tiny --arch mistral3 --multimodal $fixture_flags >/dev/null
  # shellcheck disable=SC2086
  "$REBOX" convert "$dir" -o "$WORK/$name.gguf" --quiet $convert_flags
  [[ -f "$WORK/mmproj-$name.gguf" ]] || { echo "FAIL: no mmproj-$name.gguf beside $name.gguf" >&2; exit 1; }
  "$REBOX" verify "$dir" "$WORK/$name.gguf" >/dev/null
  ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$dir" "$WORK/mmproj-$name.gguf" "$outtype"
  "$REBOX" check "$WORK/$name.gguf" --mmproj "$WORK/mmproj-$name.gguf" >/dev/null ||
    { echo "FAIL: rebox check refused the $name pair" >&2; exit 1; }
done
echo "mistral3 mmproj files compared with llama.cpp's converter ($(clients_elapsed))"

# rebox quantize on the pixtral mmproj (the 1-D [IMG_BREAK] row, the F32 patch merger) writes llama-quantize
# v0.4.0's bytes (its dummy LLM_ARCH_CLIP).
llama_quantize_setup
for type in Q8_0 Q4_K_M; do
  "$LLAMA_QUANTIZE" "$WORK/mmproj-m3.gguf" "$WORK/llama-m3-$type.gguf" "$type" >/dev/null 2>&1 ||
    { echo "FAIL: llama-quantize refused mmproj-m3.gguf for $type" >&2; exit 1; }
  "$REBOX" quantize "$WORK/mmproj-m3.gguf" "$WORK/rebox-m3-$type.gguf" "$type" >/dev/null
  cmp "$WORK/llama-m3-$type.gguf" "$WORK/rebox-m3-$type.gguf" ||
    { echo "FAIL: rebox quantize $type of mmproj-m3.gguf differs from llama-quantize's" >&2; exit 1; }
done
echo "rebox quantize of the mistral3 mmproj: Q8_0, Q4_K_M byte for byte as llama-quantize ($(clients_elapsed))"

llama_mtmd_setup
# The pair generates, and its image embeddings equal those of the converter-made mmproj (the bundle's chain, the
# [IMG_BREAK] row fed as above, written by gguf-py's GGUFWriter as prepare_tensors writes it) beside the same text
# model (cos >= 0.999, lib/llama_mtmd.sh).
llama_mtmd_converter_cos m3 "$WORK/m3" "$WORK/m3.gguf" "$WORK/mmproj-m3.gguf" bf16 \
  --image-max-tokens 64 --chat-template mistral-v7

# rebox check reads the pixtral projector whole (0 warnings); an mmproj without v.token_embd.img_break (what
# v0.4.0's converter writes for an HF Mistral 3) is one FINDING, and mtmd refuses to load it.
out="$("$REBOX" check "$WORK/m3.gguf")" || { echo "FAIL: rebox check on the pair: $out" >&2; exit 1; }
grep -q "^OK: 2 file(s), .* 0 warning(s)" <<<"$out" || { echo "FAIL: the pair not checked whole: $out" >&2; exit 1; }
"$REBOX" meta -q "$WORK/mmproj-m3.gguf" -o "$WORK/no-break.gguf" \
  --rename-tensor v.token_embd.img_break=v.token_embd.unused
set +e
out="$("$REBOX" check "$WORK/m3.gguf" --mmproj "$WORK/no-break.gguf")"
code=$?
set -e
[[ $code -eq 1 && "$(grep -c '^FINDING: ' <<<"$out")" == 1 ]] && grep -q "^FINDING: .*v.token_embd.img_break missing" <<<"$out" ||
  { echo "FAIL: rebox check took an mmproj without the [IMG_BREAK] row (exit $code): $out" >&2; exit 1; }
if "$LLAMA_MTMD_CLI" -m "$WORK/m3.gguf" --mmproj "$WORK/no-break.gguf" \
  --image "$GGUFPY_SRC/tools/mtmd/test-1.jpeg" --image-max-tokens 64 -p "describe" -n 1 -t 2 --temp 0 \
  --chat-template mistral-v7 >"$WORK/no-break.log" 2>&1; then
  echo "FAIL: llama-mtmd-cli took a pixtral mmproj without v.token_embd.img_break" >&2
  exit 1
fi
echo "ok: without the [IMG_BREAK] row rebox check finds it missing and mtmd refuses the file ($(clients_elapsed))"

refused() {  # NAME PATTERN EDIT MKFIXTURE_FLAGS... (EDIT: python on d, the fixture's folder, or "")
  local name="$1" pattern="$2" edit="$3"
  shift 3
  local dir="$WORK/$name"
  "$MKFIXTURE" "$dir" --preset tiny --arch mistral3 --multimodal "$@" --force >/dev/null
  if [[ -n "$edit" ]]; then
    "$GGUFPY_PYTHON" - "$dir" "$edit" <<'PY'
import json, sys
d, edit = sys.argv[1], sys.argv[2]
def load(name):
    return json.load(open(f"{d}/{name}"))
def save(name, value):
    json.dump(value, open(f"{d}/{name}", "w"), indent=2)
exec(edit)
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
refused wide "multi_modal_projector.linear_1.weight" "" --format float --vl-merger-width 48
refused nostd "image_std" 'p = load("preprocessor_config.json"); del p["image_std"]; save("preprocessor_config.json", p)' \
  --format float
# The tokenizer's added token renamed: no [IMG_BREAK] row to copy (the converter raises "not found").
refused nobreak "IMG_BREAK" '
for name in ("tokenizer.json", "tokenizer_config.json"):
    text = open(f"{d}/{name}").read()
    open(f"{d}/{name}", "w").write(text.replace("[IMG_BREAK]", "[IMG_SPLIT]"))' --format float
echo "PASS test_mistral3_mmproj ($(clients_elapsed))"
