#!/usr/bin/env bash
# A checkpoint with only a SentencePiece tokenizer.model (no tokenizer.json): rebox reads it with
# libsentencepiece into llama.cpp's SPM vocabulary, and llama.cpp (node-llama-cpp) must tokenize every
# corpus line exactly like Google's SentencePiece (Debian python3-sentencepiece), which also trained
# the small BPE model (byte fallback; non-Latin lines go through the byte pieces).
# Usage: bash tests/clients/test_llama_tokenize_spm_model.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
clients_init llama_tokenize_spm_model "${1:-}"
PY=/usr/bin/python3 # Debian's python, which sees python3-sentencepiece
"$PY" -c "import sentencepiece" 2>/dev/null ||
  { echo "FAIL: python3-sentencepiece missing; run: scripts/setup.sh --with-test-clients" >&2; exit 1; }

"$MKFIXTURE" "$WORK/model" --preset tiny --tokenizer none --force
"$PY" "$CLIENTS_DIR/spm_model_reference.py" "$WORK/model" "$CLIENTS_DIR/corpus.txt" "$WORK/reference.json"
"$REBOX" convert "$WORK/model" -o "$WORK/model.gguf" --quiet
node "$CLIENTS_DIR/spm_model_tokenize.mjs" "$WORK/model.gguf" "$WORK/reference.json"
echo "PASS test_llama_tokenize_spm_model ($(clients_elapsed))"
