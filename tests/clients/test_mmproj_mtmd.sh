#!/usr/bin/env bash
# llama.cpp's own mtmd on rebox's text + mmproj pair: llama-mtmd-cli, compiled from the bundle's
# tools/mtmd against the prebuilt libraries (lib/llama_mtmd.sh), loads a multimodal Gemma 3 fixture's
# pair (rebox-mkfixture --multimodal; the tower in BF16, and in F32 beside a 4-bit mcq-v1 text model,
# whose projection rebox writes as exact F32), checks the projector against the text model (mtmd's
# n_embd check), encodes tools/mtmd/test-1.jpeg through the gemma3 projector (64 image tokens) and
# generates 4 tokens (the CLI exits non-zero when the pair does not load or the image does not encode;
# its log is written by a thread that an early exit may cut short, so only the exit status is asserted).
# The Qwen2-VL and Qwen2.5-VL pairs (rebox-mkfixture --arch qwen2_vl / qwen2_5_vl, BF16 towers of 4 blocks:
# the q/k/v thirds, the two temporal slices of the patch embedding, the merger; 2.5 with its window
# attention pattern) load and encode the same image, at most 16 image tokens, through the qwen2vl_merger /
# qwen2.5vl_merger graphs, then generate 4 tokens; so does the Qwen3-VL pair (rebox-mkfixture --arch qwen3_vl:
# a BF16 tower of 4 blocks with the learned position table, the fused attn_qkv and 2 deepstack mergers beside a
# 3-layer text model whose input mtmd holds at hidden_size x (1 + n_deepstack_layers)) through qwen3vl_merger, and
# the Qwen3.5 tower (rebox-mkfixture --arch qwen35 --qwen35-vision: the same projector, no deepstack mergers)
# beside its qwen35 text model. The float Gemma 3 pair's image embeddings equal those of the converter-made mmproj
# (the bundle's Gemma3VisionModel chain written by gguf-py) beside the same text model (cos >= 0.999).
# The projection against a 96-wide text model is refused by mtmd ("mismatch between text model
# (n_embd = 96) and mmproj (n_embd = 64)"), so the check is one that can fail.
# Usage: bash tests/clients/test_mmproj_mtmd.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
source "$(dirname "$0")/lib/llama_mtmd.sh"
clients_init mmproj_mtmd "${1:-}"
ggufpy_setup "$BUILD"
llama_mtmd_setup
echo "llama-mtmd-cli ready ($(clients_elapsed))"

mtmd() {  # TEXT MMPROJ LOG
  "$LLAMA_MTMD_CLI" -m "$1" --mmproj "$2" --image "$GGUFPY_SRC/tools/mtmd/test-1.jpeg" -p "describe" \
    -n 4 -t 2 --temp 0 --chat-template gemma >"$3" 2>&1
}
for format in float mcq; do
  dir="$WORK/$format"
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --arch gemma3 --multimodal --format "$format" >/dev/null
  "$REBOX" convert "$dir" -o "$WORK/$format.gguf" --quiet
  mtmd "$WORK/$format.gguf" "$WORK/mmproj-$format.gguf" "$WORK/$format.log" ||
    { tail -20 "$WORK/$format.log"; echo "FAIL: llama-mtmd-cli on the $format pair" >&2; exit 1; }
  echo "ok: llama.cpp's mtmd loaded the $format pair, encoded an image and generated ($(clients_elapsed))"
done
# The converter-made mmproj of the float (BF16) fixture (ggufpy_mmproj.py: the bundle's Gemma3VisionModel chain,
# written by gguf-py's GGUFWriter as prepare_tensors writes it, its projection forced to F16) beside the same text
# model: mtmd's image embeddings (clip.cpp's MTMD_DEBUG_EMBEDDINGS dump) equal rebox's pair's, cos >= 0.999.
ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$WORK/float" "$WORK/mmproj-float.gguf" bf16 \
  "$WORK/converter-mmproj-float.gguf" >/dev/null
for which in mmproj-float converter-mmproj-float; do
  rm -f "$WORK/$which.emb"
  MTMD_DEBUG_EMBEDDINGS="$WORK/$which.emb" mtmd "$WORK/float.gguf" "$WORK/$which.gguf" "$WORK/$which-embd.log" ||
    { tail -20 "$WORK/$which-embd.log"; echo "FAIL: llama-mtmd-cli with $which.gguf" >&2; exit 1; }
done
ggufpy "$CLIENTS_DIR/mtmd_embd_cos.py" "$WORK/mmproj-float.emb" "$WORK/converter-mmproj-float.emb" 0.999
for arch in qwen2_vl qwen2_5_vl qwen3_vl; do
  dir="$WORK/$arch"
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --arch "$arch" --format float --no-pooling >/dev/null
  "$REBOX" convert "$dir" -o "$WORK/$arch.gguf" --quiet
  "$LLAMA_MTMD_CLI" -m "$WORK/$arch.gguf" --mmproj "$WORK/mmproj-$arch.gguf" \
    --image "$GGUFPY_SRC/tools/mtmd/test-1.jpeg" --image-max-tokens 16 -p "describe" -n 4 -t 2 --temp 0 \
    --chat-template chatml >"$WORK/$arch.log" 2>&1 ||
    { tail -20 "$WORK/$arch.log"; echo "FAIL: llama-mtmd-cli on the $arch pair" >&2; exit 1; }
  echo "ok: llama.cpp's mtmd loaded the $arch pair, encoded an image and generated ($(clients_elapsed))"
done
# The Qwen3.5 tower (qwen3vl_merger without deepstack mergers) beside a qwen35 text model.
dir="$WORK/qwen35"
"$MKFIXTURE" "$dir" --preset tiny --arch qwen35 --qwen35-vision >/dev/null
"$REBOX" convert "$dir" -o "$WORK/qwen35.gguf" --quiet
"$LLAMA_MTMD_CLI" -m "$WORK/qwen35.gguf" --mmproj "$WORK/mmproj-qwen35.gguf" \
  --image "$GGUFPY_SRC/tools/mtmd/test-1.jpeg" --image-max-tokens 16 -p "describe" -n 4 -t 2 --temp 0 \
  --chat-template chatml >"$WORK/qwen35.log" 2>&1 ||
  { tail -20 "$WORK/qwen35.log"; echo "FAIL: llama-mtmd-cli on the qwen35 pair" >&2; exit 1; }
echo "ok: llama.cpp's mtmd loaded the qwen35 pair, encoded an image and generated ($(clients_elapsed))"
# A text model 96 wide against the 64-wide projection: mtmd must refuse the pair.
dir="$WORK/wide"
"$MKFIXTURE" "$dir" --preset tiny --tokenizer small --arch gemma3 --format float --hidden 96 >/dev/null
"$REBOX" convert "$dir" -o "$WORK/wide.gguf" --quiet
if mtmd "$WORK/wide.gguf" "$WORK/mmproj-float.gguf" "$WORK/wide.log"; then
  echo "FAIL: llama-mtmd-cli took a 64-wide projection for a 96-wide text model" >&2
  exit 1
fi
echo "PASS test_mmproj_mtmd ($(clients_elapsed))"
