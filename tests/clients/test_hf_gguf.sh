#!/usr/bin/env bash
# Outside check of the GGUF header rebox writes: the independent @huggingface/gguf parser must read
# the same KVs (key, GGUF type, value, full arrays), tensor infos (name, ne, type, offset) and data
# offset from a converted tiny fixture (real Qwen3 vocab) as `rebox inspect --json` reports.
# Usage: bash tests/clients/test_hf_gguf.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
clients_init hf_gguf "${1:-}"

"$MKFIXTURE" "$WORK/tiny" --preset tiny --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force
"$REBOX" convert "$WORK/tiny" -o "$WORK/tiny.gguf" --quiet
"$REBOX" inspect "$WORK/tiny.gguf" --json >"$WORK/inspect.json"
echo "checking $WORK/tiny.gguf ($(stat -c %s "$WORK/tiny.gguf") bytes)"
node "$CLIENTS_DIR/hf_gguf_compare.mjs" "$WORK/tiny.gguf" "$WORK/inspect.json"
echo "PASS test_hf_gguf ($(clients_elapsed))"
