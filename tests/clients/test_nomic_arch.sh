#!/usr/bin/env bash
# nomic-bert (nomic-embed-text v1 / v1.5) against llama.cpp's own converter and a nomic-bert forward pass.
# nomic_fixture.py writes tiny float32 and 4-bit MLX checkpoints in nomic-embed-text-v1.5's layout (GPT-2
# config names, fused Wqkv, SwiGLU fc11/fc12/fc2, rotary) with bge's real WordPiece vocabulary padded to
# vocab_size 30528. For each, rebox's file must
#  - ggufpy_encoder_ref.py: hold exactly the nomic-bert.* KVs and the tensors (names and bit-identical values)
#    that llama.cpp's NomicBertModel -> BertModel -> TextModel classes, run as written (converter_run.py),
#    give for the same checkpoint; the converter's WordPiece tokens / types padded to vocab_size, and
#    SpecialVocab's special ids and flags;
#  - pass rebox verify and rebox check (which, as llama.cpp's loader, needs layer_norm_epsilon, not the RMS one);
#  - bert_embed.mjs + nomic_forward.py: load in llama.cpp (node-llama-cpp), tokenize as the HF tokenizer, and
#    embed like the numpy forward pass written from nomic's modeling code with MEAN pooling (cos >= 0.9999 for
#    the float and the MLX --outtype f32 files; >= 0.998 for MLX's default Q4_1 file, measured 1 - 1.0e-3:
#    its values are bit-identical to the source's (above) and its F32 twin meets 1 - 5e-13, so the gap is
#    llama.cpp computing Q4_1 products on Q8_1-rounded activations, which the SwiGLU product amplifies).
# Then the converter's asserts and the bad inputs: each one line, non-zero exit, no output file.
# Usage: bash tests/clients/test_nomic_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init nomic_arch "${1:-}"
ggufpy_setup "$BUILD"
VOCAB="$GGUFPY_SRC/models/ggml-vocab-bert-bge.gguf"
CHAIN=bert.py:NomicBertModel,bert.py:BertModel,base.py:TextModel,base.py:ModelBase
fixture() { (cd "$CLIENTS_DIR" && ggufpy nomic_fixture.py "$VOCAB" "$WORK/$1" "${@:2}"); }
reference() { (cd "$CLIENTS_DIR" && ggufpy ggufpy_encoder_ref.py "$GGUFPY_SRC" "$1" "$2" --chain "$CHAIN" --wordpiece "$VOCAB"); }

fixture f32
fixture mlx --mlx
"$REBOX" convert "$WORK/f32" -o "$WORK/f32.gguf" --quiet
"$REBOX" convert "$WORK/mlx" -o "$WORK/mlx.gguf" --quiet
"$REBOX" convert "$WORK/mlx" -o "$WORK/mlx-f32.gguf" --outtype f32 --quiet
cp -r "$WORK/mlx" "$WORK/mlx-f32"
for name in f32 mlx mlx-f32; do
  reference "$WORK/$name" "$WORK/$name.gguf"
  "$REBOX" verify "$WORK/$name" "$WORK/$name.gguf" >/dev/null
  echo "  $name.gguf: rebox verify passes"
done
(cd "$CLIENTS_DIR" && node bert_embed.mjs --corpus corpus.txt --lines 24 \
  --embed "$WORK/f32:$WORK/f32.gguf" --embed "$WORK/mlx:$WORK/mlx.gguf" --embed "$WORK/mlx-f32:$WORK/mlx-f32.gguf")
for name in f32 mlx-f32; do
  (cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" nomic_forward.py "$WORK/$name" --embed "$WORK/$name.ids.json" "$WORK/$name.json")
done
(cd "$CLIENTS_DIR" && "$GGUFPY_PYTHON" nomic_forward.py "$WORK/mlx" --embed "$WORK/mlx.ids.json" "$WORK/mlx.json" \
  --min-cos 0.998)
# rebox check agrees with llama.cpp's loader: the files pass; without nomic-bert.attention.layer_norm_epsilon
# (the LayerNorm epsilon llama.cpp's bert-family loader requires, not the RMS one) llama.cpp refuses the
# file and rebox check reports it.
for name in f32 mlx mlx-f32; do "$REBOX" check "$WORK/$name.gguf" >/dev/null; done
"$REBOX" meta --delete nomic-bert.attention.layer_norm_epsilon -o "$WORK/noeps.gguf" "$WORK/f32.gguf" >/dev/null
status=0
"$REBOX" check "$WORK/noeps.gguf" >"$WORK/noeps.check" 2>&1 || status=$?
grep -q "FINDING: .*nomic-bert.attention.layer_norm_epsilon is missing" "$WORK/noeps.check" && [[ $status -ne 0 ]] ||
  { echo "FAIL: rebox check did not report the missing layer_norm_epsilon"; cat "$WORK/noeps.check"; exit 1; }
(cd "$CLIENTS_DIR" && node llama_load.mjs "$WORK/noeps.gguf" "$WORK/f32.gguf") >"$WORK/noeps.load"
grep -q "^REFUSED .*layer_norm_epsilon" "$WORK/noeps.load" && grep -q "^LOADED " "$WORK/noeps.load" ||
  { echo "FAIL: llama.cpp's answer changed:"; cat "$WORK/noeps.load"; exit 1; }
echo "  rebox check passes the files and, as llama.cpp, refuses one without layer_norm_epsilon"
echo "nomic-bert files checked ($(clients_elapsed))"

# refuse NAME PATTERN: converting $WORK/NAME fails with one error / BLOCKER line matching PATTERN, no file.
refuse() {
  local name="$1" pattern="$2" out status=0
  out=$("$REBOX" convert "$WORK/$name" -o "$WORK/$name.gguf" 2>&1) || status=$?
  [[ $status -ne 0 ]] || { echo "FAIL: $name: convert succeeded"; exit 1; }
  [[ ! -e "$WORK/$name.gguf" ]] || { echo "FAIL: $name: an output file was written"; exit 1; }
  grep -q -- "$pattern" <<<"$out" || { echo "FAIL: $name: no line matching '$pattern' in: $out"; exit 1; }
  echo "  $name refused (exit $status): $(grep -m1 -- "$pattern" <<<"$out" | cut -c1-170)"
}
bad() {  # bad NAME CHANGE PATTERN: the f32 fixture with config.json changed must be refused
  rm -rf "$WORK/$1"
  cp -r "$WORK/f32" "$WORK/$1"
  "$GGUFPY_PYTHON" - "$WORK/$1/config.json" "$2" <<'PY'
import json, sys
path, change = sys.argv[1], json.loads(sys.argv[2])
cfg = json.load(open(path)); cfg.update(change); json.dump(cfg, open(path, "w"))
PY
  refuse "$1" "$3"
}
# NomicBertModel.__init__'s asserts and its context rewrite's refusal.
bad act '{"activation_function": "gelu"}' "activation_function"
bad causal '{"causal": true}' "causal"
bad qkvbias '{"qkv_proj_bias": true}' "qkv_proj_bias"
bad prenorm '{"prenorm": true}' "prenorm"
bad fraction '{"rotary_emb_fraction": 0.5}' "rotary_emb_fraction"
bad interleaved '{"rotary_emb_interleaved": true}' "rotary_emb_interleaved"
bad scalebase '{"rotary_emb_scale_base": 512}' "rotary_emb_scale_base"
bad positions '{"n_positions": 4096}' "n_positions"
bad moe '{"moe_every_n_layers": 2}' "moe_every_n_layers"
# The generic encoder refusals.
bad heads '{"n_head": 5}' "not a multiple of num_attention_heads"
bad vocab '{"vocab_size": 30000}' "beyond the vocabulary"
bad rows '{"n_inner": 96}' "implies intermediate_size 96"
rm -rf "$WORK/nopool" && cp -r "$WORK/f32" "$WORK/nopool" && rm "$WORK/nopool/modules.json"
refuse nopool "no pooling type"
echo "PASS test_nomic_arch ($(clients_elapsed))"
