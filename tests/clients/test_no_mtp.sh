#!/usr/bin/env bash
# convert --no-mtp against llama.cpp's own converter and loader: the tiny fixtures of every family
# whose converter class takes --no-mtp (Qwen3.5, Qwen3.5 MoE, Qwen3-Next, GLM-4.5, GLM-4.7-Flash,
# Nemotron 3 with MTP, and Nemotron 3 Super's LatentMoE + MTP) converted with --no-mtp, then
#  - every tensor (name, type, ne, values bit for bit) and every {arch}.* KV equal what the bundle's
#    converter class chain writes with its no_mtp set, as `convert_hf_to_gguf.py --no-mtp` sets it
#    (ggufpy_qwen35.py, ggufpy_glm4moe.py, ggufpy_deepseek2.py, ggufpy_nemotronh.py with
#    TYPES:no-mtp): no MTP tensor, block_count the main layers, no nextn_predict_layers;
#  - rebox verify --no-mtp passes, and plain rebox verify of the same file fails (exit 3: the
#    checkpoint's MTP layers are missing from it);
#  - llama.cpp v0.4.0 loads every file, Super's included (it refuses Super's default file, whose
#    MTP block has latent projections its loader does not create);
#  - a family whose converter class refuses --no-mtp (qwen3, deepseek2) is one line, exit 1, no
#    file.
# Usage: bash tests/clients/test_no_mtp.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init no_mtp "${1:-}"
ggufpy_setup "$BUILD"
fail() { echo "FAIL: $*" >&2; exit 1; }

declare -A fixture=(
  [qwen35]="--arch qwen35" [qwen35moe]="--arch qwen35moe" [qwen3next]="--arch qwen3next"
  [glm4moe]="--arch glm4moe" [glm4moe-lite]="--arch glm4_moe_lite"
  [nemotronh]="--arch nemotron_h_moe --nemotron-h-mtp"
  [nemotronh-super]="--arch nemotron_h_moe --nemotron-h-latent --nemotron-h-mtp"
)
files=()
for name in "${!fixture[@]}"; do
  dir="$WORK/$name"
  # shellcheck disable=SC2086  # the fixture options are words
  "$MKFIXTURE" "$dir" --preset tiny ${fixture[$name]} --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --no-mtp --quiet
  "$REBOX" verify "$dir" "$dir.gguf" --no-mtp >/dev/null || fail "verify --no-mtp of $name"
  code=0
  "$REBOX" verify "$dir" "$dir.gguf" >"$dir.verify.txt" 2>&1 || code=$?
  [[ $code == 3 ]] || { cat "$dir.verify.txt" >&2; fail "plain verify of $name's --no-mtp file exited $code, not 3"; }
  files+=("$dir.gguf")
done
T=F32,BF16:no-mtp
ggufpy "$CLIENTS_DIR/ggufpy_qwen35.py" "$BUILD/llama-src" "$WORK/qwen35" "$WORK/qwen35.gguf" $T \
  "$WORK/qwen35moe" "$WORK/qwen35moe.gguf" $T "$WORK/qwen3next" "$WORK/qwen3next.gguf" $T
ggufpy "$CLIENTS_DIR/ggufpy_glm4moe.py" "$BUILD/llama-src" "$WORK/glm4moe" "$WORK/glm4moe.gguf" $T
ggufpy "$CLIENTS_DIR/ggufpy_deepseek2.py" "$BUILD/llama-src" "$WORK/glm4moe-lite" \
  "$WORK/glm4moe-lite.gguf" $T
ggufpy "$CLIENTS_DIR/ggufpy_nemotronh.py" "$BUILD/llama-src" "$WORK/nemotronh" "$WORK/nemotronh.gguf" $T \
  "$WORK/nemotronh-super" "$WORK/nemotronh-super.gguf" $T 2>&1 | grep -v "^Duplicated key\|^Ignoring head_dim"

(cd "$CLIENTS_DIR" && node llama_load.mjs "${files[@]}") >"$WORK/load.txt"
for file in "${files[@]}"; do
  grep -q "^LOADED $file" "$WORK/load.txt" || { cat "$WORK/load.txt" >&2; fail "llama.cpp refused $file"; }
done

for arch in qwen3 deepseek2; do
  dir="$WORK/refused-$arch"
  "$MKFIXTURE" "$dir" --preset tiny --arch "$arch" --force >/dev/null
  code=0
  "$REBOX" convert "$dir" -o "$dir.gguf" --no-mtp >"$dir.txt" 2>&1 || code=$?
  [[ $code == 1 && ! -e "$dir.gguf" && $(wc -l <"$dir.txt") == 1 ]] ||
    { cat "$dir.txt" >&2; fail "--no-mtp on $arch: exit $code, not one line, exit 1 and no file"; }
  grep -q "^rebox: --no-mtp: llama.cpp's converter takes it only for" "$dir.txt" || fail "$(cat "$dir.txt")"
done
echo "PASS test_no_mtp: ${#files[@]} files as the converter's --no-mtp writes them, verified, loaded ($(clients_elapsed))"
