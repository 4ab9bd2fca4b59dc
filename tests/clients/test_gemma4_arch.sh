#!/usr/bin/env bash
# Gemma 4 dense (gemma4) against llama.cpp's own code. The tiny BF16 fixture (rebox-mkfixture --arch
# gemma4: 3 sliding layers, then a full-attention one with its own head size and kv heads, no v_proj, a
# layer_scalar per layer, a vision tower stand-in, a small tokenizer of Gemma's shape: see
# tools/mkfixture/gemma4_tokenizer.hpp), and the same model in mcq-v1 (4-bit / 64 then 3-bit / 32) and
# in MLX as mlx-lm saves a mixed_3_4 conversion (every matrix quantized, the vision tower dropped), and
# the MoE layout of 26B-A4B (--gemma4-moe, BF16: every layer's MLP beside a router, its two scales, the
# fused experts.gate_up_proj / down_proj of 2 experts and three more norms; and in mcq-v1, whose 2-D
# contract leaves the 3-D fused experts float, F32; and in MLX as mlx-lm saves it: experts of 64 split
# by its sanitize into experts.switch_glu.gate_proj / up_proj / down_proj, 4-bit / 64, the router's proj
# 8-bit, fused back by rebox into ffn_gate_up_exps; and as mlx-lm's conversion without -q leaves it, BF16
# under the same names), and the E2B / E4B layout
# (--gemma4-e2b: per-layer input embeddings, the last 3 of 6 layers KV-shared with a double-wide MLP,
# their unused k_proj / v_proj / k_norm kept as google/gemma-4-E2B-it stores them) in BF16, in mcq-v1
# and in MLX (mlx-lm's sanitize drops the KV-shared layers' k / v), and the dense and E2B layouts in
# GPTQ and AWQ as GPTQModel saves them (the decoder layers' projections 4-bit, the rest F16; the
# KV-shared layers without k / v), are each converted as they are and
# with --outtype f32, then
#  - rebox verify passes on every file;
#  - ggufpy_gemma4.py: every tensor (values bit for bit against the chain run on the source's values,
#    dequantized for mcq / MLX by source_values.py, the MLX MoE one with mlx-lm's sanitize undone: gate
#    and up concatenated back into experts.gate_up_proj; rope_freqs computed), every gemma4.* KV and every
#    tokenizer.* KV (tokens, scores, token types, merges, ids, flags, chat template), in order, equal what
#    the bundle's Gemma4Model -> Gemma3Model -> TextModel -> ModelBase chain writes, its set_vocab run
#    through gguf-py's own LlamaHfVocab / SpecialVocab;
#  - gemma4_llama.mjs (one llama.cpp process): llama.cpp tokenizes test strings exactly as the
#    tokenizer.json does (@lenml/tokenizers), and each file (BF16, mcq's and MLX's Q4_1, GPTQ's Q4_0,
#    AWQ's Q4_0 / Q4_1 / Q5_0) agrees with its
#    f32 twin (cos >= 0.999), its embeddings and its next-token log-probabilities, and generates;
#  - ggufpy_verify_kvs.py: each KV of the BF16 and BF16 MoE files changed or deleted makes rebox verify
#    fail naming it;
#  - bad input is refused: one BLOCKER line, exit 2, no file (a layer_types of the wrong length, a
#    tokenizer.json that is not Gemma's BPE, a tokenizer_config.json naming a token the vocabulary lacks,
#    a MoE layer without its router.scale, an MLX MoE layer without its switch_glu.up_proj, an E2B without
#    embed_tokens_per_layer).
# Usage: bash tests/clients/test_gemma4_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init gemma4_arch "${1:-}"
ggufpy_setup "$BUILD"

dir="$WORK/gemma4" mcq="$WORK/gemma4-mcq" mlx="$WORK/gemma4-mlx" moe="$WORK/gemma4-moe"
moe_mlx="$WORK/gemma4-moe-mlx" moe_mlx_bf16="$WORK/gemma4-moe-mlx-bf16"
e2b="$WORK/gemma4-e2b" e2b_mcq="$WORK/gemma4-e2b-mcq" e2b_mlx="$WORK/gemma4-e2b-mlx" moe_mcq="$WORK/gemma4-moe-mcq"
gptq="$WORK/gemma4-gptq" awq="$WORK/gemma4-awq" e2b_gptq="$WORK/gemma4-e2b-gptq" e2b_awq="$WORK/gemma4-e2b-awq"
"$MKFIXTURE" "$dir" --preset tiny --arch gemma4 --force >/dev/null
"$MKFIXTURE" "$mcq" --preset tiny --arch gemma4 --format mcq --force >/dev/null
"$MKFIXTURE" "$mlx" --preset tiny --arch gemma4 --format mlx --recipe mixed_3_4 --force >/dev/null
"$MKFIXTURE" "$moe" --preset tiny --arch gemma4 --gemma4-moe --force >/dev/null
"$MKFIXTURE" "$moe_mcq" --preset tiny --arch gemma4 --gemma4-moe --format mcq --force >/dev/null
"$MKFIXTURE" "$moe_mlx" --preset tiny --arch gemma4 --gemma4-moe --format mlx --force >/dev/null
"$MKFIXTURE" "$moe_mlx_bf16" --preset tiny --arch gemma4 --gemma4-moe --format mlx \
  --gemma4-mlx-unquantized --force >/dev/null
"$MKFIXTURE" "$e2b" --preset tiny --arch gemma4 --gemma4-e2b --force >/dev/null
# Seed 3: with the default seed's random weights one test string's last hidden state has an outlier
# whose Q8_1 activation rounding (llama.cpp's Q4_1 kernels) puts its embedding at cos 0.9985 from the
# f32 twin's (the next-token log-probabilities stay at 0.999997; the values are equal bit for bit).
"$MKFIXTURE" "$e2b_mcq" --preset tiny --arch gemma4 --gemma4-e2b --format mcq --seed 3 --force \
  >/dev/null
"$MKFIXTURE" "$e2b_mlx" --preset tiny --arch gemma4 --gemma4-e2b --format mlx --recipe mixed_3_4 \
  --force >/dev/null
# GPTQ and AWQ as GPTQModel saves Gemma4ForConditionalGeneration: each decoder layer's projections
# (E2B's per-layer input gate and projection too; a KV-shared layer has no k / v) 4-bit in groups of
# 32, the embeddings, per_layer_model_projection and the vision tower F16.
for f in gptq awq; do
  "$MKFIXTURE" "$WORK/gemma4-$f" --preset tiny --arch gemma4 --format $f --force >/dev/null
  "$MKFIXTURE" "$WORK/gemma4-e2b-$f" --preset tiny --arch gemma4 --gemma4-e2b --format $f --force \
    >/dev/null
done
triples=() pairs=()
for d in "$dir" "$mcq" "$mlx" "$moe" "$moe_mcq" "$moe_mlx" "$moe_mlx_bf16" "$e2b" "$e2b_mcq" "$e2b_mlx" "$gptq" "$awq" "$e2b_gptq" \
  "$e2b_awq"; do
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  "$REBOX" convert "$d" -o "$d-f32.gguf" --outtype f32 --quiet
  "$REBOX" verify "$d" "$d.gguf" >/dev/null
  "$REBOX" verify "$d" "$d-f32.gguf" >/dev/null
  types=F32,Q4_1
  [[ $d == "$dir" || $d == "$moe" || $d == "$moe_mlx_bf16" || $d == "$e2b" ]] && types=F32,BF16
  # GPTQ (symmetric: Q4_0) and AWQ (Q4_0 / Q4_1 / Q5_0 as its groups allow); F16 embeddings
  [[ $d == "$gptq" || $d == "$e2b_gptq" ]] && types=F32,F16,Q4_0
  [[ $d == "$awq" || $d == "$e2b_awq" ]] && types=F32,F16,Q4_0,Q4_1,Q5_0
  triples+=("$d" "$d.gguf" "$types" "$d" "$d-f32.gguf" F32)
  pairs+=("$d.gguf:$d-f32.gguf")
done
ggufpy "$CLIENTS_DIR/ggufpy_gemma4.py" "$BUILD/llama-src" "${triples[@]}" \
  2>"$WORK/ggufpy.err" || { cat "$WORK/ggufpy.err"; exit 1; }
node "$CLIENTS_DIR/gemma4_llama.mjs" "$dir" --min-cos 0.999 --logits "${pairs[@]}"
# Every KV of the file changed and deleted in turn (gguf-py's writer): verify must name each one.
ggufpy "$CLIENTS_DIR/ggufpy_verify_kvs.py" "$REBOX" "$dir" "$dir.gguf" "$WORK" gemma4 | tail -1
# The MoE file's too: expert_count, expert_used_count and expert_feed_forward_length among them.
ggufpy "$CLIENTS_DIR/ggufpy_verify_kvs.py" "$REBOX" "$moe" "$moe.gguf" "$WORK" gemma4-moe | tail -1
# The E2B file's too: the per-layer feed_forward_length, shared_kv_layers, the per-layer input width.
ggufpy "$CLIENTS_DIR/ggufpy_verify_kvs.py" "$REBOX" "$e2b" "$e2b.gguf" "$WORK" gemma4-e2b | tail -1

bad="$WORK/gemma4-layer-types"
"$MKFIXTURE" "$bad" --preset tiny --arch gemma4 --gemma4-defect layer-types --force >/dev/null
clients_refused "$bad" "layer_types has 3 entries for num_hidden_layers 4"
bad="$WORK/gemma4-no-byte-fallback"
cp -r "$dir" "$bad"
sed -i 's/"byte_fallback": true/"byte_fallback": false/' "$bad/tokenizer.json"
clients_refused "$bad" "LlamaHfVocab"
bad="$WORK/gemma4-unknown-special"
cp -r "$dir" "$bad"
sed -i 's/"eos_token": "<eos>"/"eos_token": "<end_of_turn>"/' "$bad/tokenizer_config.json"
clients_refused "$bad" "tokenizer_config.json: eos_token"
bad="$WORK/gemma4-no-router-scale"
"$MKFIXTURE" "$bad" --preset tiny --arch gemma4 --gemma4-moe --gemma4-defect no-router-scale \
  --force >/dev/null
clients_refused "$bad" "blk.0.ffn_gate_inp.scale: the gemma4 graph requires"
bad="$WORK/gemma4-moe-mlx-no-up"
"$MKFIXTURE" "$bad" --preset tiny --arch gemma4 --gemma4-moe --format mlx --gemma4-defect no-expert-up \
  --force >/dev/null
clients_refused "$bad" "switch_glu.gate_proj.weight: has no up_proj beside it"
bad="$WORK/gemma4-e2b-no-per-layer-embeddings"
"$MKFIXTURE" "$bad" --preset tiny --arch gemma4 --gemma4-e2b --gemma4-defect no-per-layer-embeddings \
  --force >/dev/null
clients_refused "$bad" "per_layer_token_embd.weight: the gemma4 graph requires"
echo "PASS test_gemma4_arch ($(clients_elapsed))"
