#!/usr/bin/env bash
# FP8 block-quantized checkpoints (docs/formats.md §6): rebox-mkfixture writes tiny qwen3 ones as
# DeepSeek-V3 / Qwen3 -FP8 store them (BF16 scales in 128 x 128 blocks; F16 scales in 48 x 40
# blocks, partial at the edges; F32 powers of two), rebox converts each with
# --allow-lossless-fallback, and gguf-py (GGUFReader + gguf.quants.dequantize) must read every
# value exactly as ggufpy_fp8.py computes it in float64 from the checkpoint's raw bytes; the power-
# of-two file must be BF16 throughout. llama.cpp (node-llama-cpp, one process) loads every file.
# F32 scales of 24 significant bits (DeepSeek-V3): a BLOCKER line, exit 2, no file.
# Usage: bash tests/clients/test_fp8.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init fp8 "${1:-}"
ggufpy_setup "$BUILD"

files=()
for spec in "bf16:any:" "f16:any:--fp8-block 48 40" "pow2:BF16:"; do
  IFS=: read -r scales want extra <<<"$spec"
  dir="$WORK/fp8-$scales"
  # shellcheck disable=SC2086 # $extra is a list of options
  "$MKFIXTURE" "$dir" --preset tiny --format fp8 --fp8-scales "$scales" $extra --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --allow-lossless-fallback --quiet
  "$REBOX" plan "$dir" --allow-lossless-fallback --json >"$dir.plan.json"
  ggufpy "$CLIENTS_DIR/ggufpy_fp8.py" "$dir" "$dir.gguf" "$dir.plan.json" "$want"
  files+=("$dir.gguf")
done

loaded=$(node "$CLIENTS_DIR/llama_load.mjs" "${files[@]}")
echo "$loaded" | sed 's/^/  /'
[[ $(grep -c '^LOADED ' <<<"$loaded") -eq ${#files[@]} ]] ||
  { echo "FAIL: llama.cpp did not load every FP8 file"; exit 1; }

dir="$WORK/fp8-f32"
"$MKFIXTURE" "$dir" --preset tiny --format fp8 --fp8-scales f32 --force >/dev/null
set +e
"$REBOX" convert "$dir" -o "$dir.gguf" --allow-lossless-fallback --quiet 2>"$dir.err"
rc=$?
set -e
[[ $rc -eq 2 && ! -e "$dir.gguf" ]] || { echo "FAIL: F32 scales: exit $rc or a file written"; exit 1; }
grep -q "^BLOCKER layers.0.self_attn.q_proj.weight: FP8 value at row 0, column 0 .*not a binary32 value" "$dir.err" ||
  { echo "FAIL: F32 scales: no BLOCKER naming q_proj's first value"; cat "$dir.err"; exit 1; }
echo "  F32 scales of 24 bits: refused ($(grep -c '^BLOCKER' "$dir.err") BLOCKER)"
echo "PASS test_fp8 ($(clients_elapsed))"
