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
# An mcq-v1 bert reranker (its pooler and one-row classifier quantized too) is checked like the embedders'
# files (ggufpy_bert.py --reranker: pooler -> cls, classifier -> cls.output; not ranked here: at these small
# weights its logits are near 0 and test_bert_arch ranks the float one), and rebox verify refuses the bert
# file against its source with one mcq-v1 min changed.
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
echo "  5 files converted, rebox verify passes ($(clients_elapsed))"

chain() { echo "bert.py:$1,bert.py:BertModel,base.py:TextModel,base.py:ModelBase"; }
(
  cd "$CLIENTS_DIR"
  ggufpy ggufpy_encoder_ref.py "$GGUFPY_SRC" "$WORK/bert-mcq" "$WORK/bert-mcq.gguf" \
    --chain bert.py:BertModel,base.py:TextModel,base.py:ModelBase --wordpiece "$BGE"
  ggufpy ggufpy_bert.py "$GGUFPY_SRC" "$WORK/rerank-mcq" "$WORK/rerank-mcq.gguf" --reranker
  for name in xlmr-mcq xlmr-mlx; do
    ggufpy ggufpy_xlmr.py "$GGUFPY_SRC" "$WORK/$name" "$WORK/$name.gguf" 2>/dev/null
  done
  ggufpy ggufpy_encoder_ref.py "$GGUFPY_SRC" "$WORK/nomic-mcq" "$WORK/nomic-mcq.gguf" \
    --chain "$(chain NomicBertModel)" --wordpiece "$BGE"
)

(cd "$CLIENTS_DIR" && node bert_embed.mjs --corpus corpus.txt --lines 8 \
  --embed "$WORK/bert-mcq:$WORK/bert-mcq.gguf" --embed "$WORK/xlmr-mcq:$WORK/xlmr-mcq.gguf" \
  --embed "$WORK/xlmr-mlx:$WORK/xlmr-mlx.gguf" --embed "$WORK/nomic-mcq:$WORK/nomic-mcq.gguf")
(
  cd "$CLIENTS_DIR"
  for name in bert-mcq xlmr-mcq xlmr-mlx; do
    "$GGUFPY_PYTHON" bert_forward.py "$WORK/$name" --embed "$WORK/$name.ids.json" "$WORK/$name.json"
  done
  "$GGUFPY_PYTHON" nomic_forward.py "$WORK/nomic-mcq" --embed "$WORK/nomic-mcq.ids.json" "$WORK/nomic-mcq.json"
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
