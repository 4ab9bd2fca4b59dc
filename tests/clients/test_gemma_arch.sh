#!/usr/bin/env bash
# gemma, gemma2 and gemma3 (text; gemma3 also as a multimodal Gemma3ForConditionalGeneration checkpoint)
# against llama.cpp's own code, for every input format: each fixture in mcq-v1, MLX (mixed 3/4-bit recipe)
# and plain float (BF16, plus an F16 gemma3 where the converter's fp16 add rounds) is converted by default
# and with --outtype f32, then
#  - rebox verify: its own reading of the source and its own +1 / vocabulary cut agree with the file;
#  - ggufpy_gemma.py: every tensor, read by gguf-py, equals llama.cpp's conversion of the source (the
#    bundle's filter_tensors and Gemma*Model.modify_tensors run on the source values), bit for bit;
#  - llama_embed.mjs: llama.cpp (node-llama-cpp) loads both files; embeddings cos >= 0.999 (0.9999 for a
#    float file, which holds the same values as its F32 twin).
# Usage: bash tests/clients/test_gemma_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init gemma_arch "${1:-}"
ggufpy_setup "$BUILD"

variants=(
  "gemma:mcq:--arch gemma"
  "gemma:mlx:--arch gemma --recipe mixed_3_4"
  "gemma:float:--arch gemma"
  "gemma2:mcq:--arch gemma2"
  "gemma2:mlx:--arch gemma2 --recipe mixed_3_4"
  "gemma2:float:--arch gemma2"
  "gemma3:mcq:--arch gemma3"
  "gemma3:mlx:--arch gemma3 --recipe mixed_3_4"
  "gemma3:float:--arch gemma3"
  "gemma3-f16:float:--arch gemma3 --dtype f16"
  "gemma3-mm:mcq:--arch gemma3 --multimodal"
  "gemma3-mm:mlx:--arch gemma3 --multimodal --recipe mixed_3_4"
)

for variant in "${variants[@]}"; do
  name=${variant%%:*}
  rest=${variant#*:}
  format=${rest%%:*}
  read -r -a flags <<<"${rest#*:}"
  dir="$WORK/$name-$format"
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --embedding-eos --format "$format" "${flags[@]}" \
    --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
  "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
  "$REBOX" verify "$dir" "$dir.gguf" >/dev/null
  "$REBOX" verify "$dir" "$dir-f32.gguf" >/dev/null
  default_types=F32,Q4_1 min_cos=0.999
  if [[ $format == float ]]; then
    default_types=F32,BF16 min_cos=0.9999
    [[ $name == *f16 ]] && default_types=F32,F16
  fi
  ggufpy "$CLIENTS_DIR/ggufpy_gemma.py" "$BUILD/llama-src" "$dir" "$dir.gguf" --expect-types "$default_types"
  ggufpy "$CLIENTS_DIR/ggufpy_gemma.py" "$BUILD/llama-src" "$dir" "$dir-f32.gguf" --expect-types F32
  embed_job --label "$name-$format" --q4 "$dir.gguf" --f32 "$dir-f32.gguf" \
    --corpus "$CLIENTS_DIR/corpus.txt" --lines 12 --min-cos "$min_cos"
  echo "$name ($format) converted and compared ($(clients_elapsed))"
done
embed_jobs_run
echo "llama.cpp embeddings checked ($(clients_elapsed))"
echo "PASS test_gemma_arch ($(clients_elapsed))"
