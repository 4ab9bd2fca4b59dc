#!/usr/bin/env bash
# Gemma 4's maths, not only its tensors (issue 38): the tiny BF16 checkpoints of `rebox-mkfixture
# --arch gemma4` (3 sliding layers of head 16 / 2 kv heads and rope base 1e4, then a full layer of
# global_head_dim 32 with 1 kv head, no v_proj (k reused as v) and the proportional rope of base 1e6
# over a quarter of its dims; a layer_scalar per layer), --gemma4-e2b (per-layer input embeddings, the
# last 3 of 6 layers KV-shared with a double-wide MLP) and --gemma4-moe (a router with its scale and
# per-expert scale beside every layer's MLP, fused experts, three more norms) are converted by rebox
# (BF16 kept, and --outtype f32), and llama.cpp v0.4.0 (node-llama-cpp) gives the last-token embedding
# of 6 corpus lines in each file (and in the F32 files of the E2B layout from GPTQ, the dense one
# from AWQ and the MoE one from MLX, whose experts mlx-lm stores split as switch_glu gate / up / down,
# against the forward pass on their dequantized codes) (lines longer than the fixture's sliding window of 32 tokens, so the
# window masks keys). gemma4_forward.py, a float64 numpy forward pass written from transformers'
# modeling_gemma4 (plain-weight RMSNorms, the weightless v_norm, scaling 1, the sliding mask, the two
# rope kinds, KV sharing, per-layer inputs, the router and experts, layer_scalar) over the safetensors
# alone, must agree with each F32 file at cos >= 0.999 on every line (each BF16 file at 0.995: llama.cpp's
# BF16 kernels round the activations, below). A copy of the dense F32 file with every
# norm written with Gemma 3's + 1 (forward_break.py, gguf-py), and one whose rope_freqs rotates every
# pair of the full layer (plain rope instead of the proportional one), must each fall below that bound.
# Usage: bash tests/clients/test_gemma4_forward.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init gemma4_forward "${1:-}"
ggufpy_setup "$BUILD"

dense="$WORK/gemma4" e2b="$WORK/gemma4-e2b" moe="$WORK/gemma4-moe"
gptq="$WORK/gemma4-e2b-gptq" awq="$WORK/gemma4-awq" moe_mlx="$WORK/gemma4-moe-mlx"
"$MKFIXTURE" "$dense" --preset tiny --arch gemma4 --force >/dev/null
"$MKFIXTURE" "$e2b" --preset tiny --arch gemma4 --gemma4-e2b --force >/dev/null
"$MKFIXTURE" "$moe" --preset tiny --arch gemma4 --gemma4-moe --force >/dev/null
"$MKFIXTURE" "$gptq" --preset tiny --arch gemma4 --gemma4-e2b --format gptq --force >/dev/null
"$MKFIXTURE" "$awq" --preset tiny --arch gemma4 --format awq --force >/dev/null
"$MKFIXTURE" "$moe_mlx" --preset tiny --arch gemma4 --gemma4-moe --format mlx --force >/dev/null
for d in "$dense" "$e2b" "$moe"; do
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  "$REBOX" convert "$d" -o "$d-f32.gguf" --outtype f32 --quiet
done
for d in "$gptq" "$awq" "$moe_mlx"; do
  "$REBOX" convert "$d" -o "$d-f32.gguf" --outtype f32 --quiet
done
ggufpy "$CLIENTS_DIR/forward_break.py" "$dense-f32.gguf" "$dense-plus1.gguf" --shift norm.weight=1
ggufpy "$CLIENTS_DIR/forward_break.py" "$dense-f32.gguf" "$dense-plainrope.gguf" --fill rope_freqs.weight=1

node "$CLIENTS_DIR/forward_embed.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 6 \
  "$dense:$dense.gguf,$dense-f32.gguf,$dense-plus1.gguf,$dense-plainrope.gguf" \
  "$e2b:$e2b.gguf,$e2b-f32.gguf" "$moe:$moe.gguf,$moe-f32.gguf" "$gptq:$gptq-f32.gguf" "$awq:$awq-f32.gguf" \
  "$moe_mlx:$moe_mlx-f32.gguf"
# The F32 files carry the maths at 0.999. The BF16 files also go through llama.cpp's BF16 kernels, which
# round the activations to BF16 before each product; with Gemma 4's attention scale of 1 and the dense
# fixture's q/k norms near 1 the softmax is sharp, and that rounding alone puts one line of the dense
# BF16 file at cos 0.9970 from its own F32 twin in llama.cpp (same values, bit for bit): those files are
# held to 0.995, still far above the broken copies (0.92 and below).
for d in "$dense" "$e2b" "$moe"; do
  broken=()
  [[ $d == "$dense" ]] && broken=(--broken "$dense-plus1.json" --broken "$dense-plainrope.json")
  "$GGUFPY_PYTHON" "$CLIENTS_DIR/gemma4_forward.py" "$d" "$d.ids.json" "$d-f32.json" "${broken[@]}" \
    --min-cos 0.999
  "$GGUFPY_PYTHON" "$CLIENTS_DIR/gemma4_forward.py" "$d" "$d.ids.json" "$d.json" --min-cos 0.995
done
# GPTQ (E2B layout, symmetric) and AWQ (dense, asymmetric): the forward pass on source_values.py's
# dequantization, w = (q - z) * s, of the packed codes; MLX (MoE layout): w = code * scale + bias, the
# switch_glu halves joined back; llama.cpp on rebox's F32 file.
for d in "$gptq" "$awq" "$moe_mlx"; do
  "$GGUFPY_PYTHON" "$CLIENTS_DIR/gemma4_forward.py" "$d" "$d.ids.json" "$d-f32.json" --min-cos 0.999
done
echo "PASS test_gemma4_forward ($(clients_elapsed))"
