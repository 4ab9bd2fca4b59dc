#!/usr/bin/env bash
# The llama family (GGUF arch llama: Llama 2/3.x, Mistral) against llama.cpp's own code, for every input
# format: each fixture variant (GQA with llama3 rope_scaling, tied embeddings without rope scaling,
# q/k/v biases, Mistral with head_dim != hidden/heads) in mcq-v1 and MLX is converted by default and with
# --outtype f32, then
#  - ggufpy_llama.py: every tensor, read by gguf-py, equals llama.cpp's conversion of the source
#    (LlamaModel.permute from the bundled conversion/llama.py for q/k, generate_extra_tensors for
#    rope_freqs), bit for bit;
#  - llama_rope_semantics.py: HF rotate-half attention on the source equals llama.cpp's interleaved RoPE
#    on the GGUF's permuted q/k;
#  - llama_embed.mjs: llama.cpp (node-llama-cpp) loads both files; embeddings cos >= 0.999.
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
formats=(mcq mlx)

for variant in "${variants[@]}"; do
  name=${variant%%:*}
  read -r -a flags <<<"${variant#*:}"
  for format in "${formats[@]}"; do
    dir="$WORK/$name-$format"
    "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --embedding-eos --format "$format" "${flags[@]}" \
      --force >/dev/null
    "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
    "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
    for file in "$dir.gguf" "$dir-f32.gguf"; do
      ggufpy "$CLIENTS_DIR/ggufpy_llama.py" "$BUILD/llama-src" "$dir" "$file"
    done
    ggufpy "$CLIENTS_DIR/llama_rope_semantics.py" "$dir" "$dir.gguf"
    node "$CLIENTS_DIR/llama_embed.mjs" --label "$name-$format" --q4 "$dir.gguf" --f32 "$dir-f32.gguf" \
      --corpus "$CLIENTS_DIR/corpus.txt" --lines 12
    echo "$name ($format) checked ($(clients_elapsed))"
  done
done
echo "PASS test_llama_arch ($(clients_elapsed))"
