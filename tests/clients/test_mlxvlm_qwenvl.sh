#!/usr/bin/env bash
# mlx-vlm checkpoints of Qwen2-VL, Qwen2.5-VL and Qwen3-VL (as mlx_vlm.convert -q writes them) against
# llama.cpp's own code: rebox-mkfixture --format mlx --mlx-vlm (affine 4-bit text model under mlx-vlm's
# sanitize names language_model.model.* / language_model.lm_head, the float BF16 tower under vision_tower.*
# with its Conv3D patch embedding stored channel-last [out, T, kh, kw, in]), each converted by rebox, then
#  - rebox verify passes on the text model and the mmproj;
#  - ggufpy_mmproj.py: every mmproj tensor (the two temporal slices of the patch embedding moved back to
#    [out, in, kh, kw]) and every KV, in order, equal what the bundle's Qwen2VLVisionModel / Qwen3VLVisionModel
#    chain writes from the published-layout equivalent of the same tower (mlxvlm_restore.py: mlx-vlm's
#    sanitize undone, the renames reversed and the patch embedding transposed back (0, 4, 1, 2, 3));
#  - llama.cpp's mtmd (lib/llama_mtmd.sh) loads the Qwen2.5-VL and Qwen3-VL pairs, encodes an image and
#    generates, the image embeddings equal those of the converter-made mmproj beside the same text model
#    (cos >= 0.999);
#  - verify goes red (exit 3) when one value of the stored channel-last patch embedding is changed.
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
echo "mlx-vlm mmproj files compared with llama.cpp's converter ($(clients_elapsed))"

# One value of the stored patch embedding changed (its first BF16 value's low byte): verify must go red
# (exit 3, a mismatch).
bad="$WORK/qwen2_5_vl-bad"
rm -rf "$bad" && cp -r "$WORK/qwen2_5_vl" "$bad"
ggufpy - "$bad/model.safetensors" <<'PY'
import json, sys
path = sys.argv[1]
raw = bytearray(open(path, "rb").read())
n = int.from_bytes(raw[:8], "little")
begin = json.loads(raw[8:8 + n])["vision_tower.patch_embed.proj.weight"]["data_offsets"][0]
raw[8 + n + begin] ^= 0x01
open(path, "wb").write(raw)
PY
set +e
out="$("$REBOX" verify "$bad" "$WORK/qwen2_5_vl.gguf" --mmproj "$WORK/mmproj-qwen2_5_vl.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 3 ]] && grep -q "MISMATCH v.patch_embd.weight" <<<"$out" ||
  { echo "FAIL: verify took a changed patch embedding value (exit $code): $out" >&2; exit 1; }
echo "ok: verify refuses the mmproj against a changed tower value"

llama_mtmd_setup
for arch in qwen2_5_vl qwen3_vl; do
  llama_mtmd_converter_cos "$arch" "$WORK/$arch-hf" "$WORK/$arch.gguf" "$WORK/mmproj-$arch.gguf" bf16 \
    --image-max-tokens 16 --chat-template chatml
done
echo "PASS test_mlxvlm_qwenvl ($(clients_elapsed))"
