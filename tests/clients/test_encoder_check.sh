#!/usr/bin/env bash
# rebox check on encoder files agrees with llama.cpp's loader (node-llama-cpp): a bert CLS embedder and a
# bert reranker (one label: llama.cpp's n_cls_out is the classifier.output_labels count, 1 without it) both
# load in llama.cpp and both pass rebox check; the embedder without bert.attention.layer_norm_epsilon (the
# LayerNorm epsilon the bert-family loader requires, not the RMS one) is refused by both.
# Usage: bash tests/clients/test_encoder_check.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init encoder_check "${1:-}"
ggufpy_setup "$BUILD"
VOCAB="$GGUFPY_SRC/models/ggml-vocab-bert-bge.gguf"
ggufpy "$CLIENTS_DIR/bert_fixture.py" "$VOCAB" "$WORK/cls" --pooling cls --layers 1
ggufpy "$CLIENTS_DIR/bert_fixture.py" "$VOCAB" "$WORK/rerank" --reranker --layers 1
for name in cls rerank; do "$REBOX" convert "$WORK/$name" -o "$WORK/$name.gguf" --quiet; done
"$REBOX" meta --delete bert.attention.layer_norm_epsilon -o "$WORK/noeps.gguf" "$WORK/cls.gguf" >/dev/null
(cd "$CLIENTS_DIR" && node llama_load.mjs "$WORK/cls.gguf" "$WORK/rerank.gguf" "$WORK/noeps.gguf") >"$WORK/load.txt"
cat "$WORK/load.txt"
for name in cls rerank noeps; do
  status=0
  "$REBOX" check "$WORK/$name.gguf" >"$WORK/$name.check" 2>&1 || status=$?
  if grep -q "^LOADED .*/$name.gguf" "$WORK/load.txt"; then
    [[ $status -eq 0 ]] || { echo "FAIL: llama.cpp loads $name.gguf, rebox check refuses it:"; cat "$WORK/$name.check"; exit 1; }
  else
    [[ $status -ne 0 ]] || { echo "FAIL: llama.cpp refuses $name.gguf, rebox check passes it"; exit 1; }
  fi
  echo "  $name.gguf: rebox check $( [[ $status -eq 0 ]] && echo passes || echo refuses ) it, as llama.cpp"
done
grep -q "^REFUSED .*/noeps.gguf" "$WORK/load.txt" || { echo "FAIL: llama.cpp loads a bert file without layer_norm_epsilon"; exit 1; }
echo "PASS test_encoder_check ($(clients_elapsed))"
