#!/usr/bin/env bash
# llama.cpp (node-llama-cpp, CPU) embeds the corpus with two rebox conversions of the same checkpoint,
# default Q4_1 and --outtype f32: vectors finite and non-zero, cosine(Q4_1, F32) >= 0.999 per line,
# LAST pooling in effect (pooling_type 3, EOS appended, last-token state, not MEAN). Runs the tiny
# real-tokenizer fixture on the whole corpus and the Qwen3-0.6B-shape fixture on the first
# REBOX_Q06B_EMBED_LINES lines (default 10; 0 skips it); MLX affine fixtures (bf16 scales, negative
# scales in half or all groups) on the first 20 lines; a qwen2 tiny fixture on the first 10; a plain
# BF16 checkpoint (BF16 file vs its F32 twin, cos >= 0.9999) on the first 20; its convert --quantize
# q4_k_m file against the F32 file (cos >= 0.985) on the first 20.
# Usage: bash tests/clients/test_llama_embed.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
clients_init llama_embed "${1:-}"
Q06B_LINES="${REBOX_Q06B_EMBED_LINES:-10}"

"$MKFIXTURE" "$WORK/tiny" --preset tiny --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force
"$REBOX" convert "$WORK/tiny" -o "$WORK/tiny.gguf" --quiet
"$REBOX" convert "$WORK/tiny" -o "$WORK/tiny-f32.gguf" --outtype f32 --quiet
embed_job --label tiny --q4 "$WORK/tiny.gguf" --f32 "$WORK/tiny-f32.gguf" \
  --corpus "$CLIENTS_DIR/corpus.txt" --pooling-checks
echo "tiny fixture converted ($(clients_elapsed))"

# An MLX affine checkpoint (mixed 3/4-bit, bf16 scales, negative scales in half the groups, and one
# with every scale negative) runs the same way.
for negative in half all; do
  "$MKFIXTURE" "$WORK/mlx-$negative" --format mlx --recipe mixed_3_4 --scale-dtype bf16 --negative-scales "$negative" \
    --preset tiny --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force
  "$REBOX" convert "$WORK/mlx-$negative" -o "$WORK/mlx-$negative.gguf" --quiet
  "$REBOX" convert "$WORK/mlx-$negative" -o "$WORK/mlx-$negative-f32.gguf" --outtype f32 --quiet
  embed_job --label "mlx-negative-scales-$negative" --q4 "$WORK/mlx-$negative.gguf" \
    --f32 "$WORK/mlx-$negative-f32.gguf" --corpus "$CLIENTS_DIR/corpus.txt" --lines 20
done
echo "MLX fixtures converted ($(clients_elapsed))"

# A qwen2 checkpoint (Qwen2ForCausalLM: q/k/v biases, no q/k norms) loads in llama.cpp's qwen2 graph.
"$MKFIXTURE" "$WORK/qwen2" --arch qwen2 --preset tiny --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER" \
  --embedding-eos --force
"$REBOX" convert "$WORK/qwen2" -o "$WORK/qwen2.gguf" --quiet
"$REBOX" convert "$WORK/qwen2" -o "$WORK/qwen2-f32.gguf" --outtype f32 --quiet
embed_job --label qwen2 --q4 "$WORK/qwen2.gguf" --f32 "$WORK/qwen2-f32.gguf" \
  --corpus "$CLIENTS_DIR/corpus.txt" --lines 10
echo "qwen2 fixture converted ($(clients_elapsed))"

# A plain BF16 checkpoint (no quantization) keeps its BF16 tensors; llama.cpp's BF16 kernels and
# the exactly widened --outtype f32 twin must agree to cos >= 0.9999.
"$MKFIXTURE" "$WORK/bf16" --format float --dtype bf16 --preset tiny --tokenizer qwen3 \
  --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force
"$REBOX" convert "$WORK/bf16" -o "$WORK/bf16.gguf" --quiet
"$REBOX" convert "$WORK/bf16" -o "$WORK/bf16-f32.gguf" --outtype f32 --quiet
embed_job --label float-bf16 --kind BF16 --q4 "$WORK/bf16.gguf" \
  --f32 "$WORK/bf16-f32.gguf" --corpus "$CLIENTS_DIR/corpus.txt" --lines 20 --min-cos 0.9999
echo "BF16 float fixture converted ($(clients_elapsed))"

# convert --quantize q4_k_m (256-wide rows, so Q4_K/Q6_K blocks themselves) loads and embeds close
# to the exact F32 file of the same checkpoint: a sanity bound, not the proof (that is
# test_convert_quantize's byte identity with llama-quantize). On this random-weight fixture the
# cosines measured 0.9899 min / 0.9933 median over the 20 lines; the bound is 0.985.
"$MKFIXTURE" "$WORK/wide" --format float --dtype bf16 --preset tiny --hidden 256 --tokenizer qwen3 \
  --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force
"$REBOX" convert "$WORK/wide" -o "$WORK/wide-q4_k_m.gguf" --quantize q4_k_m --quiet
"$REBOX" convert "$WORK/wide" -o "$WORK/wide-f32.gguf" --outtype f32 --quiet
embed_job --label quantize-q4_k_m --kind Q4_K_M --q4 "$WORK/wide-q4_k_m.gguf" \
  --f32 "$WORK/wide-f32.gguf" --corpus "$CLIENTS_DIR/corpus.txt" --lines 20 --min-cos 0.985
echo "Q4_K_M fixture converted ($(clients_elapsed))"

if [[ "$Q06B_LINES" -gt 0 ]]; then
  start=$SECONDS
  clients_q06b f32
  echo "0.6B-shape fixture ready ($((SECONDS - start)) s, cached after the first run)"
  embed_job --label qwen3-0.6b-shape --q4 "$Q06B_GGUF" --f32 "$Q06B_F32" \
    --corpus "$CLIENTS_DIR/corpus.txt" --lines "$Q06B_LINES"
fi
# Every pair above in one llama.cpp process.
embed_jobs_run
echo "PASS test_llama_embed ($(clients_elapsed))"
