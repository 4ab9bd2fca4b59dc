#!/usr/bin/env bash
# mlx-vlm checkpoints of Qwen2-VL, Qwen2.5-VL and Qwen3-VL (as mlx_vlm.convert -q writes them) against
# llama.cpp's own code: rebox-mkfixture --format mlx --mlx-vlm (affine 4-bit text model under mlx-vlm's
# sanitize names language_model.model.* / language_model.lm_head, the float BF16 tower under vision_tower.*
# with its Conv3D patch embedding stored channel-last [out, T, kh, kw, in]), each converted by rebox, then
#  - rebox verify passes on the text model and the mmproj;
#  - ggufpy_qwen2vl.py / ggufpy_qwen3vl.py: every text tensor and KV equal the bundle's Qwen2VLModel /
#    Qwen3VLTextModel chain on the same (dequantized) source;
#  - ggufpy_mmproj.py: every mmproj tensor (the two temporal slices of the patch embedding moved back to
#    [out, in, kh, kw]) and every KV, in order, equal what the bundle's Qwen2VLVisionModel / Qwen3VLVisionModel
#    chain writes from the published-layout equivalent of the same tower (mlxvlm_restore.py: mlx-vlm's
#    sanitize undone, the renames reversed and the patch embedding transposed back (0, 4, 1, 2, 3));
#  - llama.cpp's mtmd (lib/llama_mtmd.sh) loads the Qwen2.5-VL and Qwen3-VL pairs, encodes an image and
#    generates, the image embeddings equal those of the converter-made mmproj beside the same text model
#    (cos >= 0.999);
#  - verify goes red (exit 3) when one value of the stored channel-last patch embedding is changed;
#  - legacy mlx-vlm's quantized tower (--mlx-vlm-quantized-tower: every 2-D tower weight affine 4-bit, groups of
#    32; Qwen2.5-VL, and Qwen3-VL whose quantized pos_embed is written as exact F32 values):
#    rebox carries each in a ggml block type, verify passes, and goes red when one code of the fused qkv is
#    changed; gguf-py's dequantization of every such tensor equals, bit for bit, the converter's F32 conversion of
#    the tower dequantized by the test's own MLX reading (mlxvlm_restore.py, source_values.py;
#    ggufpy_mmproj.py with MMPROJ_BLOCK_TYPES=1), and mtmd's image embeddings through the pair equal those
#    through the converter's F32 mmproj (cos >= 0.999: clip.cpp multiplies block-type weights by Q8-rounded
#    activations).
# Usage: bash tests/clients/test_mlxvlm_qwenvl.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
source "$(dirname "$0")/lib/llama_mtmd.sh"
clients_init mlxvlm_qwenvl "${1:-}"
ggufpy_setup "$BUILD"

for arch in qwen2_vl qwen2_5_vl qwen3_vl; do
  dir="$WORK/$arch"
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --no-pooling --arch "$arch" --format mlx --mlx-vlm \
    --force >/dev/null
  grep -q '"vision_tower.patch_embed.proj.weight"' "$dir/model.safetensors" ||
    { echo "FAIL: $arch: the fixture has no mlx-vlm tower" >&2; exit 1; }
  "$REBOX" convert "$dir" -o "$WORK/$arch.gguf" --quiet
  [[ -f "$WORK/mmproj-$arch.gguf" ]] || { echo "FAIL: no mmproj-$arch.gguf beside $arch.gguf" >&2; exit 1; }
  "$REBOX" verify "$dir" "$WORK/$arch.gguf" >/dev/null
  ggufpy "$CLIENTS_DIR/mlxvlm_restore.py" "$dir" "$WORK/$arch-hf"
  ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$WORK/$arch-hf" "$WORK/mmproj-$arch.gguf" bf16
done
# The text models: every tensor (dequantized) and KV as the bundle's Qwen2VLModel / Qwen3VLTextModel chain
# writes them from the same source (ModelBase.filter_tensors strips mlx-vlm's "language_model." itself).
ggufpy "$CLIENTS_DIR/ggufpy_qwen2vl.py" "$BUILD/llama-src" "$WORK/qwen2_vl" "$WORK/qwen2_vl.gguf" F32,Q4_1 \
  "$WORK/qwen2_5_vl" "$WORK/qwen2_5_vl.gguf" F32,Q4_1
ggufpy "$CLIENTS_DIR/ggufpy_qwen3vl.py" "$BUILD/llama-src" "$WORK/qwen3_vl" "$WORK/qwen3_vl.gguf" F32,Q4_1
echo "mlx-vlm text models and mmproj files compared with llama.cpp's converter ($(clients_elapsed))"

# Legacy mlx-vlm: the tower's Linears quantized.
qt="$WORK/qtower"
"$MKFIXTURE" "$qt" --preset tiny --tokenizer small --no-pooling --arch qwen2_5_vl --format mlx --mlx-vlm \
  --mlx-vlm-quantized-tower --force >/dev/null
"$REBOX" convert "$qt" -o "$WORK/qtower.gguf" --quiet
"$REBOX" verify "$qt" "$WORK/qtower.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/mlxvlm_restore.py" "$qt" "$WORK/qtower-hf"
MMPROJ_BLOCK_TYPES=1 ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$WORK/qtower-hf" \
  "$WORK/mmproj-qtower.gguf" f32

# Qwen3-VL's: its quantized pos_embed written as exact F32 values (the converter's F32 position table).
"$MKFIXTURE" "$qt-q3" --preset tiny --tokenizer small --no-pooling --arch qwen3_vl --format mlx --mlx-vlm \
  --mlx-vlm-quantized-tower --force >/dev/null
"$REBOX" convert "$qt-q3" -o "$WORK/qtower-q3.gguf" --quiet
"$REBOX" verify "$qt-q3" "$WORK/qtower-q3.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/mlxvlm_restore.py" "$qt-q3" "$WORK/qtower-q3-hf"
MMPROJ_BLOCK_TYPES=1 ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$WORK/qtower-q3-hf" \
  "$WORK/mmproj-qtower-q3.gguf" f32

flip() {  # SAFETENSORS TENSOR: the low bit of the tensor's first byte
  ggufpy - "$1" "$2" <<'PY'
import json, sys
path, name = sys.argv[1:3]
raw = bytearray(open(path, "rb").read())
n = int.from_bytes(raw[:8], "little")
raw[8 + n + json.loads(raw[8:8 + n])[name]["data_offsets"][0]] ^= 0x01
open(path, "wb").write(raw)
PY
}
red() {  # MODEL_DIR NAME GGUF_TENSOR: verify of NAME's pair must fail on that tensor
  set +e
  out="$("$REBOX" verify "$1" "$WORK/$2.gguf" --mmproj "$WORK/mmproj-$2.gguf" 2>&1)"
  code=$?
  set -e
  [[ $code -eq 3 ]] && grep -q "MISMATCH $3 " <<<"$out" ||
    { echo "FAIL: verify took a changed $3 source value (exit $code): $out" >&2; exit 1; }
}
rm -rf "$qt-bad" && cp -r "$qt" "$qt-bad"
flip "$qt-bad/model.safetensors" vision_tower.blocks.0.attn.qkv.weight
red "$qt-bad" qtower v.blk.0.attn_q.weight
echo "ok: legacy mlx-vlm's quantized tower carried in block types and verified ($(clients_elapsed))"

# One value of the stored patch embedding changed (its first BF16 value's low byte): verify must go red
# (exit 3, a mismatch).
bad="$WORK/qwen2_5_vl-bad"
rm -rf "$bad" && cp -r "$WORK/qwen2_5_vl" "$bad"
flip "$bad/model.safetensors" vision_tower.patch_embed.proj.weight
red "$bad" qwen2_5_vl v.patch_embd.weight
echo "ok: verify refuses the mmproj against a changed tower value"

llama_mtmd_setup
for arch in qwen2_5_vl qwen3_vl; do
  llama_mtmd_converter_cos "$arch" "$WORK/$arch-hf" "$WORK/$arch.gguf" "$WORK/mmproj-$arch.gguf" bf16 \
    --image-max-tokens 16 --chat-template chatml
done
MMPROJ_BLOCK_TYPES=1 llama_mtmd_converter_cos qtower "$WORK/qtower-hf" "$WORK/qtower.gguf" \
  "$WORK/mmproj-qtower.gguf" f32 --image-max-tokens 16 --chat-template chatml
echo "PASS test_mlxvlm_qwenvl ($(clients_elapsed))"
