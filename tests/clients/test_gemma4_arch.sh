#!/usr/bin/env bash
# Gemma 4 dense (gemma4) against llama.cpp's own converter code. rebox refuses Gemma 4 for now (its
# gemma4 tokenizer is not written), so no file reaches llama.cpp yet; what is checked:
#  - gemma4_plan_compare.py: `rebox plan --json` of the tiny BF16 fixture (rebox-mkfixture --arch
#    gemma4: 3 sliding layers, then a full-attention one with its own head size and kv heads, no
#    v_proj, a layer_scalar per layer, a vision tower stand-in) plans exactly the tensors, with the ne,
#    that the bundle's Gemma4Model chain writes for the same checkpoint, rope_freqs first;
#  - convert stops with the tokenizer BLOCKER: one line, exit 2, no file;
#  - a layer_types of the wrong length is refused: one line, exit 2, no file.
# Usage: bash tests/clients/test_gemma4_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init gemma4_arch "${1:-}"
ggufpy_setup "$BUILD"

# One refusal: exit 2, no file, `needle` on exactly one line.
refused_once() {
  local dir="$1" needle="$2" out code
  set +e
  out="$("$REBOX" convert "$dir" -o "$dir.gguf" 2>&1)"
  code=$?
  set -e
  [[ $code -eq 2 && ! -e "$dir.gguf" ]] || { echo "FAIL: $dir: exit $code"; echo "$out"; exit 1; }
  [[ $(grep -cF "$needle" <<<"$out") -eq 1 ]] || { echo "FAIL: not one line: $out"; exit 1; }
}

dir="$WORK/gemma4"
"$MKFIXTURE" "$dir" --preset tiny --arch gemma4 --force >/dev/null
set +e
"$REBOX" plan --json "$dir" >"$WORK/plan.json"
code=$?
set -e
[[ $code -eq 2 ]] || { echo "FAIL: rebox plan exit $code (the tokenizer BLOCKER expected)"; exit 1; }
ggufpy "$CLIENTS_DIR/gemma4_plan_compare.py" "$BUILD/llama-src" "$dir" "$WORK/plan.json"
refused_once "$dir" 'tokenizer.ggml.model "gemma4"'

bad="$WORK/gemma4-layer-types"
"$MKFIXTURE" "$bad" --preset tiny --arch gemma4 --gemma4-defect layer-types --force >/dev/null
refused_once "$bad" "layer_types has 3 entries for num_hidden_layers 4"
echo "PASS test_gemma4_arch ($(clients_elapsed))"
