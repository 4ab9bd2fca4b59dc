#!/usr/bin/env bash
# Qwen2-VL and Qwen2.5-VL (text arch qwen2vl, projectors qwen2vl_merger / qwen2.5vl_merger) against llama.cpp's
# own code: tiny fixtures (rebox-mkfixture --arch qwen2_vl / qwen2_5_vl: qwen2's text model with
# Qwen2-VL-2B-Instruct's / Qwen2.5-VL-3B-Instruct's config keys and M-RoPE rope_scaling, and a float tower of 2
# blocks with their tensor names: fused attn.qkv, the Conv3D patch embedding, the merger) in BF16 with the
# published model.* + visual.* layout, Qwen2.5-VL in transformers >= 4.52's model.language_model.* +
# model.visual.* layout, Qwen2-VL in F16, Qwen2.5-VL with a 4-bit mcq-v1 text model beside its F32 tower, and
# Qwen2.5-VL as AWQ (4-bit text model, the F16 tower left unquantized: modules_to_not_convert ["visual"]) and
# Qwen2-VL as GPTQ (4-bit symmetric text model, F16 tower),
# each converted by rebox (NAME.gguf and mmproj-NAME.gguf), then
#  - rebox verify passes on the pair;
#  - ggufpy_qwen2vl.py: every text tensor (name, type, ne, values bit for bit) and every qwen2vl.* KV, in order
#    (rope.dimension_sections from mrope_section), equal what the bundle's Qwen2VLModel chain writes;
#  - ggufpy_mmproj.py: every mmproj tensor (q/k/v cut from the fused qkv, the two temporal slices of the
#    patch embedding) and every KV, in order, equal what the bundle's Qwen2VLVisionModel chain writes for the
#    matching --outtype;
#  - llama_load.mjs: llama.cpp v0.4.0 loads each text model;
#  - bad input, each one line, exit 2 and neither file: a temporal_patch_size of 3, and a merger whose output
#    is not the text model's width.
# Usage: bash tests/clients/test_qwen2vl_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init qwen2vl_arch "${1:-}"
ggufpy_setup "$BUILD"

# name : mkfixture flags : the text GGUF's tensor types : the converter's --outtype for the mmproj
cases=(
  "q2vl:--arch qwen2_vl --format float:F32,BF16:bf16"
  "q25vl:--arch qwen2_5_vl --format float:F32,BF16:bf16"
  "q25vl-split:--arch qwen2_5_vl --format float --vl-split:F32,BF16:bf16"
  "q2vl-f16:--arch qwen2_vl --format float --dtype f16:F32,F16:f16"
  "q25vl-mcq:--arch qwen2_5_vl --format mcq:F32,Q4_1:f32"
  "q25vl-awq:--arch qwen2_5_vl --format awq:F32,F16,Q4_0,Q4_1,Q5_0:f16"
  "q2vl-gptq:--arch qwen2_vl --format gptq:F32,F16,Q4_0:f16"
)
triples=()
loads=()
for case in "${cases[@]}"; do
  IFS=: read -r name fixture_flags types outtype <<<"$case"
  dir="$WORK/$name"
  # shellcheck disable=SC2086
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --no-pooling $fixture_flags --force >/dev/null
  "$REBOX" convert "$dir" -o "$WORK/$name.gguf" --quiet
  [[ -f "$WORK/mmproj-$name.gguf" ]] || { echo "FAIL: no mmproj-$name.gguf beside $name.gguf" >&2; exit 1; }
  "$REBOX" verify "$dir" "$WORK/$name.gguf" >/dev/null
  ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$dir" "$WORK/mmproj-$name.gguf" "$outtype"
  triples+=("$dir" "$WORK/$name.gguf" "$types")
  loads+=("$WORK/$name.gguf")
done
ggufpy "$CLIENTS_DIR/ggufpy_qwen2vl.py" "$BUILD/llama-src" "${triples[@]}"
echo "qwen2vl text models and mmproj files compared with llama.cpp's converter ($(clients_elapsed))"
out="$(node "$CLIENTS_DIR/llama_load.mjs" "${loads[@]}")"
[[ $(grep -c '^LOADED' <<<"$out") -eq ${#loads[@]} ]] || { echo "FAIL: llama.cpp refused: $out" >&2; exit 1; }
echo "llama.cpp v0.4.0 loads the ${#loads[@]} qwen2vl text models ($(clients_elapsed))"

refused() {  # NAME PATTERN MKFIXTURE_FLAGS...
  local name="$1" pattern="$2"
  shift 2
  local dir="$WORK/$name"
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --no-pooling --format float "$@" --force >/dev/null
  set +e
  local out code
  out="$("$REBOX" convert "$dir" -o "$WORK/$name.gguf" 2>&1)"
  code=$?
  set -e
  [[ $code -eq 2 && ! -e "$WORK/$name.gguf" && ! -e "$WORK/mmproj-$name.gguf" ]] ||
    { echo "FAIL: $name: exit $code, or a file written"; echo "$out"; exit 1; }
  [[ $(grep -c "$pattern" <<<"$out") -eq 1 ]] || { echo "FAIL: $name: not one line: $out"; exit 1; }
}
refused temporal3 "temporal size 3" --arch qwen2_5_vl --vl-temporal 3
refused narrow "mlp.2.weight" --arch qwen2_vl --vl-merger-width 48
echo "PASS test_qwen2vl_arch ($(clients_elapsed))"
