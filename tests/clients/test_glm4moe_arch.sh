#!/usr/bin/env bash
# GLM-4.5 MoE (glm4moe) against llama.cpp's own code: the tiny fixture (rebox-mkfixture --arch glm4moe:
# layer 0 dense, layer 1 MoE with 4 experts and a shared expert, 1 MTP layer) in BF16, mcq-v1 (4 / 3
# bits, the router at 8) and MLX (mlx-lm's glm4_moe: 4 bits, experts stacked as switch_mlp, router float,
# no MTP layer) is converted by default (BF16 kept or Q4_1 blocks, F32 norms, router and exp_probs_b)
# and with --outtype f32, then
#  - rebox verify passes on every file;
#  - ggufpy_glm4moe.py (one process): every tensor (name, type, ne, values bit for bit) and every
#    glm4moe.* KV, in order, equal what the bundle's Glm4MoeModel chain writes for the same
#    (dequantized) checkpoint;
#  - llama_embed_pairs.mjs (one llama.cpp process): llama.cpp v0.4.0 loads every file and its f32
#    twin and their embeddings agree (cos >= 0.999);
#  - a missing expert is refused: one line, exit 2, no file.
# Usage: bash tests/clients/test_glm4moe_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init glm4moe_arch "${1:-}"
ggufpy_setup "$BUILD"

compare=() pairs=()
for fmt in float mcq mlx; do
  dir="$WORK/glm4moe-$fmt"
  "$MKFIXTURE" "$dir" --preset tiny --arch glm4moe --format "$fmt" --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
  "$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
  "$REBOX" verify "$dir" "$dir-f32.gguf" >/dev/null
  types=F32,Q4_1
  [[ $fmt == float ]] && types=F32,BF16
  compare+=("$dir" "$dir.gguf" "$types" "$dir" "$dir-f32.gguf" F32)
  pairs+=("glm4moe-$fmt:$dir.gguf:$dir-f32.gguf")
done
ggufpy "$CLIENTS_DIR/ggufpy_glm4moe.py" "$BUILD/llama-src" "${compare[@]}"
echo "glm4moe converted, verified and compared with llama.cpp's converter ($(clients_elapsed))"
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 3 --min-cos 0.999 \
  "${pairs[@]}"

bad="$WORK/glm4moe-expert-missing"
"$MKFIXTURE" "$bad" --preset tiny --arch glm4moe --glm4moe-defect expert-missing --force >/dev/null
set +e
out="$("$REBOX" convert "$bad" -o "$bad.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 2 && ! -e "$bad.gguf" ]] || { echo "FAIL: expert-missing defect: exit $code"; echo "$out"; exit 1; }
[[ $(grep -c "experts.3.up_proj" <<<"$out") -eq 1 ]] || { echo "FAIL: not one line: $out"; exit 1; }
echo "PASS test_glm4moe_arch ($(clients_elapsed))"
