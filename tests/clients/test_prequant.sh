#!/usr/bin/env bash
# GPTQ, AWQ and compressed-tensors checkpoints (rebox-mkfixture's own packers, docs/formats.md §5) into
# GGUF, checked from outside rebox. For each format x bits x symmetry (and qwen2 / llama, sharded,
# per-channel, desc_act with a block-constant g_idx, bf16 and f16 scales, symmetric int-quantized int8):
#  - rebox plan (text: a type per tensor and the size ratio; --json kept for the next step), rebox convert,
#    rebox verify;
#  - ggufpy_prequant.py: every tensor read by gguf-py (gguf.quants.dequantize) bit-identical in fp32 to
#    (q - z) * s computed in numpy from the source files (source_values.py); each quantized tensor's type
#    the one docs/formats.md §5.0 gives (derived from the source integers), the set of types as listed
#    below (symmetric 4-bit -> Q4_0; asymmetric 4-bit -> Q4_0 + Q4_1 + Q5_0, one tensor each way;
#    <= 3 bits -> Q4_0; 5 bits -> Q5_0, Q5_1 (z*s exact) or Q8_0; 6 and 8 bits -> Q8_0); the plan's
#    types and byte count match the file;
#  - --outtype f32: the same values as F32.
# Every defect (and a true act-order g_idx): non-zero exit, one line (bad input) or one BLOCKER line
# per affected tensor, nothing written. node-llama-cpp embeds a GPTQ qwen3 fixture with the real Qwen3
# tokenizer: cosine >= 0.999 against its --outtype f32 twin.
# Usage: bash tests/clients/test_prequant.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init prequant "${1:-}"
ggufpy_setup "$BUILD"

ASYM4=Q4_0,Q4_1,Q5_0
# name : ggml types of the quantized tensors : mkfixture flags
cases=(
  "gptq-4-sym:Q4_0:--format gptq --bits 4 --sym"
  "gptq-4-asym:$ASYM4:--format gptq --bits 4 --asym"
  "gptq-4-asym-v2-shards:$ASYM4:--format gptq --bits 4 --asym --checkpoint-format gptq_v2 --shards 3"
  "gptq-3-sym:Q4_0:--format gptq --bits 3 --sym"
  "gptq-3-asym:Q4_0:--format gptq --bits 3 --asym"
  "gptq-2-sym:Q4_0:--format gptq --bits 2 --sym --checkpoint-format gptq_v2"
  "gptq-2-asym:Q4_0:--format gptq --bits 2 --asym"
  "gptq-8-sym:Q8_0:--format gptq --bits 8 --sym"
  "gptq-8-asym:Q8_0:--format gptq --bits 8 --asym --checkpoint-format gptq_v2"
  "gptq-4-channel:Q4_0:--format gptq --bits 4 --sym --group -1"
  "gptq-4-desc-trivial:$ASYM4:--format gptq --bits 4 --asym --desc-act trivial"
  "gptq-4-desc-blocks:$ASYM4:--format gptq --bits 4 --asym --desc-act blocks"
  "gptq-4-qwen2:$ASYM4:--format gptq --bits 4 --asym --arch qwen2"
  "gptq-4-llama:Q4_0:--format gptq --bits 4 --sym --arch llama"
  "awq-4:$ASYM4:--format awq --asym"
  "awq-4-g64-llama:$ASYM4:--format awq --asym --group 64 --arch llama --shards 2"
  "ct-4-sym:Q4_0:--format compressed-tensors --bits 4 --sym"
  "ct-4-asym:$ASYM4:--format compressed-tensors --bits 4 --asym"
  "ct-4-sym-f16:Q4_0:--format compressed-tensors --bits 4 --sym --scale-dtype f16"
  "ct-4-channel:Q4_0:--format compressed-tensors --bits 4 --sym --group -1"
  "ct-3-asym:Q4_0:--format compressed-tensors --bits 3 --asym"
  "ct-2-sym:Q4_0:--format compressed-tensors --bits 2 --sym"
  "ct-5-sym:Q5_0:--format compressed-tensors --bits 5 --sym"
  "ct-5-asym:Q5_0,Q5_1,Q8_0:--format compressed-tensors --bits 5 --asym"
  "ct-6-sym:Q8_0:--format compressed-tensors --bits 6 --sym"
  "ct-8-sym:Q8_0:--format compressed-tensors --bits 8 --sym"
  "ct-8-asym:Q8_0:--format compressed-tensors --bits 8 --asym"
  "ct-4-qwen2:$ASYM4:--format compressed-tensors --bits 4 --asym --arch qwen2"
  "ct-4-llama:Q4_0:--format compressed-tensors --bits 4 --sym --arch llama"
  "ct-int8:Q8_0:--format compressed-tensors --ct-format int-quantized --bits 8 --group -1"
)

for case in "${cases[@]}"; do
  name=${case%%:*}
  rest=${case#*:}
  types=${rest%%:*}
  read -r -a flags <<<"${rest#*:}"
  dir="$WORK/$name"
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --embedding-eos "${flags[@]}" --force >/dev/null
  "$REBOX" plan "$dir" >"$dir.plan.txt"
  "$REBOX" plan "$dir" --json >"$dir.plan.json"
  # The text plan names each quantized projection with its type, and ends with the size ratio.
  for t in ${types//,/ }; do
    grep -Eq "^model\.layers\.[0-9]+\.(self_attn|mlp)\.[a-z_]+_proj[a-z_.]* .* $t " "$dir.plan.txt" ||
      { echo "FAIL: $name: rebox plan lists no projection as $t" >&2; cat "$dir.plan.txt" >&2; exit 1; }
  done
  grep -Eq "[0-9]+(\.[0-9]+)? x the" "$dir.plan.txt" ||
    { echo "FAIL: $name: rebox plan shows no size ratio" >&2; tail -3 "$dir.plan.txt" >&2; exit 1; }
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
  "$REBOX" verify "$dir" "$dir.gguf" >"$dir.verify.txt" ||
    { echo "FAIL: $name: rebox verify" >&2; cat "$dir.verify.txt" >&2; exit 1; }
  ggufpy "$CLIENTS_DIR/ggufpy_prequant.py" "$BUILD/llama-src" "$dir" "$dir.gguf" --plan "$dir.plan.json" \
    --quant-types "$types"
  "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
  ggufpy "$CLIENTS_DIR/ggufpy_prequant.py" "$BUILD/llama-src" "$dir" "$dir-f32.gguf" --outtype-f32 \
    --quant-types F32
  echo "$name checked ($(clients_elapsed))"
done

# Refusals: non-zero exit, nothing written, and one line naming what is wrong: exit 1 (bad input) is
# exactly one line on stderr; exit 2 (BLOCKER) is the summary line plus one BLOCKER line per tensor.
# expect_refusal NAME SUBJECT BLOCKERS mkfixture-flags...   (BLOCKERS: expected BLOCKER lines, or -)
expect_refusal() {
  local name="$1" subject="$2" blockers="$3"
  shift 3
  local dir="$WORK/refuse-$name" rc=0
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small "$@" --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet 2>"$dir.err" || rc=$?
  [[ $rc -ne 0 ]] || { echo "FAIL: $name: rebox convert accepted it" >&2; exit 1; }
  if [[ -e "$dir.gguf" ]] || compgen -G "$WORK/refuse-$name.gguf*" >/dev/null ||
     compgen -G "$WORK/.refuse-$name*" >/dev/null; then
    echo "FAIL: $name: an output file was left behind" >&2
    exit 1
  fi
  grep -q -- "$subject" "$dir.err" ||
    { echo "FAIL: $name: the message does not name $subject:" >&2; cat "$dir.err" >&2; exit 1; }
  local lines
  lines=$(wc -l <"$dir.err")
  if [[ $rc -eq 2 ]]; then
    local count
    count=$(grep -c '^BLOCKER' "$dir.err" || true)
    if [[ $blockers == - || $count -ne $blockers || $lines -ne $((blockers + 1)) ]]; then
      echo "FAIL: $name: exit 2 with $count BLOCKER lines in $lines (expected ${blockers} + summary):" >&2
      cat "$dir.err" >&2
      exit 1
    fi
  elif [[ $lines -ne 1 ]]; then
    echo "FAIL: $name: exit $rc with $lines lines on stderr (expected one):" >&2
    cat "$dir.err" >&2
    exit 1
  fi
  echo "  refused $name (exit $rc): $(grep -m1 -- "$subject" "$dir.err" | cut -c1-160)"
}

Q=model.layers.0.self_attn.q_proj
# bad input (exit 1, one line) or a BLOCKER naming the tensor (exit 2): either is a refusal
expect_refusal gptq-zero-out-of-range "$Q" 1 --format gptq --bits 4 --asym --defect zero-out-of-range
expect_refusal gptq-g-idx-out-of-range "$Q" 1 --format gptq --defect g-idx-out-of-range
for fmt in gptq awq compressed-tensors; do
  sym=--sym
  [[ $fmt == awq ]] && sym=--asym
  expect_refusal "$fmt-missing-scales" "$Q" 1 --format "$fmt" "$sym" --defect missing-scales
  expect_refusal "$fmt-scales-shape" "$Q" 1 --format "$fmt" "$sym" --defect scales-shape
  expect_refusal "$fmt-bits-not-allowed" "bits" 1 --format "$fmt" "$sym" --defect bits-not-allowed
  expect_refusal "$fmt-unknown-quant-method" "hqq" 1 --format "$fmt" "$sym" --defect unknown-quant-method
done
expect_refusal gptq-unknown-layout "marlin" 1 --format gptq --defect unknown-layout
expect_refusal awq-unknown-layout "gemv_fast" 1 --format awq --asym --defect unknown-layout
expect_refusal ct-unknown-layout "marlin-24" 1 --format compressed-tensors --defect unknown-layout
# AWQ gemv is described in docs/formats.md §5.2 (and written by mkfixture) but not read: one line.
expect_refusal awq-gemv-not-read "gemv" - --format awq --asym --awq-version gemv
# Not exact (BLOCKERs): a bf16 scale fp16 cannot hold; a true act-order g_idx in every projection; an
# 8-bit q - z of 254.
expect_refusal ct-inexact-bf16-scale "$Q" 1 --format compressed-tensors --defect inexact-bf16-scale
expect_refusal gptq-actorder "$Q" 14 --format gptq --bits 4 --asym --desc-act actorder
expect_refusal gptq-int8-range "$Q" 1 --format gptq --bits 8 --asym --defect int8-range

# With --allow-lossless-fallback the inexact-scale tensor becomes an exact F32 copy, the rest stays.
dir="$WORK/refuse-ct-inexact-bf16-scale"
"$REBOX" convert "$dir" -o "$dir-fallback.gguf" --allow-lossless-fallback --quiet
"$REBOX" verify "$dir" "$dir-fallback.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/ggufpy_prequant.py" "$BUILD/llama-src" "$dir" "$dir-fallback.gguf" \
  --fallback-f32 "$Q.weight" --quant-types Q4_0,F32
dir="$WORK/refuse-gptq-int8-range"
"$REBOX" convert "$dir" -o "$dir-fallback.gguf" --allow-lossless-fallback --quiet
"$REBOX" verify "$dir" "$dir-fallback.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/ggufpy_prequant.py" "$BUILD/llama-src" "$dir" "$dir-fallback.gguf" \
  --fallback-f32 "$Q.weight" --quant-types Q8_0,F32
echo "defects refused ($(clients_elapsed))"

# llama.cpp runs a converted GPTQ qwen3 fixture with the real Qwen3 tokenizer.
dir="$WORK/embed-gptq"
"$MKFIXTURE" "$dir" --preset tiny --format gptq --bits 4 --asym --tokenizer qwen3 \
  --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force >/dev/null
"$REBOX" convert "$dir" -o "$dir.gguf" --quiet
"$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
ggufpy "$CLIENTS_DIR/ggufpy_prequant.py" "$BUILD/llama-src" "$dir" "$dir.gguf" --quant-types "$ASYM4"
node "$CLIENTS_DIR/llama_embed.mjs" --label gptq-qwen3 --q4 "$dir.gguf" --f32 "$dir-f32.gguf" \
  --corpus "$CLIENTS_DIR/corpus.txt" --lines 12 --min-cos 0.999 --kind "Q4_0/Q4_1/Q5_0"
echo "PASS test_prequant ($(clients_elapsed))"
