#!/usr/bin/env bash
# MLX mode "mxfp4" / "nvfp4" checkpoints (docs/formats.md §2.1) for every registry architecture:
# rebox-mkfixture writes each with its own packer, rebox converts it to MXFP4 / NVFP4 tensors, and
# gguf-py (llama.cpp's GGUFReader + gguf.quants.dequantize) must read back every value bit for bit
# as ggufpy_fp4.py computes it from the checkpoint by the formats' definitions; the standalone
# `rebox verify` must agree; node-llama-cpp embeds qwen3 / llama FP4 files like their F32 twins
# (cosine >= 0.999). Refusals: an E8M0 scale byte 0xFF, an E4M3 NaN (0x7F) or negative
# (sign bit) scale byte: a BLOCKER line naming the scales tensor, exit 2, no output file.
# Usage: bash tests/clients/test_fp4.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init fp4 "${1:-}"
ggufpy_setup "$BUILD"

for arch in qwen3 qwen2 llama mistral phi3 gemma gemma2 gemma3 qwen3_moe qwen2_moe mixtral; do
  for mode in mxfp4 nvfp4; do
    dir="$WORK/m-${arch/phi3/p3}-$mode" # a name with "phi3" would trigger llama.cpp's Phi-3 vocab rule
    "$MKFIXTURE" "$dir" --preset tiny --arch "$arch" --format "$mode" --force >/dev/null
    "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
    "$REBOX" plan "$dir" --json >"$dir.plan.json"
    "$REBOX" verify "$dir" "$dir.gguf" >/dev/null
    ggufpy "$CLIENTS_DIR/ggufpy_fp4.py" "$GGUFPY_SRC" "$dir" "$dir.gguf" "$dir.plan.json"
  done
done

# llama.cpp runs the FP4 files: qwen3 and llama fixtures with the real Qwen3 tokenizer embed like
# their --outtype f32 twins (the same values; only the kernels' arithmetic differs).
for arch in qwen3 llama; do
  for mode in mxfp4 nvfp4; do
    dir="$WORK/embed-$arch-$mode"
    "$MKFIXTURE" "$dir" --preset tiny --arch "$arch" --format "$mode" --tokenizer qwen3 \
      --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force >/dev/null
    "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
    "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
    embed_job --label "$arch-$mode" --q4 "$dir.gguf" --f32 "$dir-f32.gguf" \
      --corpus "$CLIENTS_DIR/corpus.txt" --lines 6 --min-cos 0.999 --kind "${mode^^}"
  done
done
embed_jobs_run

refuse() { # mode bad-scale expected-text
  local dir="$WORK/bad-$1-$2"
  "$MKFIXTURE" "$dir" --preset tiny --format "$1" --fp4-bad-scale "$2" --force >/dev/null
  set +e
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet 2>"$dir.err"
  local rc=$?
  set -e
  [[ $rc -eq 2 ]] || { echo "FAIL: $1 $2: exit $rc (expected 2)"; cat "$dir.err"; exit 1; }
  [[ ! -e "$dir.gguf" ]] || { echo "FAIL: $1 $2: an output file was written"; exit 1; }
  grep -q "^BLOCKER model.layers.0.self_attn.q_proj.scales: .*$3" "$dir.err" ||
    { echo "FAIL: $1 $2: no BLOCKER line saying '$3'"; cat "$dir.err"; exit 1; }
  echo "  $1 --fp4-bad-scale $2: refused ($(grep -c '^BLOCKER' "$dir.err") BLOCKER)"
}
refuse mxfp4 nan "scale byte 0xff at index 0: E8M0 0xff is NaN"
refuse nvfp4 nan "scale byte 0x7f at index 0: E4M3 0x7f/0xff is NaN"
refuse nvfp4 negative "scale byte 0xb8 at index 0: E4M3 with the sign bit set is negative"
echo "PASS test_fp4 ($(clients_elapsed))"
