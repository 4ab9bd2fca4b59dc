#!/usr/bin/env bash
# gguf-py (llama.cpp's Python GGUFWriter) writes GGUF files with every KV type and F32/F16/Q8_0/Q4_1
# tensors; `rebox inspect --json` must report the same counts, KVs and tensor infos as gguf-py's
# own GGUFReader (so our reader is checked against files we did not write).
# Usage: bash tests/clients/test_ggufpy_write.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init ggufpy_write "${1:-}"
ggufpy_setup "$BUILD"

ggufpy "$CLIENTS_DIR/ggufpy_write.py" "$REBOX" "$WORK"
echo "PASS test_ggufpy_write ($(clients_elapsed))"
