#!/usr/bin/env bash
# FP8 block-quantized checkpoints (docs/formats.md §6): rebox-mkfixture writes tiny qwen3 ones as
# DeepSeek-V3 / Qwen3 -FP8 store them (BF16 scales in 128 x 128 blocks; F16 scales in 48 x 40
# blocks, partial at the edges; F32 powers of two), and as llm-compressor's compressed-tensors FP8
# stores them (--fp8-layout ct-channel: BF16 weight_scale per output row; ct-block: F32 powers of two
# in 48 x 40 blocks) and as ModelOpt exports FP8 (--fp8-layout modelopt: hf_quant_config.json, one F32
# scale of 20 significant bits per weight), rebox converts each with
# --allow-lossless-fallback, and gguf-py (GGUFReader + gguf.quants.dequantize) must read every
# value exactly as ggufpy_fp8.py computes it in float64 from the checkpoint's raw bytes; the power-
# of-two file must be BF16 throughout. A deepseek2 fixture re-stored as FP8 (fp8_restore.py,
# power-of-two scales) converts and verifies. GLM-4.5-FP8's layout (fp8_restore.py --ct-channel on the
# glm4moe fixture: compressed-tensors float-quantized, channel strategy, BF16 weight_scale per row)
# converts with the fallback (F32: BF16 scales), verifies, and every tensor and glm4moe KV equals what
# the bundle's Glm4MoeModel chain writes for the checkpoint dequantized as the converter does
# (fp8_dequant.py --f32), and llama.cpp's embeddings of it agree with its F32 twin's (cos >= 0.999); one
# weight_scale of the wrong shape is one BLOCKER, exit 2, no file. GLM-4.7-Flash re-stored the same way
# against the Glm4MoeLiteModel chain likewise. llama.cpp (node-llama-cpp, one process) loads every file.
# F32 scales of 24 significant bits (DeepSeek-V3): a BLOCKER line, exit 2, no file.
# Usage: bash tests/clients/test_fp8.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init fp8 "${1:-}"
ggufpy_setup "$BUILD"

files=()
for spec in "bf16:bf16:any:" "f16:f16:any:--fp8-block 48 40" "pow2:pow2:BF16:" \
  "ct-channel:bf16:any:--fp8-layout ct-channel" \
  "ct-block:pow2:BF16:--fp8-layout ct-block --fp8-block 48 40" \
  "modelopt:f32-short:F32:--fp8-layout modelopt"; do
  IFS=: read -r name scales want extra <<<"$spec"
  dir="$WORK/fp8-$name"
  # shellcheck disable=SC2086 # $extra is a list of options
  "$MKFIXTURE" "$dir" --preset tiny --format fp8 --fp8-scales "$scales" $extra --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --allow-lossless-fallback --quiet
  "$REBOX" plan "$dir" --allow-lossless-fallback --json >"$dir.plan.json"
  ggufpy "$CLIENTS_DIR/ggufpy_fp8.py" "$dir" "$dir.gguf" "$dir.plan.json" "$want"
  files+=("$dir.gguf")
done

# deepseek2 (MLA: kv_b_proj split into attn_k_b / attn_v_b, stacked experts) re-stored as FP8 with
# DeepSeek-V3.1's power-of-two scales: converts as BF16, `rebox verify` (its own FP8 reading) passes.
"$MKFIXTURE" "$WORK/ds-float" --preset tiny --arch deepseek2 --force >/dev/null
"$GGUFPY_PYTHON" "$CLIENTS_DIR/fp8_restore.py" "$WORK/ds-float" "$WORK/ds-fp8"
"$REBOX" convert "$WORK/ds-fp8" -o "$WORK/ds-fp8.gguf" --allow-lossless-fallback --quiet
"$REBOX" verify "$WORK/ds-fp8" "$WORK/ds-fp8.gguf" >"$WORK/ds-fp8.verify"
grep -q "re-encoded tensors bit-identical: 30/30" "$WORK/ds-fp8.verify" ||
  { echo "FAIL: deepseek2 FP8: verify"; cat "$WORK/ds-fp8.verify"; exit 1; }
"$REBOX" plan "$WORK/ds-fp8" --allow-lossless-fallback --json >"$WORK/ds-fp8.plan.json"
"$GGUFPY_PYTHON" - "$WORK/ds-fp8.plan.json" <<'PY'
import json, sys
fp8 = [t for t in json.load(open(sys.argv[1]))["tensors"] if t.get("bits") == 8]  # the only codes here
bad = [t["gguf_name"] + " " + t["type"] for t in fp8 if t["type"] != "BF16"]
assert fp8 and not bad, f"FAIL: deepseek2 FP8 tensors not BF16: {bad or 'none planned'}"
print(f"  deepseek2 FP8 (ue8m0 scales): {len(fp8)} tensors BF16, attn_k_b / attn_v_b and experts included")
PY
files+=("$WORK/ds-fp8.gguf")

glm="$WORK/glm-fp8"
"$MKFIXTURE" "$WORK/glm-float" --preset tiny --arch glm4moe --force >/dev/null
"$GGUFPY_PYTHON" "$CLIENTS_DIR/fp8_restore.py" "$WORK/glm-float" "$glm" --ct-channel
"$REBOX" convert "$glm" -o "$glm.gguf" --allow-lossless-fallback --quiet
"$REBOX" verify "$glm" "$glm.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/fp8_dequant.py" "$glm" "$glm-deq" --f32 >/dev/null
ggufpy "$CLIENTS_DIR/ggufpy_glm4moe.py" "$GGUFPY_SRC" "$glm-deq" "$glm.gguf" F32,BF16
# GLM-4.7-Flash (deepseek2 with its MTP layer) in the same layout: kv_b_proj's FP8 rows split and
# attn_k_b transposed as exact float copies, against the Glm4MoeLiteModel chain.
"$MKFIXTURE" "$WORK/lite-float" --preset tiny --arch glm4_moe_lite --force >/dev/null
"$GGUFPY_PYTHON" "$CLIENTS_DIR/fp8_restore.py" "$WORK/lite-float" "$WORK/lite-fp8" --ct-channel
"$REBOX" convert "$WORK/lite-fp8" -o "$WORK/lite-fp8.gguf" --allow-lossless-fallback --quiet
"$REBOX" verify "$WORK/lite-fp8" "$WORK/lite-fp8.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/fp8_dequant.py" "$WORK/lite-fp8" "$WORK/lite-fp8-deq" --f32 >/dev/null
ggufpy "$CLIENTS_DIR/ggufpy_deepseek2.py" "$GGUFPY_SRC" "$WORK/lite-fp8-deq" "$WORK/lite-fp8.gguf" F32,BF16
files+=("$WORK/lite-fp8.gguf")
"$REBOX" convert "$glm" -o "$glm-f32.gguf" --outtype f32 --quiet
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 2 --min-cos 0.999 \
  "glm4moe-fp8:$glm.gguf:$glm-f32.gguf"
cp -r "$glm" "$glm-bad"
"$GGUFPY_PYTHON" - "$glm-bad/model.safetensors" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
n = int.from_bytes(raw[:8], "little")
header = json.loads(raw[8 : 8 + n])
header["model.layers.1.self_attn.q_proj.weight_scale"]["shape"] = [1, 128]  # [128, 1]: the same bytes
text = json.dumps(header).encode()
text += b" " * ((8 - len(text) % 8) % 8)
open(sys.argv[1], "wb").write(len(text).to_bytes(8, "little") + text + raw[8 + n :])
PY
set +e
"$REBOX" convert "$glm-bad" -o "$glm-bad.gguf" --allow-lossless-fallback --quiet 2>"$glm-bad.err"
rc=$?
set -e
[[ $rc -eq 2 && ! -e "$glm-bad.gguf" && $(grep -c "^BLOCKER" "$glm-bad.err") -eq 1 ]] &&
  grep -q "^BLOCKER .*q_proj.weight_scale has shape \[1, 128\] (expected \[128, 1\]" "$glm-bad.err" ||
  { echo "FAIL: glm4moe FP8 mis-shaped scale: exit $rc"; cat "$glm-bad.err"; exit 1; }
echo "  glm4moe FP8 (channel, BF16 scales): compared; a mis-shaped scale: one BLOCKER, exit 2, no file"

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
