#!/usr/bin/env bash
# The mixture-of-experts architectures (qwen3_moe, qwen2_moe, mixtral) against llama.cpp's own code,
# for every input format: each tiny MoE fixture (4 experts of width 64, 2 used; MLX with its
# pre-stacked switch_mlp tensors and the router at 8 bits; mcq-v1 and plain BF16 with one tensor per
# expert) is converted by default (Q4_1, or BF16 kept for the float checkpoint) and with
# --outtype f32, then
#  - rebox verify: every tensor bit-identical after verify's own stacking;
#  - ggufpy_moe.py: every tensor, read by gguf-py, equals what llama.cpp's converter code from the
#    bundle (Qwen2MoeModel / LlamaModel.modify_tensors: torch.stack of the experts, Mixtral's Q/K
#    permute, TensorNameMap names) yields for the source values read in numpy, bit for bit, and the
#    {arch}.* keys equal what its set_gguf_parameters writes;
#  - llama_embed.mjs: llama.cpp (node-llama-cpp) loads both files and embeds; cosine of the default
#    file against its F32 twin >= 0.999 (0.9999 for BF16, which holds the same values).
# Usage: bash tests/clients/test_moe_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init moe_arch "${1:-}"
ggufpy_setup "$BUILD"

for arch in qwen3_moe qwen2_moe mixtral; do
  for format in mcq mlx float; do
    name="$arch-$format"
    dir="$WORK/$name"
    "$MKFIXTURE" "$dir" --preset tiny --arch "$arch" --tokenizer small --embedding-eos \
      --format "$format" --force >/dev/null
    "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
    "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
    "$REBOX" verify "$dir" "$dir.gguf" >/dev/null
    "$REBOX" verify "$dir" "$dir-f32.gguf" >/dev/null
    default_type=Q4_1 min_cos=0.999
    [[ $format == float ]] && default_type=BF16 min_cos=0.9999
    ggufpy "$CLIENTS_DIR/ggufpy_moe.py" "$BUILD/llama-src" "$dir" "$dir.gguf" --expect-types "F32,$default_type"
    ggufpy "$CLIENTS_DIR/ggufpy_moe.py" "$BUILD/llama-src" "$dir" "$dir-f32.gguf" --expect-types F32
    embed_job --label "$name" --q4 "$dir.gguf" --f32 "$dir-f32.gguf" \
      --corpus "$CLIENTS_DIR/corpus.txt" --lines 8 --min-cos "$min_cos" --kind "$default_type"
    echo "$name converted and compared ($(clients_elapsed))"
  done
done
embed_jobs_run
echo "llama.cpp embeddings checked ($(clients_elapsed))"
echo "PASS test_moe_arch ($(clients_elapsed))"
