#!/usr/bin/env bash
# A semantic proof that two rebox files cannot fake: hf_forward.py runs the Hugging Face forward pass of
# each source checkpoint in numpy (RMSNorm, rotate-half rotary, GQA, q/k norm, SwiGLU, final norm,
# sentence-transformers pooling) on the safetensors' own values; llama.cpp (node-llama-cpp) embeds the
# same token ids (tokenized by the model's own tokenizer.json through @lenml/tokenizers) in rebox's GGUF.
# Per file, over FORWARD_LINES (12) corpus lines, the minimum cosine must reach:
#   F32 files (--outtype f32 of every source, an F32 float source)  0.999999999 (measured 1 - 1e-13)
#   BF16 files (a BF16 float source kept as BF16)                    0.9999 (measured 1 - 4e-6)
#   Q4_1/Q5_1 files (mcq-v1 / MLX, exact re-encodings)               0.999 (measured 1 - 4.3e-4 at worst)
# and, for BF16 and Q4_1/Q5_1 files, 0.9999 against the same forward pass with each linear layer's input
# rounded as llama.cpp's CPU product rounds it (llama_cpu_rounding.py: BF16, or Q8_1 with fp16 block
# sums): that rounding, not the file, is the whole gap (median 1 - 1e-14; a value that lands on the other
# side of a rounding boundary in float64 than in llama.cpp's float32 costs up to 1.6e-5 measured).
# on qwen3 (mcq-v1 with the real Qwen3 tokenizer and the Qwen3-Embedding EOS, MLX mixed 4/5-bit, BF16
# and F32 float), qwen2 (q/k/v biases), llama (GQA, llama3 rope_scaling: rope_freqs; mcq-v1 and BF16) and
# mistral (llama arch, head_dim 32 != hidden/heads; mcq-v1).
# Negative cases, copies broken with gguf-py (forward_break.py), must fall below their file's bound:
# rope.freq_base 10000 for 1e6 and layer_norm_rms_epsilon 1e-5 for 1e-6 (KV mistakes both rebox
# conversions would share), and llama's attn_q/attn_k left in HF row order (no permutation); a copy with
# tokenizer.ggml.add_bos_token true must be refused (llama.cpp would embed a BOS the HF model does not see).
# Usage: bash tests/clients/test_forward_semantics.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init forward_semantics "${1:-}"
ggufpy_setup "$BUILD"
LINES="${FORWARD_LINES:-12}"
F32_MIN=0.999999999 BF16_MIN=0.9999 QUANT_MIN=0.999 KERNEL_MIN=0.9999

# fixture NAME MKFIXTURE_FLAGS...: the checkpoint $WORK/NAME, its default conversion $WORK/NAME.gguf and
# its --outtype f32 twin $WORK/NAME-f32.gguf.
fixture() {
  local name="$1"
  shift
  "$MKFIXTURE" "$WORK/$name" --preset tiny --embedding-eos --force "$@" >/dev/null
  "$REBOX" convert "$WORK/$name" -o "$WORK/$name.gguf" --quiet
  "$REBOX" convert "$WORK/$name" -o "$WORK/$name-f32.gguf" --outtype f32 --quiet
}
break_file() { ggufpy "$CLIENTS_DIR/forward_break.py" "$@"; }

fixture qwen3-mcq --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER"
fixture qwen3-mlx --format mlx --recipe mixed_4_5 --tokenizer small
fixture qwen3-bf16 --format float --dtype bf16 --tokenizer small
"$MKFIXTURE" "$WORK/qwen3-float32" --preset tiny --embedding-eos --force --format float --dtype f32 \
  --tokenizer small >/dev/null
"$REBOX" convert "$WORK/qwen3-float32" -o "$WORK/qwen3-float32.gguf" --quiet
fixture qwen2-mcq --arch qwen2 --tokenizer small
fixture llama-mcq --arch llama --rope-scaling llama3 --tokenizer small
fixture llama-bf16 --arch llama --rope-scaling llama3 --format float --dtype bf16 --tokenizer small
fixture mistral-mcq --arch mistral --tokenizer small
# The negative cases: KV mistakes rebox's two conversions would share, and llama without the permutation.
break_file "$WORK/qwen3-bf16-f32.gguf" "$WORK/qwen3-bf16-f32-freq-base.gguf" --set qwen3.rope.freq_base=10000
break_file "$WORK/qwen3-bf16-f32.gguf" "$WORK/qwen3-bf16-f32-rms-eps.gguf" \
  --set qwen3.attention.layer_norm_rms_epsilon=1e-5
break_file "$WORK/llama-mcq-f32.gguf" "$WORK/llama-mcq-f32-unpermuted.gguf" --unpermute-qk
echo "fixtures converted and broken copies written ($(clients_elapsed))"

# One node process embeds everything: job = MODEL_DIR:FILE.gguf,... (ids in MODEL_DIR.ids.json,
# vectors in FILE.json).
job() {
  local name="$1" files=()
  shift
  for suffix in "$@"; do files+=("$WORK/$name$suffix.gguf"); done
  local IFS=,
  echo "$WORK/$name:${files[*]}"
}
node "$CLIENTS_DIR/forward_embed.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines "$LINES" \
  "$(job qwen3-mcq "" -f32)" "$(job qwen3-mlx "" -f32)" \
  "$(job qwen3-bf16 "" -f32 -f32-freq-base -f32-rms-eps)" "$(job qwen3-float32 "")" "$(job qwen2-mcq "" -f32)" \
  "$(job llama-mcq "" -f32 -f32-unpermuted)" "$(job llama-bf16 "" -f32)" "$(job mistral-mcq "" -f32)"
echo "llama.cpp embeddings done ($(clients_elapsed))"

# hf_forward NAME CHECK...: the HF forward pass of $WORK/NAME against each --pass/--fail VECS.json[=MIN_COS];
# every checkpoint is checked, failures counted.
failed=()
hf_forward() {
  local name="$1"
  shift
  "$GGUFPY_PYTHON" "$CLIENTS_DIR/hf_forward.py" "$WORK/$name" "$WORK/$name.ids.json" "$@" || failed+=("$name")
}
v() { echo "$WORK/$1.json"; }
# quantized NAME / bf16 NAME: the default file both plainly and with llama.cpp's rounding, the F32 twin.
quantized() { hf_forward "$1" --pass "$(v "$1")=$QUANT_MIN" --kernel-pass "$(v "$1")=$KERNEL_MIN" \
  --pass "$(v "$1-f32")=$F32_MIN" "${@:2}"; }
bf16() { hf_forward "$1" --pass "$(v "$1")=$BF16_MIN" --kernel-pass "$(v "$1")=$KERNEL_MIN" \
  --pass "$(v "$1-f32")=$F32_MIN" "${@:2}"; }
quantized qwen3-mcq
quantized qwen3-mlx
bf16 qwen3-bf16 --fail "$(v qwen3-bf16-f32-freq-base)=$BF16_MIN" --fail "$(v qwen3-bf16-f32-rms-eps)=$F32_MIN"
hf_forward qwen3-float32 --pass "$(v qwen3-float32)=$F32_MIN"
quantized qwen2-mcq
quantized llama-mcq --fail "$(v llama-mcq-f32-unpermuted)=$BF16_MIN"
bf16 llama-bf16
quantized mistral-mcq

# tokenizer.ggml.add_bos_token flipped to true: node-llama-cpp would put a BOS before the HF ids, so
# forward_embed.mjs must refuse the file (the model seen through a link, so its ids go to their own file).
break_file "$WORK/qwen3-bf16-f32.gguf" "$WORK/qwen3-bf16-f32-add-bos.gguf" --set tokenizer.ggml.add_bos_token=1
ln -s qwen3-bf16 "$WORK/qwen3-bf16-add-bos"
if node "$CLIENTS_DIR/forward_embed.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 2 \
  "$WORK/qwen3-bf16-add-bos:$WORK/qwen3-bf16-f32-add-bos.gguf" >"$WORK/add-bos.log" 2>&1 ||
  ! grep -q "BOS/EOS added" "$WORK/add-bos.log"; then
  cat "$WORK/add-bos.log"
  failed+=("qwen3-bf16-f32-add-bos (not refused)")
else
  echo "  qwen3-bf16-f32-add-bos.gguf: refused: $(grep -m1 "BOS/EOS added" "$WORK/add-bos.log" | sed 's/^ *//')"
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAIL test_forward_semantics: ${failed[*]} ($(clients_elapsed))"
  exit 1
fi
echo "PASS test_forward_semantics ($(clients_elapsed))"
