#!/usr/bin/env bash
# DeepSeek-V3's maths, not only its tensors (issue 39): the tiny deepseek2 fixture (rebox-mkfixture --arch
# deepseek2: MLA with q_lora_rank 32, kv_lora_rank 32, 4 heads of 32 + 8 rope dims and 16 value dims, yarn
# of factor 4; layer 0 dense, layers 1-2 with 4 sigmoid-routed experts in 2 groups, a shared expert and
# the e_score_correction_bias) in BF16 and in Kimi-K2-Thinking's layout (--format compressed-tensors: the
# routed experts pack-quantized 4-bit / 32, carried as Q4_0), with its q_b_proj, kv_a_proj_with_mqa and
# kv_b_proj multiplied by powers of two (bf16_pow2_scale.py: exact in BF16) so the softmax is sharp and the
# scores depend on the rope and its yarn frequencies (with the fixture's own small weights the attention is
# near uniform: no rope at all still gave cos 0.99996). rebox converts each (as stored, and --outtype f32),
# llama.cpp v0.4.0 gives the last-token embedding of 6 corpus lines, and deepseek2_forward.py, a float64
# numpy forward pass written from transformers' modeling_deepseek_v3 (MLA with the interleaved rope, yarn,
# the mscale_all_dim score scaling, the grouped sigmoid router, shared experts) over the safetensors alone,
# must agree with each F32 file at cos >= 0.999 on every line (the BF16 file too; Kimi's Q4_0 file at
# 0.995, below). Copies of the F32 file
# with kv_a_norm + 1, or with exp_probs_b zeroed (forward_break.py), must fall below.
# The fixture's config sets rope_scaling.mscale to its mscale_all_dim (0.707), as every DeepSeek / Kimi
# release does (1.0 / 1.0, or 0.707 / 0.707): llama.cpp's deepseek2 graph leaves the rope's magnitude at 1,
# which is transformers' yarn attention_factor mscale / mscale_all_dim only when the two are equal (with
# 1.0 / 0.707 the numpy pass and llama.cpp part at cos 0.993, and agree at 1.000000 when the numpy pass
# takes the factor as 1: docs/architectures.md, deepseek2).
# Usage: bash tests/clients/test_deepseek2_forward.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init deepseek2_forward "${1:-}"
ggufpy_setup "$BUILD"

float="$WORK/deepseek2" kimi="$WORK/deepseek2-kimi"
"$MKFIXTURE" "$float" --preset tiny --arch deepseek2 --format float --force >/dev/null
"$MKFIXTURE" "$kimi" --preset tiny --arch deepseek2 --format compressed-tensors --force >/dev/null
for d in "$float" "$kimi"; do
  "$GGUFPY_PYTHON" - "$d/config.json" <<'PY'
import json, sys
path = sys.argv[1]
config = json.load(open(path))
config["rope_scaling"]["mscale"] = config["rope_scaling"]["mscale_all_dim"]
json.dump(config, open(path, "w"), indent=2)
PY
  "$GGUFPY_PYTHON" "$CLIENTS_DIR/bf16_pow2_scale.py" "$d/model.safetensors" \
    q_b_proj.weight=3 kv_a_proj_with_mqa.weight=3 kv_b_proj.weight=2
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  "$REBOX" convert "$d" -o "$d-f32.gguf" --outtype f32 --quiet
done
ggufpy "$CLIENTS_DIR/forward_break.py" "$float-f32.gguf" "$float-kvnorm.gguf" --shift attn_kv_a_norm.weight=1
ggufpy "$CLIENTS_DIR/forward_break.py" "$float-f32.gguf" "$float-nobias.gguf" --fill exp_probs_b.bias=0

node "$CLIENTS_DIR/forward_embed.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 6 \
  "$float:$float.gguf,$float-f32.gguf,$float-kvnorm.gguf,$float-nobias.gguf" "$kimi:$kimi.gguf,$kimi-f32.gguf"
"$GGUFPY_PYTHON" "$CLIENTS_DIR/deepseek2_forward.py" "$float" "$float.ids.json" "$float-f32.json" "$float.json" \
  --broken "$float-kvnorm.json" --broken "$float-nobias.json" --min-cos 0.999
# Kimi's layout: the forward pass on source_values.py's dequantization of the pack-quantized experts.
# The F32 file carries the maths at 0.999 (measured min 0.99916: the sharpened scores and the sigmoid
# router amplify float32's last bits). The Q4_0 file holds the same values (rebox verify, and
# test_deepseek2_arch.sh bit for bit against the converter), but llama.cpp multiplies Q4_0 weights by
# activations rounded to Q8_0 per 32 values, which moves its states (measured min 0.9963): held to 0.995.
"$GGUFPY_PYTHON" "$CLIENTS_DIR/deepseek2_forward.py" "$kimi" "$kimi.ids.json" "$kimi-f32.json" --min-cos 0.999
"$GGUFPY_PYTHON" "$CLIENTS_DIR/deepseek2_forward.py" "$kimi" "$kimi.ids.json" "$kimi.json" --min-cos 0.995
echo "PASS test_deepseek2_forward ($(clients_elapsed))"
