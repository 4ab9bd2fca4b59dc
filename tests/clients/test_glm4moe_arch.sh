#!/usr/bin/env bash
# GLM-4.5 MoE (glm4moe) against llama.cpp's own code: the tiny fixture (rebox-mkfixture --arch glm4moe:
# layer 0 dense, layer 1 MoE with 4 experts and a shared expert, 1 MTP layer) in BF16 is converted by
# default (BF16 kept, F32 norms, router and exp_probs_b) and with --outtype f32, then
#  - rebox verify passes on every file;
#  - ggufpy_glm4moe.py (one process): every tensor (name, type, ne, values bit for bit) and every
#    glm4moe.* KV, in order, equal what the bundle's Glm4MoeModel chain writes for the same checkpoint;
#  - llama_embed_pairs.mjs (one llama.cpp process): llama.cpp v0.4.0 loads the file and its f32 twin
#    and their embeddings agree (cos >= 0.999);
#  - a missing expert is refused: one line, exit 2, no file.
# Usage: bash tests/clients/test_glm4moe_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init glm4moe_arch "${1:-}"
ggufpy_setup "$BUILD"

dir="$WORK/glm4moe"
"$MKFIXTURE" "$dir" --preset tiny --arch glm4moe --force >/dev/null
"$REBOX" convert "$dir" -o "$dir.gguf" --quiet
"$REBOX" convert "$dir" -o "$dir-f32.gguf" --outtype f32 --quiet
"$REBOX" verify "$dir" "$dir-f32.gguf" >/dev/null
ggufpy "$CLIENTS_DIR/ggufpy_glm4moe.py" "$BUILD/llama-src" "$dir" "$dir.gguf" F32,BF16 \
  "$dir" "$dir-f32.gguf" F32
echo "glm4moe converted, verified and compared with llama.cpp's converter ($(clients_elapsed))"
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 3 --min-cos 0.999 \
  "glm4moe:$dir.gguf:$dir-f32.gguf"

bad="$WORK/glm4moe-expert-missing"
"$MKFIXTURE" "$bad" --preset tiny --arch glm4moe --glm4moe-defect expert-missing --force >/dev/null
set +e
out="$("$REBOX" convert "$bad" -o "$bad.gguf" 2>&1)"
code=$?
set -e
[[ $code -eq 2 && ! -e "$bad.gguf" ]] || { echo "FAIL: expert-missing defect: exit $code"; echo "$out"; exit 1; }
[[ $(grep -c "experts.3.up_proj" <<<"$out") -eq 1 ]] || { echo "FAIL: not one line: $out"; exit 1; }
echo "PASS test_glm4moe_arch ($(clients_elapsed))"
