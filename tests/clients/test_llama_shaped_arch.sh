#!/usr/bin/env bash
# The llama-shaped families (seed_oss; olmo2 and olmo3, GGUF olmo2, Olmo 3 with its sliding window, and in
# BF16 with Olmo-3-7B's yarn rope_scaling;
# smollm3: llama's q/k permutation, every 4th layer without rope; mistral3: a Mistral3ForConditionalGeneration with a
# ministral3 text model, its yarn block and a vision tower left out; apertus: q/k norms, xIELU parameters as xielu.* arrays)
# against llama.cpp's own code, for every input format: each
# family's tiny fixture in mcq-v1, MLX, plain BF16, GPTQ, AWQ and compressed-tensors int4 (4-bit) is
# converted by default (Q4_1, BF16 kept for the float checkpoint, Q4_0 / Q4_1 / Q5_0 for GPTQ / AWQ,
# Q4_0 for compressed-tensors) and with --outtype f32, then
#  - rebox verify passes on both files;
#  - ggufpy_llama_shaped.py (one process for every file): every tensor (name, type, ne, values bit for
#    bit) and every {arch}.* KV equal what the bundle's converter class chain (SeedOssModel / Olmo2Model / SmolLM3Model /
#    Mistral3Model.Ministral3Model / ApertusModel -> LlamaModel ->
#    TextModel -> ModelBase) writes for the same dequantized checkpoint;
#  - llama_embed_pairs.mjs (one llama.cpp process): llama.cpp loads every file, and each file's
#    embeddings agree with its F32 twin's (cos >= 0.999).
# Usage: bash tests/clients/test_llama_shaped_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init llama_shaped_arch "${1:-}"
ggufpy_setup "$BUILD"

families=(seed_oss olmo2 olmo3 smollm3 mistral3 apertus)
formats=(mcq mlx float gptq awq compressed-tensors)
pairs=()
for family in "${families[@]}"; do
  checks=()
  for format in "${formats[@]}"; do
    dir="$WORK/$family-$format"
    "$MKFIXTURE" "$dir" --preset tiny --arch "$family" --tokenizer small --embedding-eos --format "$format" \
      --force >/dev/null
    "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
    "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
    "$REBOX" verify "$dir" "$dir.gguf" >/dev/null
    "$REBOX" verify "$dir" "$dir-f32.gguf" >/dev/null
    default_types=F32,Q4_1
    [[ $format == float ]] && default_types=F32,BF16
    # GPTQ (symmetric: Q4_0) and AWQ (Q4_0 / Q4_1 / Q5_0 as its groups allow); F16 embedding / head
    [[ $format == gptq ]] && default_types=F32,F16,Q4_0
    [[ $format == awq ]] && default_types=F32,F16,Q4_0,Q4_1,Q5_0
    # compressed-tensors int4 (llm-compressor's W4A16: symmetric groups of 32, Q4_0); BF16 embedding / head
    [[ $format == compressed-tensors ]] && default_types=F32,BF16,Q4_0
    checks+=("$dir" "$dir.gguf" "$default_types" "$dir" "$dir-f32.gguf" F32)
    pairs+=("$family-$format:$dir.gguf:$dir-f32.gguf")
  done
  if [[ $family == olmo3 ]]; then # Olmo-3-7B's yarn rope_scaling (attention_factor and the betas), BF16
    dir="$WORK/olmo3-yarn"
    "$MKFIXTURE" "$dir" --preset tiny --arch olmo3 --tokenizer small --embedding-eos --format float \
      --rope-scaling yarn --force >/dev/null
    "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
    "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
    "$REBOX" verify "$dir" "$dir.gguf" >/dev/null
    checks+=("$dir" "$dir.gguf" F32,BF16 "$dir" "$dir-f32.gguf" F32)
    pairs+=("olmo3-yarn:$dir.gguf:$dir-f32.gguf")
  fi
  ggufpy "$CLIENTS_DIR/ggufpy_llama_shaped.py" "$family" "$BUILD/llama-src" "${checks[@]}"
  echo "$family converted, verified and compared with llama.cpp's converter ($(clients_elapsed))"
done
# Bad input, refused before anything is written: exit 2, one BLOCKER line naming what is wrong.
refuse() { # dir expected-text
  set +e
  "$REBOX" convert "$1" -o "$1.gguf" --quiet 2>"$1.err" >/dev/null
  local rc=$?
  set -e
  [[ $rc -eq 2 && ! -e "$1.gguf" && $(grep -c '^BLOCKER' "$1.err") -eq 1 ]] && grep -q -- "$2" "$1.err" ||
    { echo "FAIL: $1: exit $rc (expected 2, one BLOCKER line with '$2', no file)"; cat "$1.err"; exit 1; }
  echo "  $(basename "$1"): refused: $(grep '^BLOCKER' "$1.err")"
}
# Mistral's own format (params.json + consolidated.safetensors, no config.json).
bad="$WORK/mistral3-mistral-format"
cp -r "$WORK/mistral3-float" "$bad"
mv "$bad/model.safetensors" "$bad/consolidated.safetensors"
rm "$bad/config.json"
echo '{"dim": 64, "n_layers": 2, "head_dim": 32}' >"$bad/params.json"
refuse "$bad" "params.json: a Mistral-format checkpoint.*config.json"
# A ministral3 yarn block without original_max_position_embeddings.
bad="$WORK/mistral3-no-original-context"
cp -r "$WORK/mistral3-float" "$bad"
python3 -c 'import json,sys; p=sys.argv[1]; c=json.load(open(p)); del c["text_config"]["rope_parameters"]["original_max_position_embeddings"]; json.dump(c, open(p, "w"))' "$bad/config.json"
refuse "$bad" "original_max_position_embeddings"
# An Apertus whose layer 1 lacks its xIELU beta (renamed in place to a buffer every converter drops).
bad="$WORK/apertus-no-beta"
cp -r "$WORK/apertus-float" "$bad"
python3 -c 'import sys; p=sys.argv[1]; b=open(p,"rb").read(); a=b"\"model.layers.1.mlp.act_fn.beta\""; n=b"\"xxxxxxxxxx.rotary_emb.inv_freq\""; assert len(a)==len(n) and b.count(a)==1; open(p,"wb").write(b.replace(a,n))' "$bad/model.safetensors"
refuse "$bad" "xielu.beta: no layers.N.mlp.act_fn.beta for layer(s) 1"
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 6 --min-cos 0.999 "${pairs[@]}"
echo "PASS test_llama_shaped_arch ($(clients_elapsed))"
