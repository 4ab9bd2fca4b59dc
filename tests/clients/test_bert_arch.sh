#!/usr/bin/env bash
# bert (BertModel embedders, BertForSequenceClassification rerankers) against llama.cpp's own code and a
# Hugging Face forward pass. bert_fixture.py writes tiny float32 checkpoints with bge's real WordPiece
# vocabulary (recovered from llama.cpp's models/ggml-vocab-bert-bge.gguf): a CLS-pooled and a MEAN-pooled
# embedder, a reranker and a 4-bit MLX embedder (mlx-embeddings layout). For each, rebox's file must
#  - ggufpy_bert.py: hold the converter's tokens and token types (that GGUF), gguf-py SpecialVocab's special
#    ids and flags, the converter's bert.* keys with config.json's values, and every tensor bit-identical
#    under gguf-py's TensorNameMap name (the reranker: pooler -> cls, classifier -> cls.output);
#  - bert_embed.mjs + bert_forward.py: load in llama.cpp (node-llama-cpp), tokenize the corpus as the HF
#    tokenizer (@lenml/tokenizers) does except the known llama.cpp WordPiece divergences (Hangul, Mc marks),
#    embed like the numpy HF forward pass with sentence-transformers pooling (cos >= 0.9999), and rank like
#    HF's classifier(tanh(pooler(CLS))) (sigmoid scores within 1e-3).
# Then the bad inputs: each one line, non-zero exit, no output file.
# Usage: bash tests/clients/test_bert_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init bert_arch "${1:-}"
ggufpy_setup "$BUILD"
VOCAB="$GGUFPY_SRC/models/ggml-vocab-bert-bge.gguf"
fixture() { ggufpy "$CLIENTS_DIR/bert_fixture.py" "$VOCAB" "$WORK/$1" "${@:2}"; }

fixture cls --pooling cls
fixture mean --pooling mean
fixture rerank --reranker
for name in cls mean rerank; do
  "$REBOX" convert "$WORK/$name" -o "$WORK/$name.gguf" --quiet
  flag=()
  [[ $name == rerank ]] && flag=(--reranker)
  (cd "$CLIENTS_DIR" && ggufpy ggufpy_bert.py "$GGUFPY_SRC" "$WORK/$name" "$WORK/$name.gguf" "${flag[@]}")
done
(cd "$CLIENTS_DIR" && node bert_embed.mjs --corpus corpus.txt --lines 24 \
  --embed "$WORK/cls:$WORK/cls.gguf" --embed "$WORK/mean:$WORK/mean.gguf" --rank "$WORK/rerank:$WORK/rerank.gguf")
for name in cls mean; do
  (cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" bert_forward.py "$WORK/$name" --embed "$WORK/$name.ids.json" "$WORK/$name.json")
done
# MLX (mlx-embeddings' 4-bit layout, tables quantized too): Q4_1 by default, the tables exact F32; the
# --outtype f32 twin holds every dequantized value. Against the HF forward pass on the dequantized weights:
# F32 >= 0.9999, Q4_1 >= 0.999 (llama.cpp rounds the activations to Q8_1 for a Q4_1 product).
fixture mlx --pooling cls --mlx
"$REBOX" convert "$WORK/mlx" -o "$WORK/mlx.gguf" --quiet
"$REBOX" convert "$WORK/mlx" -o "$WORK/mlx-f32.gguf" --outtype f32 --quiet
cp -r "$WORK/mlx" "$WORK/mlx-f32"
for name in mlx mlx-f32; do
  (cd "$CLIENTS_DIR" && ggufpy ggufpy_bert.py "$GGUFPY_SRC" "$WORK/mlx" "$WORK/$name.gguf")
done
(cd "$CLIENTS_DIR" && node bert_embed.mjs --corpus corpus.txt --lines 24 \
  --embed "$WORK/mlx:$WORK/mlx.gguf" --embed "$WORK/mlx-f32:$WORK/mlx-f32.gguf")
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" bert_forward.py "$WORK/mlx" --embed "$WORK/mlx.ids.json" "$WORK/mlx.json" \
  --min-cos 0.999)
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" bert_forward.py "$WORK/mlx-f32" --embed "$WORK/mlx-f32.ids.json" \
  "$WORK/mlx-f32.json")
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" bert_forward.py "$WORK/rerank" --rank "$WORK/rerank.rank.json")
echo "bert files checked ($(clients_elapsed))"

# refuse NAME PATTERN: converting $WORK/NAME fails with one BLOCKER / error line matching PATTERN, no file.
refuse() {
  local name="$1" pattern="$2" out status=0
  out=$("$REBOX" convert "$WORK/$name" -o "$WORK/$name.gguf" 2>&1) || status=$?
  [[ $status -ne 0 ]] || { echo "FAIL: $name: convert succeeded"; exit 1; }
  [[ ! -e "$WORK/$name.gguf" ]] || { echo "FAIL: $name: an output file was written"; exit 1; }
  grep -q -- "$pattern" <<<"$out" || { echo "FAIL: $name: no line matching '$pattern' in: $out"; exit 1; }
  echo "  $name refused (exit $status): $(grep -m1 -- "$pattern" <<<"$out" | cut -c1-160)"
}
edit_config() { "$GGUFPY_PYTHON" - "$WORK/$1/config.json" "$2" <<'PY'
import json, sys
path, change = sys.argv[1], json.loads(sys.argv[2])
cfg = json.load(open(path)); cfg.update(change); json.dump(cfg, open(path, "w"))
PY
}
fixture nopool --pooling none
refuse nopool "no pooling type"
fixture heads --pooling cls
edit_config heads '{"num_attention_heads": 5}'
refuse heads "not a multiple of num_attention_heads"
fixture positions --pooling cls
edit_config positions '{"max_position_embeddings": 256}'
refuse positions "position_embd"
fixture vocab --pooling cls
edit_config vocab '{"vocab_size": 30000}'
refuse vocab "beyond the vocabulary"
fixture badpool --pooling cls
echo '{"pooling_mode_max_tokens": true}' >"$WORK/badpool/1_Pooling/config.json"
refuse badpool "no supported pooling mode"
echo "PASS test_bert_arch ($(clients_elapsed))"
