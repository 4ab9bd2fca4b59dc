#!/usr/bin/env bash
# The encoders from quantized inputs: rebox-mkfixture --arch bert | xlm-roberta | nomic-bert writes mcq-v1
# (tables, heads and layer 0 at 4 bits / groups of 64, layer 1 at 3 bits / 32) and MLX (mlx-embeddings'
# layout: every 2-D weight 4-bit / 64, f16 scales and biases, tables included) checkpoints with real
# vocabularies (the tokenizer.json bert_fixture.py / xlmr_fixture.py rebuild from llama.cpp's vocabulary
# GGUFs of bge-small-en-v1.5 and XLM-R). For mcq-v1 bert, mcq-v1 xlm-roberta, MLX xlm-roberta and mcq-v1
# nomic-bert, rebox's default file (Q4_1, the tables F32) must
#  - hold every value the source's format definition gives (source_values.py dequantizes mcq-v1 / MLX in
#    numpy), bit for bit after gguf-py dequantizes it, under the names and with the KVs llama.cpp's converter
#    writes for the same weights: bert and nomic-bert through the converter's own BertModel / NomicBertModel
#    classes (ggufpy_encoder_ref.py), xlm-roberta through ggufpy_xlmr.py (the converter's
#    _xlmroberta_set_vocab, SpecialVocab, TensorNameMap and its position-table slice);
#  - pass rebox verify;
#  - embed in llama.cpp (node-llama-cpp) like the numpy forward passes on the dequantized weights
#    (bert_forward.py, nomic_forward.py): cos >= 0.9999 (measured: 1 - 1e-5 or closer; the Q8_1 rounding
#    of the activations llama.cpp applies to a Q4_1 product stays below the bound at these weights).
# Rerankers from quantized inputs: an mcq-v1 bert reranker (pooler and one-row classifier quantized too) and
# a 4-bit MLX xlm-roberta one (classifier.dense and out_proj quantized), their heads at larger weights
# (mkfixture --reranker) so that the scores spread. Checked like the embedders' files (ggufpy_bert.py /
# ggufpy_xlmr.py --reranker: pooler or classifier.dense -> cls, classifier or out_proj -> cls.output, pooling
# RANK), then node-llama-cpp's scores of the query/document pairs against bert_forward.py's
# sigmoid(head(CLS)) on the dequantized weights (16 corpus lines, 8 pairs): the --outtype f32 twins within
# 1e-3 (measured 7.5e-5 bert, 4.3e-4 xlm-roberta), the default Q4_1 files within 3e-2 (measured 1.2e-2 and
# 1.5e-2: the values are bit-identical, above; llama.cpp rounds the activations to Q8_1 for a Q4_1 product,
# and the head's larger weights carry that rounding into the logit); the reference scores must spread by
# >= 0.05 (measured 0.094 and 0.174; 50 times the twins' bound; at the layers' weight magnitude they spread
# 0.02). rebox verify refuses the bert file against its source with one mcq-v1 min changed.
# Usage: bash tests/clients/test_encoder_formats.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init encoder_formats "${1:-}"
ggufpy_setup "$BUILD"
BGE="$GGUFPY_SRC/models/ggml-vocab-bert-bge.gguf"
ggufpy "$CLIENTS_DIR/bert_fixture.py" "$BGE" "$WORK/bge" --tokenizer-only
(cd "$CLIENTS_DIR" && ggufpy xlmr_fixture.py "$GGUFPY_SRC/models/ggml-vocab-nomic-bert-moe.gguf" "$WORK/xlmr" \
  --tokenizer-only)
mk() {  # mk NAME ARCH FORMAT TOKENIZER_DIR [options]
  "$MKFIXTURE" "$WORK/$1" --preset tiny --arch "$2" --format "$3" --tokenizer-json "$WORK/$4/tokenizer.json" \
    "${@:5}" >/dev/null
  "$REBOX" convert "$WORK/$1" -o "$WORK/$1.gguf" --quiet
  "$REBOX" verify "$WORK/$1" "$WORK/$1.gguf" >/dev/null
}
mk bert-mcq bert mcq bge
mk rerank-mcq bert mcq bge --reranker
mk xlmr-mcq xlm-roberta mcq xlmr
mk xlmr-mlx xlm-roberta mlx xlmr
mk nomic-mcq nomic-bert mcq bge
mk rerank-mlx xlm-roberta mlx xlmr --reranker
for name in rerank-mcq rerank-mlx; do
  "$REBOX" convert "$WORK/$name" -o "$WORK/$name-f32.gguf" --outtype f32 --quiet
  ln -s "$WORK/$name" "$WORK/$name-f32"
done
echo "  8 files converted, rebox verify passes ($(clients_elapsed))"

chain() { echo "bert.py:$1,bert.py:BertModel,base.py:TextModel,base.py:ModelBase"; }
(
  cd "$CLIENTS_DIR"
  ggufpy ggufpy_encoder_ref.py "$GGUFPY_SRC" "$WORK/bert-mcq" "$WORK/bert-mcq.gguf" \
    --chain bert.py:BertModel,base.py:TextModel,base.py:ModelBase --wordpiece "$BGE"
  ggufpy ggufpy_bert.py "$GGUFPY_SRC" "$WORK/rerank-mcq" "$WORK/rerank-mcq.gguf" --reranker
  for name in xlmr-mcq xlmr-mlx; do
    ggufpy ggufpy_xlmr.py "$GGUFPY_SRC" "$WORK/$name" "$WORK/$name.gguf" 2>/dev/null
  done
  ggufpy ggufpy_xlmr.py "$GGUFPY_SRC" "$WORK/rerank-mlx" "$WORK/rerank-mlx.gguf" --reranker 2>/dev/null
  ggufpy ggufpy_encoder_ref.py "$GGUFPY_SRC" "$WORK/nomic-mcq" "$WORK/nomic-mcq.gguf" \
    --chain "$(chain NomicBertModel)" --wordpiece "$BGE"
)

(cd "$CLIENTS_DIR" && node bert_embed.mjs --corpus corpus.txt --lines 16 \
  --embed "$WORK/bert-mcq:$WORK/bert-mcq.gguf" --embed "$WORK/xlmr-mcq:$WORK/xlmr-mcq.gguf" \
  --embed "$WORK/xlmr-mlx:$WORK/xlmr-mlx.gguf" --embed "$WORK/nomic-mcq:$WORK/nomic-mcq.gguf" \
  --rank "$WORK/rerank-mcq:$WORK/rerank-mcq.gguf" --rank "$WORK/rerank-mcq-f32:$WORK/rerank-mcq-f32.gguf" \
  --rank "$WORK/rerank-mlx:$WORK/rerank-mlx.gguf" --rank "$WORK/rerank-mlx-f32:$WORK/rerank-mlx-f32.gguf")
(
  cd "$CLIENTS_DIR"
  for name in bert-mcq xlmr-mcq xlmr-mlx; do
    "$GGUFPY_PYTHON" bert_forward.py "$WORK/$name" --embed "$WORK/$name.ids.json" "$WORK/$name.json"
  done
  "$GGUFPY_PYTHON" nomic_forward.py "$WORK/nomic-mcq" --embed "$WORK/nomic-mcq.ids.json" "$WORK/nomic-mcq.json"
  for name in rerank-mcq rerank-mlx; do
    "$GGUFPY_PYTHON" bert_forward.py "$WORK/$name-f32" --rank "$WORK/$name-f32.rank.json" --min-spread 0.05
    "$GGUFPY_PYTHON" bert_forward.py "$WORK/$name" --rank "$WORK/$name.rank.json" --min-spread 0.05 \
      --max-diff 3e-2
  done
)

# verify reads the source itself: one mcq-v1 min changed after conversion must be reported.
cp -r "$WORK/bert-mcq" "$WORK/bert-edited"
"$GGUFPY_PYTHON" - "$WORK/bert-edited/model.safetensors" <<'PY'
import json, struct, sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
(n,) = struct.unpack_from("<Q", data, 0)
entry = json.loads(data[8:8 + n])["encoder.layer.0.attention.self.query.weight.mins"]
at = 8 + n + entry["data_offsets"][0]
data[at + 1] ^= 0x04  # an exponent bit of the first min
open(path, "wb").write(data)
PY
status=0
"$REBOX" verify "$WORK/bert-edited" "$WORK/bert-mcq.gguf" >"$WORK/edited.verify" 2>&1 || status=$?
[[ $status -ne 0 ]] && grep -q "blk.0.attn_q.weight" "$WORK/edited.verify" ||
  { echo "FAIL: rebox verify did not report the changed min (exit $status)"; cat "$WORK/edited.verify"; exit 1; }
echo "  rebox verify refuses the file against a source with one min changed (exit $status)"
echo "PASS test_encoder_formats ($(clients_elapsed))"
