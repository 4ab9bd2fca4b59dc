#!/usr/bin/env bash
# rebox verify on GPTQ / AWQ / compressed-tensors checkpoints written by rebox-mkfixture (its own
# packers, docs/formats.md §5), against a GGUF that no rebox converter code for these formats made:
# prequant_twin.py (numpy, source_values.py) writes each checkpoint's values (q - z) * s as an F32
# float checkpoint, `rebox convert` turns that into a GGUF, and `rebox verify` must find every
# tensor of it bit-identical to its own reading of the packed checkpoint. Covers 2/3/4/8-bit GPTQ
# (v1 and v2, block-rotated g_idx, per-row groups), AWQ gemm and gemv, compressed-tensors pack-quantized
# (bf16/f16 scales, symmetric and with zero points) and int-quantized, on qwen3 and llama (q/k rows
# permuted). Usage: bash tests/clients/test_prequant_verify.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
clients_init prequant_verify "${1:-}"
PYTHON=/usr/bin/python3 # Debian's numpy
"$PYTHON" -c 'import numpy' || { echo "FAIL: $PYTHON lacks numpy (apt-get install python3-numpy)" >&2; exit 1; }

check() {
  local name="$1"
  shift
  "$MKFIXTURE" "$WORK/$name" --preset tiny --tokenizer small --force "$@" >/dev/null
  PYTHONPATH="$CLIENTS_DIR" "$PYTHON" "$CLIENTS_DIR/prequant_twin.py" "$WORK/$name" "$WORK/$name-twin" >/dev/null
  "$REBOX" convert "$WORK/$name-twin" -o "$WORK/$name-twin.gguf" --quiet
  local out
  if ! out="$("$REBOX" verify "$WORK/$name" "$WORK/$name-twin.gguf")"; then
    echo "FAIL: rebox verify $name ($*):" >&2
    echo "$out" >&2
    exit 1
  fi
  grep -Eq '^re-encoded tensors bit-identical: ([0-9]+)/\1, max abs error 0.0; copied tensors bit-identical: ([0-9]+)/\2' <<<"$out" ||
    { echo "FAIL: $name: unexpected verdict: $out" >&2; exit 1; }
  grep -q '^re-encoded tensors bit-identical: 0/' <<<"$out" && { echo "FAIL: $name: nothing quantized" >&2; exit 1; }
  echo "ok $name: $(head -1 <<<"$out")"
}

check gptq4 --format gptq
check gptq3-llama --format gptq --bits 3 --asym --desc-act blocks --arch llama
check gptq2 --format gptq --bits 2 --asym
check gptq8-v2 --format gptq --bits 8 --checkpoint-format gptq_v2 --asym
check gptq4-row --format gptq --group -1 --asym --arch qwen2
check awq --format awq --asym
check awq-llama --format awq --asym --arch llama --group 64
check awq-gemv --format awq --asym --awq-version gemv
check awq-gemv-g64-llama --format awq --asym --awq-version gemv --group 64 --arch llama
check ct4 --format compressed-tensors
check ct3-asym --format compressed-tensors --bits 3 --asym --scale-dtype f16 --arch llama
check ct-int8 --format compressed-tensors --ct-format int-quantized --bits 8 --asym
check ct8-row --format compressed-tensors --bits 8 --group -1
echo "PASS test_prequant_verify ($(clients_elapsed))"
