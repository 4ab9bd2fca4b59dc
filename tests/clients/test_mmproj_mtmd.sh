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
# beside its qwen35 text model. Each of these five float pairs' image embeddings (clip.cpp's dump, deepstack
# features included) equal those of the converter-made mmproj of the same fixture (the bundle's Gemma3VisionModel,
# Qwen2VLVisionModel or Qwen3VLVisionModel chain written by gguf-py) beside the same text model (cos >= 0.999).
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
"$MKFIXTURE" "$WORK/mcq" --preset tiny --tokenizer small --arch gemma3 --multimodal --format mcq >/dev/null
"$REBOX" convert "$WORK/mcq" -o "$WORK/mcq.gguf" --quiet
mtmd "$WORK/mcq.gguf" "$WORK/mmproj-mcq.gguf" "$WORK/mcq.log" ||
  { tail -20 "$WORK/mcq.log"; echo "FAIL: llama-mtmd-cli on the mcq pair" >&2; exit 1; }
echo "ok: llama.cpp's mtmd loaded the mcq pair, encoded an image and generated ($(clients_elapsed))"
# Each float (BF16) pair generates, and its image embeddings equal those of the converter-made mmproj (ggufpy_mmproj.py:
# the bundle's MmprojModel class chain for the family, written by gguf-py's GGUFWriter as prepare_tensors writes it;
# Gemma 3's projection forced to F16) beside the same text model, cos >= 0.999 (lib/llama_mtmd.sh).
"$MKFIXTURE" "$WORK/float" --preset tiny --tokenizer small --arch gemma3 --multimodal --format float >/dev/null
"$REBOX" convert "$WORK/float" -o "$WORK/float.gguf" --quiet
llama_mtmd_converter_cos gemma3 "$WORK/float" "$WORK/float.gguf" "$WORK/mmproj-float.gguf" bf16 --chat-template gemma
for arch in qwen2_vl qwen2_5_vl qwen3_vl; do
  dir="$WORK/$arch"
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --arch "$arch" --format float --no-pooling >/dev/null
  "$REBOX" convert "$dir" -o "$WORK/$arch.gguf" --quiet
  llama_mtmd_converter_cos "$arch" "$dir" "$WORK/$arch.gguf" "$WORK/mmproj-$arch.gguf" bf16 \
    --image-max-tokens 16 --chat-template chatml
done
# The Qwen3.5 tower (qwen3vl_merger without deepstack mergers) beside a qwen35 text model.
dir="$WORK/qwen35"
"$MKFIXTURE" "$dir" --preset tiny --arch qwen35 --qwen35-vision >/dev/null
"$REBOX" convert "$dir" -o "$WORK/qwen35.gguf" --quiet
llama_mtmd_converter_cos qwen35 "$dir" "$WORK/qwen35.gguf" "$WORK/mmproj-qwen35.gguf" bf16 \
  --image-max-tokens 16 --chat-template chatml
# A text model 96 wide against the 64-wide projection: mtmd must refuse the pair.
dir="$WORK/wide"
"$MKFIXTURE" "$dir" --preset tiny --tokenizer small --arch gemma3 --format float --hidden 96 >/dev/null
"$REBOX" convert "$dir" -o "$WORK/wide.gguf" --quiet
if mtmd "$WORK/wide.gguf" "$WORK/mmproj-float.gguf" "$WORK/wide.log"; then
  echo "FAIL: llama-mtmd-cli took a 64-wide projection for a 96-wide text model" >&2
  exit 1
fi
echo "PASS test_mmproj_mtmd ($(clients_elapsed))"
