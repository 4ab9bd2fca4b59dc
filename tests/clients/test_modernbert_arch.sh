#!/usr/bin/env bash
# modernbert (ModernBERT embedders) against llama.cpp's own converter and a ModernBERT forward pass.
# modernbert_fixture.py writes tiny float32 and 4-bit MLX checkpoints in transformers' ModernBertModel layout
# (fused Wqkv, GeGLU Wi, no biases, layer 0 without attn_norm; 3 layers, global attention every 2nd layer,
# sliding window 8, global / local rope theta 160000 / 10000, norm_eps only) with GPT-NeoX's real byte-level
# BPE vocabulary under ModernBERT's tokenizer.json shape and specials. For each, rebox's file must
#  - ggufpy_encoder_ref.py: hold exactly the modern-bert.* KVs and the tensors (names and bit-identical
#    values) that llama.cpp's ModernBertModel -> BertModel -> TextModel classes, run as written
#    (converter_run.py), give for the same checkpoint, plus attention.layer_norm_epsilon = norm_eps, which
#    the converter leaves out for a config without layer_norm_eps and llama.cpp's loader requires (shown
#    below); the vocabulary as get_vocab_base builds it, pre "modern-bert" (the name the converter gives
#    ModernBERT's tokenizer), merges and special ids / add_* flags as gguf-py's SpecialVocab writes them;
#  - pass rebox verify, and fail it once a KV or tensor name is wrong; pass rebox check;
#  - bert_embed.mjs + modernbert_forward.py: load in llama.cpp (node-llama-cpp), tokenize every corpus line
#    as the HF tokenizer.json does (@lenml/tokenizers), and embed like the numpy forward pass written from
#    transformers' modeling_modernbert with MEAN pooling (cos >= 0.9999 for the float and the MLX
#    --outtype f32 files; >= 0.998 for MLX's default Q4_1 file, measured 1 - 5.1e-4: its values are
#    bit-identical to the source's and its F32 twin meets 1 - 1.5e-7, so the gap is llama.cpp computing
#    Q4_1 products on Q8_1-rounded activations).
# A ModernBertForSequenceClassification reranker (classifier_pooling "mean", no sentence-transformers files):
# head.dense -> cls, head.norm -> cls.norm, classifier -> cls.output as the converter writes them, plus
# pooling_type RANK (the converter reads pooling only from modules.json, which rerankers lack); its
# node-llama-cpp scores equal the forward pass's sigmoid(classifier(norm(gelu(dense(mean))))) on the same
# token lists within 1e-3 (llama.cpp's modern-bert RANK pooling is that function, with its GELU approximation).
# Then the bad inputs: each one line, non-zero exit, no output file.
# Usage: bash tests/clients/test_modernbert_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init modernbert_arch "${1:-}"
ggufpy_setup "$BUILD"
VOCAB="$GGUFPY_SRC/models/ggml-vocab-gpt-neox.gguf"
CHAIN=bert.py:ModernBertModel,bert.py:BertModel,base.py:TextModel,base.py:ModelBase
fixture() { (cd "$CLIENTS_DIR" && ggufpy modernbert_fixture.py "$VOCAB" "$WORK/$1" "${@:2}"); }
reference() {
  (cd "$CLIENTS_DIR" && ggufpy ggufpy_encoder_ref.py "$GGUFPY_SRC" "$1" "$2" --chain "$CHAIN" --bpe modern-bert \
    --loader-kv modern-bert.attention.layer_norm_epsilon=norm_eps "${@:3}")
}

fixture f32 --also-mlx "$WORK/mlx"
fixture rerank --reranker
"$REBOX" convert "$WORK/rerank" -o "$WORK/rerank.gguf" --quiet
reference "$WORK/rerank" "$WORK/rerank.gguf" --loader-kv modern-bert.pooling_type==4
"$REBOX" verify "$WORK/rerank" "$WORK/rerank.gguf" >/dev/null
echo "  rerank.gguf: rebox verify passes"
"$REBOX" convert "$WORK/f32" -o "$WORK/f32.gguf" --quiet
"$REBOX" convert "$WORK/mlx" -o "$WORK/mlx.gguf" --quiet
"$REBOX" convert "$WORK/mlx" -o "$WORK/mlx-f32.gguf" --outtype f32 --quiet
cp -r "$WORK/mlx" "$WORK/mlx-f32"
for name in f32 mlx mlx-f32; do
  reference "$WORK/$name" "$WORK/$name.gguf"
  "$REBOX" verify "$WORK/$name" "$WORK/$name.gguf" >/dev/null
  "$REBOX" check "$WORK/$name.gguf" >/dev/null
  echo "  $name.gguf: rebox verify and rebox check pass"
done

# rebox verify fails on a wrong file: edit one thing the source decides, and verify must name it.
wrong() {  # wrong LABEL PATTERN META-ARGS...: the f32 file edited by rebox meta must fail verify with PATTERN
  local label="$1" pattern="$2" status=0 out
  "$REBOX" meta "${@:3}" -o "$WORK/wrong.gguf" -f "$WORK/f32.gguf" >/dev/null
  out=$("$REBOX" verify "$WORK/f32" "$WORK/wrong.gguf" 2>&1) || status=$?
  [[ $status -ne 0 ]] && grep -q -- "$pattern" <<<"$out" ||
    { echo "FAIL: rebox verify passed a file with $label (exit $status)"; echo "$out" | grep -v UNCHECKED | head -5; exit 1; }
}
wrong "no sliding-window pattern" "sliding_window_pattern: missing" --delete modern-bert.attention.sliding_window_pattern
wrong "another window" "attention.sliding_window: is 128" --set modern-bert.attention.sliding_window=128
wrong "the global theta on local layers" "freq_base_swa: is 160000" --set modern-bert.rope.freq_base_swa=160000
wrong "another pre-tokenizer" "tokenizer.ggml.pre: is \"gpt-2\"" --set tokenizer.ggml.pre=gpt-2
wrong "no activation" "hidden_activation: missing" --delete modern-bert.hidden_activation
wrong "layer 1's attn_norm as layer 0's" "blk.0.attn_norm.weight" --rename-tensor blk.1.attn_norm.weight=blk.0.attn_norm.weight
echo "  rebox verify refuses the f32 file with a KV or a tensor name changed (6 edits)"

# The converter's own KV set (no layer_norm_epsilon) does not load in llama.cpp; rebox check says so.
"$REBOX" meta --delete modern-bert.attention.layer_norm_epsilon -o "$WORK/noeps.gguf" "$WORK/f32.gguf" >/dev/null
status=0
"$REBOX" check "$WORK/noeps.gguf" >"$WORK/noeps.check" 2>&1 || status=$?
grep -q "FINDING: .*modern-bert.attention.layer_norm_epsilon is missing" "$WORK/noeps.check" && [[ $status -ne 0 ]] ||
  { echo "FAIL: rebox check did not report the missing layer_norm_epsilon"; cat "$WORK/noeps.check"; exit 1; }
(cd "$CLIENTS_DIR" && node llama_load.mjs "$WORK/noeps.gguf" "$WORK/f32.gguf") >"$WORK/noeps.load"
grep -q "^REFUSED .*layer_norm_epsilon" "$WORK/noeps.load" && grep -q "^LOADED " "$WORK/noeps.load" ||
  { echo "FAIL: llama.cpp's answer changed:"; cat "$WORK/noeps.load"; exit 1; }
echo "  without layer_norm_epsilon (the converter's KV set) llama.cpp refuses the file, and rebox check reports it"

(cd "$CLIENTS_DIR" && node bert_embed.mjs --corpus corpus.txt --lines 24 \
  --embed "$WORK/f32:$WORK/f32.gguf" --embed "$WORK/mlx:$WORK/mlx.gguf" --embed "$WORK/mlx-f32:$WORK/mlx-f32.gguf" \
  --rank "$WORK/rerank:$WORK/rerank.gguf")
for name in f32 mlx-f32; do
  (cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" modernbert_forward.py "$WORK/$name" --embed "$WORK/$name.ids.json" "$WORK/$name.json")
done
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" modernbert_forward.py "$WORK/mlx" --embed "$WORK/mlx.ids.json" "$WORK/mlx.json" \
  --min-cos 0.998)
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" modernbert_forward.py "$WORK/rerank" --rank "$WORK/rerank.rank.json")
echo "modernbert files checked ($(clients_elapsed))"

# rebox-mkfixture --arch modernbert: its float checkpoint converts to what the converter classes write,
# passes rebox verify and loads in llama.cpp.
"$MKFIXTURE" --arch modernbert --preset tiny "$WORK/mk" >/dev/null
"$REBOX" convert "$WORK/mk" -o "$WORK/mk.gguf" --quiet
reference "$WORK/mk" "$WORK/mk.gguf"
"$REBOX" verify "$WORK/mk" "$WORK/mk.gguf" >/dev/null
(cd "$CLIENTS_DIR" && node llama_load.mjs "$WORK/mk.gguf") | grep -q "^LOADED " ||
  { echo "FAIL: llama.cpp does not load rebox-mkfixture's modernbert file"; exit 1; }
echo "  rebox-mkfixture --arch modernbert: converts as the converter does, passes rebox verify, loads in llama.cpp"

# refuse NAME PATTERN: converting $WORK/NAME fails with one error / BLOCKER line matching PATTERN, no file.
refuse() {
  local name="$1" pattern="$2" out status=0
  out=$("$REBOX" convert "$WORK/$name" -o "$WORK/$name.gguf" 2>&1) || status=$?
  [[ $status -ne 0 ]] || { echo "FAIL: $name: convert succeeded"; exit 1; }
  [[ ! -e "$WORK/$name.gguf" ]] || { echo "FAIL: $name: an output file was written"; exit 1; }
  grep -q -- "$pattern" <<<"$out" || { echo "FAIL: $name: no line matching '$pattern' in: $out"; exit 1; }
  echo "  $name refused (exit $status): $(grep -m1 -- "$pattern" <<<"$out" | cut -c1-170)"
}
bad() {  # bad NAME CHANGE PATTERN [BASE]: the f32 (or BASE) fixture with config.json changed must be refused
  rm -rf "$WORK/$1"
  cp -r "$WORK/${4:-f32}" "$WORK/$1"
  "$GGUFPY_PYTHON" - "$WORK/$1/config.json" "$2" <<'PY'
import json, sys
path, change = sys.argv[1], json.loads(sys.argv[2])
cfg = json.load(open(path)); cfg.update(change); json.dump(cfg, open(path, "w"))
PY
  refuse "$1" "$3"
}
bad heads '{"num_attention_heads": 5}' "not a multiple of num_attention_heads"
bad nowindow '{"local_attention": null}' "local_attention"
bad act '{"hidden_activation": "relu"}' "hidden_activation"
bad bias '{"attention_bias": true}' "attention_bias"
bad nonormeps '{"norm_eps": null}' "norm_eps"
bad clspool '{"classifier_pooling": "cls"}' "classifier_pooling" rerank
bad headbias '{"classifier_bias": true}' "classifier_bias" rerank
bad vocab '{"vocab_size": 50000}' "beyond the vocabulary"
rm -rf "$WORK/nopool" && cp -r "$WORK/f32" "$WORK/nopool" && rm "$WORK/nopool/modules.json"
refuse nopool "no pooling type"
echo "PASS test_modernbert_arch ($(clients_elapsed))"
