#!/usr/bin/env bash
# Qwen3.5's maths, not only its tensors (issue 37): the tiny BF16 checkpoints of
# `rebox-mkfixture --arch qwen35` (4 layers: gated delta-net, gated attention, alternating; 2 key /
# 4 value heads, so the value-head order matters; an MTP layer the trunk ignores) and `--arch
# qwen35moe` (the same with a router, 4 fused experts of which 2 are used, and a gated shared expert)
# are converted by rebox (BF16 kept, and --outtype f32), and llama.cpp v0.4.0 (node-llama-cpp) gives
# the last-token embedding of 6 corpus lines in each file. qwen35_forward.py, a float64 numpy forward
# pass written from transformers' modeling_qwen3_5 / modeling_qwen3_5_moe (the (1 + w) RMSNorms, the
# gated RMSNorm, the causal conv1d, the recurrent gated delta rule with grouped value heads, the
# query/gate split of q_proj, the partial interleaved-mrope rotary, the sigmoid output gate, the
# top-k renormalised router and the sigmoid-gated shared expert) over the safetensors alone, must
# agree with each at cos >= 0.999 on every line. A copy of the dense F32 file with q_norm written
# without its + 1 (forward_break.py, gguf-py) must fall below that bound.
# The dense mcq-v1, GPTQ and compressed-tensors fixtures too: each F32 twin against the pass on the
# dequantized source (cos >= 0.999), and each quantized file (Q4_1 / Q4_0) against the pass with
# llama.cpp's CPU rounding of every product's input modelled (--kernel: x as Q8_1 / Q8_0 / BF16 /
# F16 for the weight's type, llama_cpu_rounding.py): cos >= 0.999, measured 0.99979 (mcq-v1) and
# 0.999997 (compressed-tensors), against 0.9990 and 0.9840 without the model, so the gap between
# these files and their twins is llama.cpp's arithmetic, not their values; GPTQ >= 0.998 (0.9981,
# from 0.9910: the rest of its gap is not modelled).
# Qwen3-Next (`--arch qwen3next`: in_proj_qkvz / in_proj_ba per key head, the pass following
# modeling_qwen3_next's fix_query_key_value_ordering) in BF16 and F32 at cos >= 0.999, its F32 copy
# with q_norm's + 1 undone below; and the mcq-v1 and compressed-tensors MoE fixtures of qwen35moe
# and qwen3next, each expert's products modelled by its own tensor's type, at cos >= 0.999.
# Usage: bash tests/clients/test_qwen35_forward.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init qwen35_forward "${1:-}"
ggufpy_setup "$BUILD"

dense="$WORK/qwen35"
moe="$WORK/qwen35moe"
"$MKFIXTURE" "$dense" --preset tiny --arch qwen35 --force >/dev/null
"$MKFIXTURE" "$moe" --preset tiny --arch qwen35moe --force >/dev/null
for d in "$dense" "$moe"; do
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  "$REBOX" convert "$d" -o "$d-f32.gguf" --outtype f32 --quiet
done
ggufpy "$CLIENTS_DIR/forward_break.py" "$dense-f32.gguf" "$dense-qnorm.gguf" --shift attn_q_norm.weight=-1

node "$CLIENTS_DIR/forward_embed.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 6 \
  "$dense:$dense.gguf,$dense-f32.gguf,$dense-qnorm.gguf" "$moe:$moe.gguf,$moe-f32.gguf"
"$GGUFPY_PYTHON" "$CLIENTS_DIR/qwen35_forward.py" "$dense" "$dense.ids.json" "$dense.json" "$dense-f32.json" \
  --broken "$dense-qnorm.json" --min-cos 0.999
"$GGUFPY_PYTHON" "$CLIENTS_DIR/qwen35_forward.py" "$moe" "$moe.ids.json" "$moe.json" "$moe-f32.json" \
  --min-cos 0.999
# The quantized files: their F32 twins against the plain pass on the dequantized source, the files
# themselves against the pass with llama.cpp's CPU rounding of each product's input (--kernel).
quant=()
for format in mcq gptq compressed-tensors; do
  d="$WORK/qwen35-$format"
  "$MKFIXTURE" "$d" --preset tiny --arch qwen35 --format "$format" --force >/dev/null
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  "$REBOX" convert "$d" -o "$d-f32.gguf" --outtype f32 --quiet
  quant+=("$d:$d.gguf,$d-f32.gguf")
done
# Qwen3-Next (in_proj_qkvz / in_proj_ba per key head) in BF16 and F32, and the quantized MoE and
# Qwen3-Next fixtures whose distance from their F32 twins is llama.cpp's activation rounding.
next="$WORK/qwen3next"
"$MKFIXTURE" "$next" --preset tiny --arch qwen3next --force >/dev/null
"$REBOX" convert "$next" -o "$next.gguf" --quiet
"$REBOX" convert "$next" -o "$next-f32.gguf" --outtype f32 --quiet
ggufpy "$CLIENTS_DIR/forward_break.py" "$next-f32.gguf" "$next-qnorm.gguf" --shift attn_q_norm.weight=-1
quant+=("$next:$next.gguf,$next-f32.gguf,$next-qnorm.gguf")
moe_quant=()
for case in qwen35moe:mcq qwen35moe:compressed-tensors qwen3next:mcq qwen3next:compressed-tensors; do
  d="$WORK/${case%%:*}-${case#*:}"
  "$MKFIXTURE" "$d" --preset tiny --arch "${case%%:*}" --format "${case#*:}" --force >/dev/null
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  moe_quant+=("$d")
  quant+=("$d:$d.gguf")
done
node "$CLIENTS_DIR/forward_embed.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 6 "${quant[@]}"
"$GGUFPY_PYTHON" "$CLIENTS_DIR/qwen35_forward.py" "$next" "$next.ids.json" "$next.json" "$next-f32.json" \
  --broken "$next-qnorm.json" --min-cos 0.999
# Measured without the model of the rounding 0.9985 / 0.9951 (Qwen3.5 MoE mcq-v1 / compressed-tensors)
# and 0.9814 / 0.9843 (Qwen3-Next); with it 0.99995 / 0.99964 / 0.999998 / 0.99994.
for d in "${moe_quant[@]}"; do
  "$GGUFPY_PYTHON" "$CLIENTS_DIR/qwen35_forward.py" "$d" "$d.ids.json" "$d.json" --kernel --min-cos 0.999
done
for format in mcq gptq compressed-tensors; do
  d="$WORK/qwen35-$format"
  "$GGUFPY_PYTHON" "$CLIENTS_DIR/qwen35_forward.py" "$d" "$d.ids.json" "$d-f32.json" --min-cos 0.999
  # GPTQ: measured 0.9981 (0.9910 without the model of the rounding); what is left of its gap is
  # not modelled (its F16 side tensors and wider random scales make the fixture more sensitive).
  bound=0.999; [[ $format == gptq ]] && bound=0.998
  "$GGUFPY_PYTHON" "$CLIENTS_DIR/qwen35_forward.py" "$d" "$d.ids.json" "$d.json" --kernel --min-cos "$bound"
done
echo "PASS test_qwen35_forward ($(clients_elapsed))"
