#!/usr/bin/env bash
# DeepSeek-V3 (deepseek2) against llama.cpp's own code: the tiny fixture (rebox-mkfixture --arch
# deepseek2: MLA with q_lora_rank, layer 0 dense, layers 1-2 MoE with 4 experts and a shared expert, an
# MTP stand-in) in BF16, mcq-v1 (4 bits; attn_k_b as exact F32 with --allow-lossless-fallback) and MLX
# (mlx-lm's deepseek_v3: kv_b_proj stored split as embed_q / unembed_out, read as attn_k_b / attn_v_b in
# Q4_1 without a fallback), Kimi-K2-Thinking's layout (--format compressed-tensors: the routed experts
# pack-quantized 4-bit / 32 symmetric with BF16 scales, carried as Q4_0; the rest BF16), GPTQ and AWQ
# (GPTQModel's / AutoAWQ's layouts: every projection 4-bit / 32, kv_b_proj included, so attn_k_b is
# exact F32 with --allow-lossless-fallback; Q4_0, or Q4_1 / Q5_0 as AWQ's zero points allow), ModelOpt
# NVFP4 as nvidia/DeepSeek-R1-0528-FP4-v2 (the MLPs and o_proj NVFP4, every mlp.* factor 1; the
# file's attn_output.scale multiplied in as the graph applies it), and without
# q_lora_rank in BF16, and GLM-4.7-Flash (--arch glm4_moe_lite: the same
# layers, a whole MTP layer kept, GLM's tokenizer; BF16 and mcq-v1, GPTQ and AWQ with the MTP layer
# quantized like any layer, MLX (mlx-lm's glm4_moe_lite: pre-split, trunk only) and ModelOpt NVFP4
# (trunk only, every mlp.* factor 1)), is converted by default and with --outtype f32, then
#  - rebox verify passes on every file;
#  - ggufpy_deepseek2.py (one process): every tensor (name, type, ne, values bit for bit; kv_b_proj split
#    into attn_k_b / attn_v_b by the converter's own code) and every deepseek2.* KV equal what the
#    bundle's DeepseekV2Model chain writes for the same (dequantized) checkpoint; the fixture's
#    tokenizer.json carries DeepSeek-V3's pre-tokenizer (three Split regexes, which must equal
#    llama-vocab.cpp's DEEPSEEK3_LLM list) and every file must say tokenizer.ggml.pre "deepseek-v3"
#    (GLM-4.7-Flash's: the bundle's Glm4MoeLiteModel chain, which keeps the MTP layer, and "glm4");
#  - llama_embed_pairs.mjs (one llama.cpp process): llama.cpp v0.4.0 loads the q_lora_rank files and
#    their f32 twins and their embeddings agree (cos >= 0.999) (its loader requires q_lora_rank of any
#    deepseek2 but the "lite" layer counts, so the q_proj file is compared with the converter only);
#  - an mcq-v1 checkpoint without the fallback is refused: one line per kv_b_proj, exit 2, no file;
#  - llama.cpp applies the NVFP4 file's attn_output.scale: its embeddings agree with the folded F32
#    twin's and not with a twin whose factors are doubled;
#  - NVFP4 experts whose factor is not 1 are refused: one line per stacked tensor, exit 2, no file.
# Usage: bash tests/clients/test_deepseek2_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init deepseek2_arch "${1:-}"
ggufpy_setup "$BUILD"

compare=() pairs=()
for variant in float mcq mlx kimi gptq awq nvfp4 plain glm-lite glm-lite-mcq glm-lite-mlx glm-lite-gptq \
  glm-lite-awq glm-lite-nvfp4; do
  dir="$WORK/deepseek2-$variant"
  arch=deepseek2
  case $variant in
    float) make=(--format float) conv=() types=F32,BF16 ;;
    mcq) make=(--format mcq) conv=(--allow-lossless-fallback) types=F32,Q4_1 ;;
    mlx) make=(--format mlx) conv=() types=F32,Q4_1 ;;
    kimi) make=(--format compressed-tensors) conv=() types=F32,BF16,Q4_0 ;;
    gptq) make=(--format gptq) conv=(--allow-lossless-fallback) types=F32,F16,Q4_0 ;;
    awq) make=(--format awq) conv=(--allow-lossless-fallback) types=F32,F16,Q4_1,Q5_0 ;;
    nvfp4) make=(--format modelopt-nvfp4 --fp4-ffn-scale-one) conv=() types=F32,BF16,NVFP4 ;;
    plain) make=(--format float --no-q-lora) conv=() types=F32,BF16 ;;
    glm-lite) arch=glm4_moe_lite make=(--format float) conv=() types=F32,BF16 ;;
    glm-lite-mcq) arch=glm4_moe_lite make=(--format mcq) conv=(--allow-lossless-fallback) types=F32,Q4_1 ;;
    glm-lite-mlx) arch=glm4_moe_lite make=(--format mlx) conv=() types=F32,Q4_1 ;;
    glm-lite-gptq) arch=glm4_moe_lite make=(--format gptq) conv=(--allow-lossless-fallback) types=F32,F16,Q4_0 ;;
    glm-lite-awq) arch=glm4_moe_lite make=(--format awq) conv=(--allow-lossless-fallback) types=F32,F16,Q4_1,Q5_0 ;;
    glm-lite-nvfp4)
      arch=glm4_moe_lite make=(--format modelopt-nvfp4 --fp4-ffn-scale-one) conv=() types=F32,BF16,NVFP4 ;;
  esac
  "$MKFIXTURE" "$dir" --preset tiny --arch $arch "${make[@]}" --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" "${conv[@]}" --quiet
  "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
  "$REBOX" verify "$dir" "$dir-f32.gguf" >/dev/null
  compare+=("$dir" "$dir.gguf" "$types" "$dir" "$dir-f32.gguf" F32)
  [[ $variant == plain || $variant == awq ]] || pairs+=("deepseek2-$variant:$dir.gguf:$dir-f32.gguf")
done
ggufpy "$CLIENTS_DIR/ggufpy_deepseek2.py" "$BUILD/llama-src" "${compare[@]}"
echo "deepseek2 converted, verified and compared with llama.cpp's converter ($(clients_elapsed))"
# compressed-tensors nvfp4-pack-quantized (the same modules): every FP4 value and .scale as the
# format defines it (ggufpy_nvfp4_formats.py: the factor float32(1) / weight_global_scale, not exact,
# so the file needs --allow-inexact-global-scale and block value * .scale is not the real weight).
ct="$WORK/deepseek2-ct-nvfp4"
"$MKFIXTURE" "$ct" --preset tiny --arch deepseek2 --format ct-nvfp4 --fp4-ffn-scale-one --force >/dev/null
"$REBOX" convert "$ct" -o "$ct.gguf" --allow-inexact-global-scale --quiet
"$REBOX" verify "$ct" "$ct.gguf" >/dev/null
"$REBOX" plan "$ct" --json --allow-inexact-global-scale >"$ct.plan.json"
ggufpy "$CLIENTS_DIR/ggufpy_nvfp4_formats.py" "$GGUFPY_SRC" "$ct" "$ct.gguf" "$ct.plan.json" \
  --scales 3 --expect-inexact
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 3 --min-cos 0.999 \
  "${pairs[@]}"

bad="$WORK/deepseek2-mcq"
set +e
out="$("$REBOX" convert "$bad" -o "$bad-refused.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 2 && ! -e "$bad-refused.gguf" ]] || { echo "FAIL: mcq k_b: exit $code"; echo "$out"; exit 1; }
[[ $(grep -c "layers.1.self_attn.kv_b_proj" <<<"$out") -eq 1 ]] || { echo "FAIL: not one line: $out"; exit 1; }
grep -q -- "--allow-lossless-fallback" <<<"$out" || { echo "FAIL: no fix named: $out"; exit 1; }
# llama.cpp multiplies in attn_output.scale (deepseek2.cpp's wo_s): the NVFP4 file's embeddings agree
# with a twin whose FP4 weights are F32 with every .scale folded in (ggufpy_nvfp4_formats.py: values
# and factors by the format's definition, block value * .scale exactly the real weight), and not with
# a twin whose factors are folded in twice.
nv="$WORK/deepseek2-nvfp4"
"$REBOX" plan "$nv" --json >"$nv.plan.json"
ggufpy "$CLIENTS_DIR/ggufpy_nvfp4_formats.py" "$GGUFPY_SRC" "$nv" "$nv.gguf" "$nv.plan.json" \
  --scales 3 --expect-exact --fold "$nv-fold.gguf"
ggufpy "$CLIENTS_DIR/ggufpy_nvfp4_formats.py" "$GGUFPY_SRC" "$nv" "$nv.gguf" "$nv.plan.json" \
  --scales 3 --fold "$nv-wrong.gguf" --fold-wrong-factor >/dev/null
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 2 --min-cos 0.999 \
  "deepseek2-nvfp4-folded:$nv.gguf:$nv-fold.gguf"
if node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 2 --min-cos 0.999 \
  "wrong-factor:$nv.gguf:$nv-wrong.gguf" >"$nv-wrong.txt" 2>&1; then
  echo "FAIL: a twin with doubled factors agrees with the NVFP4 file (is attn_output.scale applied at all?)"
  cat "$nv-wrong.txt"
  exit 1
fi
echo "  a twin with doubled factors disagrees ($(grep -o 'min cosine [0-9][0-9.]*' "$nv-wrong.txt" | head -1))"

# NVFP4 with the experts' real factors (weight_scale_2 != 1): the deepseek2 graph ignores
# ffn_*_exps.scale, so each stacked expert tensor is one BLOCKER line naming it, exit 2, no file.
bad="$WORK/deepseek2-nvfp4-factors"
"$MKFIXTURE" "$bad" --preset tiny --arch deepseek2 --format modelopt-nvfp4 --force >/dev/null
set +e
out="$("$REBOX" convert "$bad" -o "$bad.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 2 && ! -e "$bad.gguf" ]] || { echo "FAIL: nvfp4 expert factors: exit $code"; echo "$out"; exit 1; }
[[ $(grep -c "ignores blk.1.ffn_gate_exps.scale" <<<"$out") -eq 1 ]] || { echo "FAIL: not one line: $out"; exit 1; }
grep -q "experts.0.gate_proj.weight: ModelOpt per-tensor factor weight_scale_2 = " <<<"$out" ||
  { echo "FAIL: the factor is not named: $out"; exit 1; }
echo "PASS test_deepseek2_arch ($(clients_elapsed))"
