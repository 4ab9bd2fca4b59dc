#!/usr/bin/env bash
# xlm-roberta (XLMRobertaModel embedders such as bge-m3 / multilingual-e5, XLMRobertaForSequenceClassification
# rerankers such as bge-reranker-v2-m3) and BertModel checkpoints with the XLM-R tokenizer (multilingual-e5-small,
# paraphrase-multilingual-MiniLM) against llama.cpp's own code and a Hugging Face forward pass. xlmr_fixture.py
# writes tiny float32 checkpoints with XLM-R's real SentencePiece Unigram vocabulary (recovered from llama.cpp's
# models/ggml-vocab-nomic-bert-moe.gguf, rebuilt as transformers' tokenizer.json): a CLS-pooled XLMRobertaModel,
# a reranker, a MEAN-pooled BertModel + XLM-R tokenizer (Precompiled inside a Sequence normalizer, a
# RobertaProcessing post-processor) and an XLMRobertaModel whose vocabulary comes from a sentencepiece.bpe.model
# (trained here; the converter prefers it to tokenizer.json). For each, rebox's file must
#  - ggufpy_xlmr.py: hold every tokenizer.* KV the bundle's BertModel._xlmroberta_set_vocab + gguf-py
#    SpecialVocab write for the same directory (run from the bundle's source; python3-protobuf for its
#    sentencepiece branch), the bert.* keys (context_length
#    after _xlmroberta_tokenizer_init's position offset), and every tensor bit-identical under gguf-py's name
#    (position_embd = the source table without its first pad_token_id + 1 rows);
#  - bert_embed.mjs + bert_forward.py: load in llama.cpp (node-llama-cpp), tokenize the corpus as the HF
#    tokenizer (@lenml/tokenizers on the tokenizer.json) does, embed the reference ids (they start with <s>:
#    node-llama-cpp adds none for a Unigram vocabulary) like the numpy HF forward pass (positions from
#    pad_token_id + 1) with sentence-transformers pooling (cos >= 0.9999; MLX Q4_1 >= 0.999), and rank like
#    HF's out_proj(tanh(dense(<s>))) (sigmoid scores within 1e-3).
# Then the bad inputs: each one line, non-zero exit, no output file.
# Usage: bash tests/clients/test_xlmr_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init xlmr_arch "${1:-}"
ggufpy_setup "$BUILD"
"$GGUFPY_PYTHON" -c "from sentencepiece import sentencepiece_model_pb2" 2>/dev/null ||
  { echo "FAIL: python3-sentencepiece / python3-protobuf missing; run: scripts/setup.sh --with-test-clients" >&2; exit 1; }
VOCAB="$GGUFPY_SRC/models/ggml-vocab-nomic-bert-moe.gguf"
fixture() { ggufpy "$CLIENTS_DIR/xlmr_fixture.py" "$VOCAB" "$WORK/$1" "${@:2}"; }
check() { (cd "$CLIENTS_DIR" && ggufpy ggufpy_xlmr.py "$GGUFPY_SRC" "$@"); }
forward() { (cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" bert_forward.py "$@"); }

fixture xlmr --kind xlmr --pooling cls
fixture rerank --kind rerank
fixture e5 --kind bert --pooling mean --sequence-normalizer --roberta-processing
# sentencepiece.bpe.model (the converter's preferred source): a small Unigram model trained on the corpus by
# Google's SentencePiece (Debian python3-sentencepiece), beside the tokenizer.json transformers makes of it.
"$GGUFPY_PYTHON" -c "import sentencepiece as s, sys; s.SentencePieceTrainer.train(input=sys.argv[1], \
  model_prefix=sys.argv[2], vocab_size=700, model_type='unigram', character_coverage=1.0, \
  hard_vocab_limit=False, minloglevel=2)" "$CLIENTS_DIR/corpus.txt" "$WORK/unigram"
fixture spm --kind xlmr --pooling cls --spm-model "$WORK/unigram.model"
for name in xlmr rerank e5 spm; do
  "$REBOX" convert "$WORK/$name" -o "$WORK/$name.gguf" --quiet
  flag=()
  [[ $name == rerank ]] && flag=(--reranker)
  check "$WORK/$name" "$WORK/$name.gguf" "${flag[@]}"
done
(cd "$CLIENTS_DIR" && node bert_embed.mjs --corpus corpus.txt --lines 24 \
  --embed "$WORK/xlmr:$WORK/xlmr.gguf" --embed "$WORK/e5:$WORK/e5.gguf" --embed "$WORK/spm:$WORK/spm.gguf" \
  --rank "$WORK/rerank:$WORK/rerank.gguf")
for name in xlmr e5 spm; do
  forward "$WORK/$name" --embed "$WORK/$name.ids.json" "$WORK/$name.json"
done
forward "$WORK/rerank" --rank "$WORK/rerank.rank.json"
echo "xlm-roberta files checked ($(clients_elapsed))"

# refuse NAME PATTERN: converting $WORK/NAME fails with one BLOCKER / error line matching PATTERN, no file.
refuse() {
  local name="$1" pattern="$2" out status=0
  out=$("$REBOX" convert "$WORK/$name" -o "$WORK/$name.gguf" 2>&1) || status=$?
  [[ $status -ne 0 ]] || { echo "FAIL: $name: convert succeeded"; exit 1; }
  [[ ! -e "$WORK/$name.gguf" ]] || { echo "FAIL: $name: an output file was written"; exit 1; }
  grep -q -- "$pattern" <<<"$out" || { echo "FAIL: $name: no line matching '$pattern' in: $out"; exit 1; }
  echo "  $name refused (exit $status): $(grep -m1 -- "$pattern" <<<"$out" | cut -c1-200)"
}
# bad NAME CHANGE: a copy of the xlmr fixture with config.json updated by the JSON object CHANGE.
bad() {
  cp -r "$WORK/xlmr" "$WORK/$1"
  "$GGUFPY_PYTHON" - "$WORK/$1/config.json" "$2" <<'PY'
import json, sys
path, change = sys.argv[1], json.loads(sys.argv[2])
cfg = json.load(open(path)); cfg.update(change); json.dump(cfg, open(path, "w"))
PY
}
bad heads '{"num_attention_heads": 5}'
refuse heads "not a multiple of num_attention_heads"
bad positions '{"max_position_embeddings": 514}'
refuse positions "position_embd.weight: the position table has 130 rows but config.json max_position_embeddings is 514"
bad vocab '{"vocab_size": 250000}'
refuse vocab "beyond the vocabulary of config.json vocab_size 250000"
bad badpool '{}'
echo '{"pooling_mode_max_tokens": true}' >"$WORK/badpool/1_Pooling/config.json"
refuse badpool "no supported pooling mode"
bad nopool '{}'
rm -r "$WORK/nopool/modules.json" "$WORK/nopool/1_Pooling"
refuse nopool "no pooling type"
echo "PASS test_xlmr_arch ($(clients_elapsed))"
