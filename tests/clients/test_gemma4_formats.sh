#!/usr/bin/env bash
# Gemma 4 dense (gemma4) from compressed-tensors int4 and NVFP4, against llama.cpp's own code. The
# tiny fixture of test_gemma4_arch.sh (rebox-mkfixture --arch gemma4) as three tools save it:
#  - compressed-tensors pack-quantized as llm-compressor's W4A16 (each decoder layer's attention and
#    MLP projections 4-bit in groups of 32, symmetric, BF16 scales; its ignore list: lm_head, the
#    vision tower, embed_vision; the embeddings BF16), converted as it is (Q4_0) and --outtype f32;
#    and the E2B layout so (its per-layer input gate / projection ignored too, BF16; the KV-shared
#    layers without k / v / k_norm, which transformers never loads);
#  - ModelOpt NVFP4 as nvidia/Gemma-4-31B-IT-NVFP4 holds it (the MLP's gate / up / down_proj NVFP4
#    with their weight_scale_2; attention, embeddings and the vision tower BF16);
#  - compressed-tensors nvfp4-pack-quantized as the community uploads of gemma-4-31B-it hold it
#    (attention and MLP NVFP4; its per-tensor factor 1 / weight_global_scale is carried as the
#    nearest F32, so the conversion takes --allow-inexact-global-scale);
#  - ModelOpt NVFP4 of the MoE layout (26B-A4B) as ModelOpt's Gemma 4 MoE export holds it: each
#    expert its own Linear modules experts.E.gate_proj / up_proj / down_proj NVFP4 beside the MLP's,
#    the router BF16; router.per_expert_scale is folded into each expert's down_proj factor as the
#    converter folds it (one F32 product: not exact, so --allow-inexact-global-scale, and verify
#    lists each such ffn_down_exps.scale NOT BIT-IDENTICAL); ggufpy_gemma4_nvfp4_moe.py runs the
#    converter's own NVFP4 path on the same checkpoint (every NVFP4 tensor byte for byte);
#  - the MoE layout as llm-compressor (W4A16), GPTQModel and AutoAWQ save it: they quantize Linear
#    modules only, so the attention, the dense MLP and nothing else are int4, while transformers'
#    fused experts (parameters, not Linear modules) and the router (every tool's MoE ignore rule)
#    stay float: converted as they are and --outtype f32;
# the NVFP4 files' F32 twins are the same files with every .scale multiplied in by gguf-py
# (ggufpy_fold_scales.py), not rebox. Then
#  - rebox verify passes on every file;
#  - ggufpy_gemma4.py: every tensor (values bit for bit against the bundle's Gemma4Model chain run on
#    the source dequantized by the formats' own definitions: (q - z) * s for compressed-tensors, E2M1 *
#    scale * factor for NVFP4, each .scale of the GGUF multiplied into its weight as llama.cpp's graph
#    does), every gemma4.* and tokenizer.* KV, in order;
#  - gemma4_llama.mjs: each file agrees with its F32 twin (embeddings and next-token log-probabilities,
#    cos >= 0.999) and generates: llama.cpp applies the attention, FFN and output .scale tensors;
#  - bad input is refused: one BLOCKER line, exit 2, no file: the NVFP4 MoE without
#    --allow-inexact-global-scale (the folded factor is a rounded product); an E2B checkpoint whose layer 0
#    per_layer_input_gate is NVFP4 with a factor other than 1 (the gemma4 graph applies no .scale
#    to per_layer_input_gate / per_layer_projection: blk.N.inp_gate / proj).
# Usage: bash tests/clients/test_gemma4_formats.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init gemma4_formats "${1:-}"
ggufpy_setup "$BUILD"

ct="$WORK/gemma4-ct" mo="$WORK/gemma4-modelopt-nvfp4" cn="$WORK/gemma4-ct-nvfp4"
e2b="$WORK/gemma4-e2b-ct" mm="$WORK/gemma4-moe-modelopt-nvfp4"
"$MKFIXTURE" "$ct" --preset tiny --arch gemma4 --format compressed-tensors --force >/dev/null
"$MKFIXTURE" "$e2b" --preset tiny --arch gemma4 --gemma4-e2b --format compressed-tensors --force \
  >/dev/null
"$MKFIXTURE" "$mo" --preset tiny --arch gemma4 --format modelopt-nvfp4 --force >/dev/null
"$MKFIXTURE" "$cn" --preset tiny --arch gemma4 --format ct-nvfp4 --force >/dev/null
"$MKFIXTURE" "$mm" --preset tiny --arch gemma4 --gemma4-moe --format modelopt-nvfp4 --force >/dev/null
moe_int4=()
for format in compressed-tensors gptq awq; do
  d="$WORK/gemma4-moe-$format"
  "$MKFIXTURE" "$d" --preset tiny --arch gemma4 --gemma4-moe --format "$format" --force >/dev/null
  moe_int4+=("$d")
done
for d in "$ct" "$e2b" "${moe_int4[@]}"; do
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  "$REBOX" convert "$d" -o "$d-f32.gguf" --outtype f32 --quiet
  "$REBOX" verify "$d" "$d.gguf" >/dev/null
  "$REBOX" verify "$d" "$d-f32.gguf" >/dev/null
done
"$REBOX" convert "$mo" -o "$mo.gguf" --quiet
"$REBOX" verify "$mo" "$mo.gguf" >/dev/null
"$REBOX" convert "$cn" -o "$cn.gguf" --quiet --allow-inexact-global-scale
# verify accepts it, reporting each inexact factor NOT BIT-IDENTICAL (27 .scale tensors, nothing else)
out="$("$REBOX" verify "$cn" "$cn.gguf")"
[[ $(grep -c '^NOT BIT-IDENTICAL blk\.[0-9]*\.[a-z_]*\.scale ' <<<"$out") -eq 27 &&
  $(grep -c '^NOT BIT-IDENTICAL' <<<"$out") -eq 27 ]] ||
  { echo "FAIL: rebox verify on $cn.gguf: 27 inexact .scale tensors expected"; echo "$out"; exit 1; }
# Refused without --allow-inexact-global-scale: one BLOCKER line per layer's folded down factor
# (4), exit 2, no file.
set +e
out="$("$REBOX" convert "$mm" -o "$mm.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 2 && ! -e "$mm.gguf" &&
  $(grep -c '^BLOCKER .*GGUF can hold only fl32(weight_scale_2 \* router\.per_expert_scale\[e\]) = .* as blk\.[0-3]\.ffn_down_exps\.scale, off by .*pass --allow-inexact-global-scale' <<<"$out") -eq 4 &&
  $(grep -c '^BLOCKER' <<<"$out") -eq 4 ]] ||
  { echo "FAIL: $mm: exit $code (expected 2, 4 BLOCKER lines on the folded factors, no file)"; echo "$out"; exit 1; }
echo "  $(basename "$mm"): refused without --allow-inexact-global-scale: $(grep -m1 '^BLOCKER' <<<"$out")"
"$REBOX" convert "$mm" -o "$mm.gguf" --quiet --allow-inexact-global-scale
# verify reads the fold itself: each layer's ffn_down_exps.scale NOT BIT-IDENTICAL (4 layers), the
# rest (the stacked NVFP4 experts, the other .scale tensors) identical
out="$("$REBOX" verify "$mm" "$mm.gguf")"
[[ $(grep -c '^NOT BIT-IDENTICAL blk\.[0-9]*\.ffn_down_exps\.scale ' <<<"$out") -eq 4 &&
  $(grep -c '^NOT BIT-IDENTICAL' <<<"$out") -eq 4 ]] ||
  { echo "FAIL: rebox verify on $mm.gguf: 4 inexact ffn_down_exps.scale expected"; echo "$out"; exit 1; }
# rebox check takes the stacked gate / up apart for the fused ffn_gate_up_exps, as the loader does
out="$("$REBOX" check "$mm.gguf" 2>&1)" && grep -q ' 0 finding(s)' <<<"$out" ||
  { echo "FAIL: rebox check on $mm.gguf"; echo "$out"; exit 1; }
for d in "$mo" "$cn" "$mm"; do ggufpy "$CLIENTS_DIR/ggufpy_fold_scales.py" "$d.gguf" "$d-f32.gguf"; done
ggufpy "$CLIENTS_DIR/ggufpy_gemma4_nvfp4_moe.py" "$BUILD/llama-src" "$mm" "$mm.gguf" F32,BF16,NVFP4 \
  2>"$WORK/ggufpy-moe.err" || { cat "$WORK/ggufpy-moe.err"; exit 1; }
ggufpy "$CLIENTS_DIR/ggufpy_gemma4.py" "$BUILD/llama-src" \
  "$ct" "$ct.gguf" F32,BF16,Q4_0 "$ct" "$ct-f32.gguf" F32 \
  "$e2b" "$e2b.gguf" F32,BF16,Q4_0 "$e2b" "$e2b-f32.gguf" F32 \
  "$mo" "$mo.gguf" F32,BF16,NVFP4 "$cn" "$cn.gguf" F32,BF16,NVFP4 \
  "${moe_int4[0]}" "${moe_int4[0]}.gguf" F32,BF16,Q4_0 "${moe_int4[0]}" "${moe_int4[0]}-f32.gguf" F32 \
  "${moe_int4[1]}" "${moe_int4[1]}.gguf" F32,F16,Q4_0 "${moe_int4[1]}" "${moe_int4[1]}-f32.gguf" F32 \
  "${moe_int4[2]}" "${moe_int4[2]}.gguf" F32,F16,Q4_0,Q4_1,Q5_0 "${moe_int4[2]}" "${moe_int4[2]}-f32.gguf" F32 \
  2>"$WORK/ggufpy.err" || { cat "$WORK/ggufpy.err"; exit 1; }
node "$CLIENTS_DIR/gemma4_llama.mjs" "$ct" --min-cos 0.999 --logits "$ct.gguf:$ct-f32.gguf" \
  "$e2b.gguf:$e2b-f32.gguf" "$mo.gguf:$mo-f32.gguf" "$cn.gguf:$cn-f32.gguf" "$mm.gguf:$mm-f32.gguf" \
  "${moe_int4[0]}.gguf:${moe_int4[0]}-f32.gguf" "${moe_int4[1]}.gguf:${moe_int4[1]}-f32.gguf" \
  "${moe_int4[2]}.gguf:${moe_int4[2]}-f32.gguf"

bad="$WORK/gemma4-e2b-per-layer-nvfp4"
"$MKFIXTURE" "$bad" --preset tiny --arch gemma4 --gemma4-e2b --format modelopt-nvfp4 \
  --gemma4-defect per-layer-nvfp4 --force >/dev/null
clients_refused "$bad" "llama.cpp's gemma4 graph ignores blk.0.inp_gate.scale"
echo "PASS test_gemma4_formats ($(clients_elapsed))"
