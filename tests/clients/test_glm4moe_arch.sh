#!/usr/bin/env bash
# GLM-4.5 MoE (glm4moe) against llama.cpp's own code: the tiny fixture (rebox-mkfixture --arch glm4moe:
# layer 0 dense, layer 1 MoE with 4 experts and a shared expert, 1 MTP layer) in BF16, mcq-v1 (4 / 3
# bits, the router at 8), MLX (mlx-lm's glm4_moe: 4 bits, experts stacked as switch_mlp, router float,
# no MTP layer), GPTQ and AWQ (every projection 4-bit / 32, the MTP layer's too: Q4_0, or Q4_1 /
# Q5_0 as AWQ's zero points allow) and ModelOpt NVFP4 (every Linear but lm_head, the MTP layer BF16,
# every mlp.* factor 1; the q / k / v / o .scale multiplied in as the graph applies it) is converted
# by default (BF16 / F16 kept, or the exact blocks, F32 norms, router and exp_probs_b) and with
# --outtype f32, then
#  - rebox verify passes on every file;
#  - ggufpy_glm4moe.py (one process): every tensor (name, type, ne, values bit for bit) and every
#    glm4moe.* KV, in order, equal what the bundle's Glm4MoeModel chain writes for the same
#    (dequantized) checkpoint;
#  - llama_embed_pairs.mjs (one llama.cpp process): llama.cpp v0.4.0 loads every file and its f32
#    twin and their embeddings agree (cos >= 0.999);
#  - a missing expert, and NVFP4 experts whose factor is not 1, are refused: one line, exit 2, no file.
# Usage: bash tests/clients/test_glm4moe_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init glm4moe_arch "${1:-}"
ggufpy_setup "$BUILD"

compare=() pairs=()
for fmt in float mcq mlx gptq awq modelopt-nvfp4; do
  dir="$WORK/glm4moe-$fmt"
  extra=()
  [[ $fmt == modelopt-nvfp4 ]] && extra=(--fp4-ffn-scale-one)
  "$MKFIXTURE" "$dir" --preset tiny --arch glm4moe --format "$fmt" "${extra[@]}" --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
  "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
  "$REBOX" verify "$dir" "$dir-f32.gguf" >/dev/null
  case $fmt in
    float) types=F32,BF16 ;;
    gptq) types=F32,F16,Q4_0 ;;
    awq) types=F32,F16,Q4_0,Q4_1,Q5_0 ;;
    modelopt-nvfp4) types=F32,BF16,NVFP4 ;;
    *) types=F32,Q4_1 ;;
  esac
  compare+=("$dir" "$dir.gguf" "$types" "$dir" "$dir-f32.gguf" F32)
  [[ $fmt == awq ]] || pairs+=("glm4moe-$fmt:$dir.gguf:$dir-f32.gguf")
done
ggufpy "$CLIENTS_DIR/ggufpy_glm4moe.py" "$BUILD/llama-src" "${compare[@]}"
echo "glm4moe converted, verified and compared with llama.cpp's converter ($(clients_elapsed))"
# compressed-tensors nvfp4-pack-quantized (the same modules): every FP4 value and .scale as the
# format defines it (ggufpy_nvfp4_formats.py: the factor float32(1) / weight_global_scale, not exact,
# so the file needs --allow-inexact-global-scale and block value * .scale is not the real weight).
ct="$WORK/glm4moe-ct-nvfp4"
"$MKFIXTURE" "$ct" --preset tiny --arch glm4moe --format ct-nvfp4 --fp4-ffn-scale-one --force >/dev/null
"$REBOX" convert "$ct" -o "$ct.gguf" --allow-inexact-global-scale --quiet
"$REBOX" verify "$ct" "$ct.gguf" >/dev/null
"$REBOX" plan "$ct" --json --allow-inexact-global-scale >"$ct.plan.json"
ggufpy "$CLIENTS_DIR/ggufpy_nvfp4_formats.py" "$GGUFPY_SRC" "$ct" "$ct.gguf" "$ct.plan.json" \
  --scales 8 --expect-inexact
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 3 --min-cos 0.999 \
  "${pairs[@]}"

bad="$WORK/glm4moe-expert-missing"
"$MKFIXTURE" "$bad" --preset tiny --arch glm4moe --glm4moe-defect expert-missing --force >/dev/null
set +e
out="$("$REBOX" convert "$bad" -o "$bad.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 2 && ! -e "$bad.gguf" ]] || { echo "FAIL: expert-missing defect: exit $code"; echo "$out"; exit 1; }
[[ $(grep -c "experts.3.up_proj" <<<"$out") -eq 1 ]] || { echo "FAIL: not one line: $out"; exit 1; }
# NVFP4 with the real factors (weight_scale_2 != 1) on the FFN and the experts: glm4-moe.cpp
# ignores their .scale, so each is one BLOCKER line naming it, exit 2, no file.
bad="$WORK/glm4moe-nvfp4-factors"
"$MKFIXTURE" "$bad" --preset tiny --arch glm4moe --format modelopt-nvfp4 --force >/dev/null
set +e
out="$("$REBOX" convert "$bad" -o "$bad.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 2 && ! -e "$bad.gguf" ]] || { echo "FAIL: nvfp4 factors: exit $code"; echo "$out"; exit 1; }
[[ $(grep -c "ignores blk.1.ffn_up_exps.scale" <<<"$out") -eq 1 ]] || { echo "FAIL: not one line: $out"; exit 1; }
echo "PASS test_glm4moe_arch ($(clients_elapsed))"
