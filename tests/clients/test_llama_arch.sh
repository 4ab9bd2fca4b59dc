#!/usr/bin/env bash
# The llama family (GGUF arch llama: Llama 2/3.x, Mistral) against llama.cpp's own code, for every input
# format: each fixture variant (GQA with llama3 rope_scaling, tied embeddings without rope scaling,
# q/k/v biases, Mistral with head_dim != hidden/heads) in mcq-v1, MLX and plain BF16 is converted by default
# (Q4_1, or BF16 kept as BF16 for the float checkpoint) and with --outtype f32, then
#  - ggufpy_llama.py: every tensor, read by gguf-py, equals llama.cpp's conversion of the source
#    (LlamaModel.permute from the bundled conversion/llama.py for q/k, generate_extra_tensors for
#    rope_freqs), bit for bit;
#  - llama_rope_semantics.py: HF rotate-half attention on the source equals llama.cpp's interleaved RoPE
#    on the GGUF's permuted q/k;
#  - llama_embed.mjs: llama.cpp (node-llama-cpp) loads both files; embeddings cos >= 0.999 (0.9999 for
#    the BF16 file, which holds the same values as its F32 twin).
# Plus a Mistral-shaped mcq-v1 checkpoint with hidden 96 and head_dim 32, whose layer-0 groups of 64
# run across q_proj/k_proj rows of 96 values: its rows still permute exactly (each 32-value block
# lies in one row and one group), checked the same way.
# Usage: bash tests/clients/test_llama_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init llama_arch "${1:-}"
ggufpy_setup "$BUILD"

variants=(
  "llama-llama3:--arch llama --rope-scaling llama3"
  "llama-tied:--arch llama --tied --rope-scaling none"
  "llama-bias:--arch llama --attention-bias"
  "mistral:--arch mistral"
)
formats=(mcq mlx float)

for variant in "${variants[@]}"; do
  name=${variant%%:*}
  read -r -a flags <<<"${variant#*:}"
  for format in "${formats[@]}"; do
    dir="$WORK/$name-$format"
    "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --embedding-eos --format "$format" "${flags[@]}" \
      --force >/dev/null
    "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
    "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
    default_type=Q4_1 min_cos=0.999
    [[ $format == float ]] && default_type=BF16 min_cos=0.9999
    ggufpy "$CLIENTS_DIR/ggufpy_llama.py" "$BUILD/llama-src" "$dir" "$dir.gguf" --expect-types "F32,$default_type"
    ggufpy "$CLIENTS_DIR/ggufpy_llama.py" "$BUILD/llama-src" "$dir" "$dir-f32.gguf" --expect-types F32
    ggufpy "$CLIENTS_DIR/llama_rope_semantics.py" "$dir" "$dir.gguf"
    embed_job --label "$name-$format" --q4 "$dir.gguf" --f32 "$dir-f32.gguf" \
      --corpus "$CLIENTS_DIR/corpus.txt" --lines 12 \
      --min-cos "$min_cos"
    echo "$name ($format) converted and compared ($(clients_elapsed))"
  done
done
# Groups across rows (mcq-v1 only: MLX groups always lie inside a row).
dir="$WORK/mistral-h96-mcq"
"$MKFIXTURE" "$dir" --preset tiny --tokenizer small --embedding-eos --format mcq --arch mistral \
  --hidden 96 --force >/dev/null
"$REBOX" convert "$dir" -o "$dir.gguf" --quiet
"$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
"$REBOX" verify "$dir" "$dir.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/ggufpy_llama.py" "$BUILD/llama-src" "$dir" "$dir.gguf" --expect-types "F32,Q4_1"
ggufpy "$CLIENTS_DIR/ggufpy_llama.py" "$BUILD/llama-src" "$dir" "$dir-f32.gguf" --expect-types F32
ggufpy "$CLIENTS_DIR/llama_rope_semantics.py" "$dir" "$dir.gguf"
embed_job --label mistral-h96-mcq --q4 "$dir.gguf" --f32 "$dir-f32.gguf" \
  --corpus "$CLIENTS_DIR/corpus.txt" --lines 12 --min-cos 0.999
echo "mistral-h96 (mcq, groups across rows) converted and compared ($(clients_elapsed))"
embed_jobs_run
echo "llama.cpp embeddings checked ($(clients_elapsed))"
echo "PASS test_llama_arch ($(clients_elapsed))"
