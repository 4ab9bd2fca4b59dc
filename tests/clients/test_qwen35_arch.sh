#!/usr/bin/env bash
# Qwen3.5 dense (qwen35) and MoE (qwen35moe) against llama.cpp's own code: the tiny BF16 fixtures
# (rebox-mkfixture --arch qwen35: 4 layers, full attention every 2nd, 2 key / 4 value heads, 1 MTP
# layer; --arch qwen35moe: the same with 4 experts and a shared expert in every layer, fused
# gate_up_proj in the main layers, per-expert tensors in the MTP layer; --format mcq of both: every
# matrix but the routers mcq-v1 4-bit, per-expert experts, value heads of 32) are converted by default (BF16 kept / mcq-v1 as Q4_1,
# F32 norms, routers, ssm_a, ssm_dt, ssm_conv1d) and with --outtype f32, then
#  - rebox verify passes on both files;
#  - ggufpy_qwen35.py (one process): every tensor (name, type, ne, values bit for bit; ssm_a with a
#    correctly rounded exp standing in for torch's) and every {arch}.* KV, in order, equal what the
#    bundle's Qwen3_5TextModel / Qwen3_5MoeTextModel chain writes for the same checkpoint (the mcq-v1
#    one dequantized by source_values.py, the Q4_1 tensors dequantized by gguf-py);
#  - llama_embed_pairs.mjs (one llama.cpp process): llama.cpp v0.4.0 loads all eight files and each
#    pair's embeddings agree (cos >= 0.999; the mcq-v1 MoE pair >= 0.998, measured 0.9982: the
#    values are bit-identical (above), but llama.cpp multiplies Q4_1 with Q8_1-rounded activations,
#    and the experts' gated sum carries that rounding further than a dense layer does);
#  - a layer_types against the interval is refused: one line, exit 2, no file.
# Usage: bash tests/clients/test_qwen35_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init qwen35_arch "${1:-}"
ggufpy_setup "$BUILD"

dir="$WORK/qwen35"
moe="$WORK/qwen35moe"
mcq="$WORK/qwen35-mcq"
moeq="$WORK/qwen35moe-mcq"
"$MKFIXTURE" "$dir" --preset tiny --arch qwen35 --force >/dev/null
"$MKFIXTURE" "$moe" --preset tiny --arch qwen35moe --force >/dev/null
"$MKFIXTURE" "$mcq" --preset tiny --arch qwen35 --format mcq --force >/dev/null
"$MKFIXTURE" "$moeq" --preset tiny --arch qwen35moe --format mcq --force >/dev/null
for d in "$dir" "$moe" "$mcq" "$moeq"; do
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  "$REBOX" convert "$d" -o "$d-f32.gguf" --outtype f32 --quiet
  "$REBOX" verify "$d" "$d.gguf" >/dev/null
  "$REBOX" verify "$d" "$d-f32.gguf" >/dev/null
done
ggufpy "$CLIENTS_DIR/ggufpy_qwen35.py" "$BUILD/llama-src" "$dir" "$dir.gguf" F32,BF16 \
  "$dir" "$dir-f32.gguf" F32 "$moe" "$moe.gguf" F32,BF16 "$moe" "$moe-f32.gguf" F32 \
  "$mcq" "$mcq.gguf" F32,Q4_1 "$mcq" "$mcq-f32.gguf" F32 \
  "$moeq" "$moeq.gguf" F32,Q4_1 "$moeq" "$moeq-f32.gguf" F32
echo "qwen35, qwen35moe (BF16, mcq-v1) converted, verified and compared with llama.cpp's converter ($(clients_elapsed))"
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 4 --min-cos 0.999 \
  "qwen35:$dir.gguf:$dir-f32.gguf" "qwen35moe:$moe.gguf:$moe-f32.gguf" "qwen35-mcq:$mcq.gguf:$mcq-f32.gguf" \
  "qwen35moe-mcq:$moeq.gguf:$moeq-f32.gguf:0.998"

bad="$WORK/qwen35-layer-types"
"$MKFIXTURE" "$bad" --preset tiny --arch qwen35 --qwen35-defect layer-types --force >/dev/null
set +e
out="$("$REBOX" convert "$bad" -o "$bad.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 2 && ! -e "$bad.gguf" ]] || { echo "FAIL: layer_types defect: exit $code"; echo "$out"; exit 1; }
[[ $(grep -c "layer_types\[0\]" <<<"$out") -eq 1 ]] || { echo "FAIL: not one line: $out"; exit 1; }
echo "PASS test_qwen35_arch ($(clients_elapsed))"
