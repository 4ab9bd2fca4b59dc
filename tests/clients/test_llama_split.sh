#!/usr/bin/env bash
# Split sets that llama.cpp loads: a converted model split by `rebox split` into 3 shards and one
# written directly by `rebox convert --split-max-size`; llama.cpp (node-llama-cpp) loads each from its
# first shard and embeds bit-identically to the unsplit file; every shard opens in @huggingface/gguf
# and in gguf-py with the split keys typed as llama.cpp reads them.
# Usage: bash tests/clients/test_llama_split.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init llama_split "${1:-}"
ggufpy_setup "$BUILD"

"$MKFIXTURE" "$WORK/tiny" --preset tiny --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force
"$REBOX" convert "$WORK/tiny" -o "$WORK/whole.gguf" --quiet
"$REBOX" split "$WORK/whole.gguf" "$WORK/part" --split-max-tensors 10
node "$CLIENTS_DIR/llama_split.mjs" --whole "$WORK/whole.gguf" --first "$WORK/part-00001-of-00003.gguf" \
  --shards 3 --corpus "$CLIENTS_DIR/corpus.txt"
ggufpy "$CLIENTS_DIR/ggufpy_shards.py" "$WORK/part-00001-of-00003.gguf" 3

# Written directly by convert: the token embedding (~5.8 MB) alone, the rest in shards of <= 40 KB.
"$REBOX" convert "$WORK/tiny" -o "$WORK/direct.gguf" --quiet --split-max-size 40000
first=$(ls "$WORK"/direct-00001-of-*.gguf)
n=$(echo "$first" | sed -E 's/.*-of-0*([0-9]+)\.gguf/\1/')
[[ "$n" -ge 3 ]] || { echo "FAIL: convert --split-max-size wrote $n shards (expected >= 3)"; exit 1; }
node "$CLIENTS_DIR/llama_split.mjs" --whole "$WORK/whole.gguf" --first "$first" --shards "$n" \
  --corpus "$CLIENTS_DIR/corpus.txt" --lines 5
ggufpy "$CLIENTS_DIR/ggufpy_shards.py" "$first" "$n"
echo "PASS test_llama_split ($(clients_elapsed))"
