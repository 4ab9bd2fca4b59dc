#!/usr/bin/env bash
# FP4 checkpoints from NVIDIA's toolchain (docs/formats.md §2.2): ModelOpt NVFP4 and compressed-tensors
# nvfp4- / mxfp4-pack-quantized. rebox-mkfixture writes each with its own packer; rebox converts it to
# NVFP4 / MXFP4 blocks plus F32 <tensor>.scale per-tensor factors; gguf-py (GGUFReader +
# gguf.quants.dequantize) must read back every value bit for bit as ggufpy_nvfp4_formats.py computes it
# from the checkpoint by the formats' definitions, every .scale must be the source's factor (ModelOpt
# weight_scale_2's bits; compressed-tensors float32(1)/g, reported not bit-identical), and the standalone
# `rebox verify` must agree (and fail on a GGUF whose .scale was changed). node-llama-cpp embeds qwen3 /
# llama ModelOpt files like F32 twins in which gguf-py multiplied each .scale in (cosine >= 0.999; a twin
# with each factor doubled must disagree). Refusals (BLOCKER, exit 2, no output file): a factor other
# than 1 on a tensor whose llama.cpp graph ignores .scale (qwen2 FFN), compressed-tensors NVFP4 without
# --allow-inexact-global-scale, an E8M0 0xFF / E4M3 NaN / negative scale byte, a weight_scale shape
# that disagrees with the weight, rows not whole NVFP4 blocks of 64.
# Usage: bash tests/clients/test_nvfp4_formats.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init nvfp4_formats "${1:-}"
ggufpy_setup "$BUILD"

# check FORMAT ARCH SCALES [mkfixture/convert options...]: convert, verify, gguf-py bit-exactness.
check() {
  local format="$1" arch="$2" scales="$3"
  shift 3
  local dir="$WORK/m-${arch/phi3/p3}-$format" # "phi3" in the name would trigger llama.cpp's Phi-3 vocab rule
  local mk=() cv=() exact=--expect-exact
  for a in "$@"; do
    if [[ "$a" == --allow-inexact-global-scale ]]; then cv+=("$a"); exact=--expect-inexact; else mk+=("$a"); fi
  done
  "$MKFIXTURE" "$dir" --preset tiny --arch "$arch" --format "$format" "${mk[@]}" --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet "${cv[@]}"
  "$REBOX" plan "$dir" --json "${cv[@]}" >"$dir.plan.json"
  "$REBOX" verify "$dir" "$dir.gguf" >"$dir.verify.txt"
  if [[ $exact == --expect-inexact ]]; then
    grep -q "NOT bit-identical by request" "$dir.verify.txt" ||
      { echo "FAIL: $format $arch: verify does not say 'NOT bit-identical'"; cat "$dir.verify.txt"; exit 1; }
  fi
  [[ $format == ct-mxfp4 ]] && exact=--expect-exact
  ggufpy "$CLIENTS_DIR/ggufpy_nvfp4_formats.py" "$GGUFPY_SRC" "$dir" "$dir.gguf" "$dir.plan.json" \
    --scales "$scales" $exact
}
# .scale counts: every FP4 tensor whose graph applies it (tiny fixtures: 2 layers; llama-family untied)
check modelopt-nvfp4 qwen3 14                        # attention, FFN
check modelopt-nvfp4 llama 15                        # attention, FFN, output
check modelopt-nvfp4 qwen3_moe 14                    # attention, experts [E]
check modelopt-nvfp4 mixtral 15                      # llama graph: attention, experts, output
check modelopt-nvfp4 qwen2 8 --fp4-ffn-scale-one     # attention only (FFN factors 1)
check modelopt-nvfp4 qwen2_moe 9 --fp4-ffn-scale-one # attention, output
check modelopt-nvfp4 gemma2 8 --fp4-ffn-scale-one
check modelopt-nvfp4 mistral3 15                     # llama graph: attention (q/k rows permuted), FFN, output
check ct-nvfp4 qwen3 14 --allow-inexact-global-scale
check ct-nvfp4 llama 15 --allow-inexact-global-scale
check ct-mxfp4 qwen3 0
check ct-mxfp4 llama 0
check ct-mxfp4 qwen3_moe 0

# verify's .scale check can fail: the same file with blk.0.attn_q.scale doubled.
dir="$WORK/m-qwen3-modelopt-nvfp4"
ggufpy - "$dir.gguf" "$dir-bad.gguf" <<'EOF'
import shutil, sys
import numpy as np
import gguf
src, dst = sys.argv[1:3]
shutil.copy(src, dst)
t = next(t for t in gguf.GGUFReader(src).tensors if t.name == "blk.0.attn_q.scale")
with open(dst, "r+b") as f:
    f.seek(t.data_offset)
    f.write((np.asarray(t.data, dtype=np.float32) * 2).tobytes())
EOF
if "$REBOX" verify "$dir" "$dir-bad.gguf" >"$dir-bad.txt" 2>&1; then
  echo "FAIL: verify accepted a doubled blk.0.attn_q.scale"; cat "$dir-bad.txt"; exit 1
fi
echo "  verify refuses a doubled blk.0.attn_q.scale"

# llama.cpp applies the .scale tensors: qwen3 and llama ModelOpt files with the real Qwen3 tokenizer
# embed like their folded F32 twins; a twin with every factor doubled does not.
for arch in qwen3 llama; do
  dir="$WORK/embed-$arch"
  "$MKFIXTURE" "$dir" --preset tiny --arch "$arch" --format modelopt-nvfp4 --tokenizer qwen3 \
    --qwen3-tokenizer "$QWEN3_TOKENIZER" --embedding-eos --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
  "$REBOX" plan "$dir" --json >"$dir.plan.json"
  n=14
  [[ $arch == llama ]] && n=15
  ggufpy "$CLIENTS_DIR/ggufpy_nvfp4_formats.py" "$GGUFPY_SRC" "$dir" "$dir.gguf" "$dir.plan.json" \
    --scales $n --expect-exact --fold "$dir-f32.gguf" >/dev/null
  embed_job --label "$arch-modelopt-nvfp4" --q4 "$dir.gguf" --f32 "$dir-f32.gguf" \
    --corpus "$CLIENTS_DIR/corpus.txt" --lines 6 --min-cos 0.999 --kind NVFP4
done
embed_jobs_run
dir="$WORK/embed-qwen3"
ggufpy "$CLIENTS_DIR/ggufpy_nvfp4_formats.py" "$GGUFPY_SRC" "$dir" "$dir.gguf" "$dir.plan.json" \
  --scales 14 --fold "$dir-wrong.gguf" --fold-wrong-factor >/dev/null
if node "$CLIENTS_DIR/llama_embed.mjs" --label "qwen3-wrong-factor" --q4 "$dir.gguf" --f32 "$dir-wrong.gguf" \
  --corpus "$CLIENTS_DIR/corpus.txt" --lines 2 --min-cos 0.999 --kind NVFP4 >"$dir-wrong.txt" 2>&1; then
  echo "FAIL: a twin with doubled factors agrees with the NVFP4 file (is .scale applied at all?)"
  cat "$dir-wrong.txt"
  exit 1
fi
echo "  a twin with doubled factors disagrees ($(grep -o 'min cosine [0-9.]*' "$dir-wrong.txt" | head -1))"

refuse() { # name expected-tensor expected-text mkfixture-options...
  local name="$1" tensor="$2" text="$3"
  shift 3
  local dir="$WORK/bad-$name"
  "$MKFIXTURE" "$dir" --preset tiny "$@" --force >/dev/null
  set +e
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet 2>"$dir.err"
  local rc=$?
  set -e
  [[ $rc -eq 2 ]] || { echo "FAIL: $name: exit $rc (expected 2)"; cat "$dir.err"; exit 1; }
  [[ ! -e "$dir.gguf" ]] || { echo "FAIL: $name: an output file was written"; exit 1; }
  grep -q "^BLOCKER $tensor: .*$text" "$dir.err" ||
    { echo "FAIL: $name: no BLOCKER line on $tensor saying '$text'"; cat "$dir.err"; exit 1; }
  echo "  $name: refused ($(grep -c '^BLOCKER' "$dir.err") BLOCKER): $(grep -m1 "^BLOCKER $tensor" "$dir.err" | cut -c1-150)"
}
Q="model.layers.0.self_attn.q_proj.weight"
refuse qwen2-ffn-factor model.layers.0.mlp.gate_proj.weight "llama.cpp's qwen2 graph ignores blk.0.ffn_gate.scale" \
  --arch qwen2 --format modelopt-nvfp4
refuse ct-nvfp4-no-flag "$Q" "fl32(1/global_scale) = .* off by [0-9.e-]* relative" --format ct-nvfp4
refuse modelopt-nan "$Q" "weight_scale byte 0x7f at index 0: E4M3 0x7f/0xff is NaN" \
  --format modelopt-nvfp4 --fp4-bad-scale nan
refuse modelopt-negative "$Q" "weight_scale byte 0xb8 at index 0: E4M3 with the sign bit set is negative" \
  --format modelopt-nvfp4 --fp4-bad-scale negative
refuse ct-nvfp4-negative "$Q" "weight_scale byte 0xb8 at index 0: E4M3 with the sign bit set is negative" \
  --format ct-nvfp4 --fp4-bad-scale negative
refuse ct-mxfp4-nan "$Q" "weight_scale byte 0xff at index 0: E8M0 0xff is NaN" --format ct-mxfp4 --fp4-bad-scale nan
refuse modelopt-shape "$Q" "weight_scale has shape \[64, 3\] (expected \[64, 4\]" \
  --format modelopt-nvfp4 --fp4-bad-shape
refuse ct-mxfp4-shape "$Q" "weight_scale has shape \[64, 1\] (expected \[64, 2\]" --format ct-mxfp4 --fp4-bad-shape
refuse modelopt-cols-96 "$Q" "cols 96 is not a multiple of 64: GGUF rows must be whole NVFP4 blocks" \
  --format modelopt-nvfp4 --hidden 96
echo "PASS test_nvfp4_formats ($(clients_elapsed))"
