#!/usr/bin/env bash
# The mmproj file (vision tower + projector) of a multimodal Gemma 3 checkpoint against llama.cpp's own
# `convert_hf_to_gguf.py --mmproj` code: tiny Gemma3ForConditionalGeneration fixtures (rebox-mkfixture
# --multimodal: gemma-3-4b-it's tensor names, config.json and preprocessor_config.json keys) with the tower in
# BF16 (float and MLX checkpoints), F16, and F32 beside a 4-bit mcq-v1 text model, converted by rebox
# (default, and --outtype f32 for BF16), then ggufpy_mmproj.py: every tensor (name, shape, type, values bit for
# bit) and every KV (type, value, order) equal what the bundle's Gemma3VisionModel -> MmprojModel -> ModelBase
# chain writes for the same source with the matching --outtype (prepare_tensors' type rules run from its own
# source); the one documented difference, exact F32 where the converter's forced-F16 projection rounds, is
# checked to round. Also: `rebox verify` passes on the pair, and the text GGUF holds no vision tensor.
# Usage: bash tests/clients/test_mmproj_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init mmproj_arch "${1:-}"
ggufpy_setup "$BUILD"

# name : mkfixture flags : rebox convert flags : the converter's --outtype the mmproj corresponds to
cases=(
  "bf16:--format float:: bf16"
  "bf16-f32:--format float:--outtype f32: f32"
  "f16:--format float --dtype f16:: f16"
  "mlx:--format mlx --recipe mixed_3_4:: bf16"
  "mcq:--format mcq:: f32"
)
for case in "${cases[@]}"; do
  IFS=: read -r name fixture_flags convert_flags outtype <<<"$case"
  dir="$WORK/${name%-f32}"
  [[ -d $dir ]] || "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --arch gemma3 --multimodal \
    $fixture_flags >/dev/null
  # shellcheck disable=SC2086
  "$REBOX" convert "$dir" -o "$WORK/$name.gguf" --quiet $convert_flags
  [[ -f "$WORK/mmproj-$name.gguf" ]] || { echo "FAIL: no mmproj-$name.gguf beside $name.gguf" >&2; exit 1; }
  "$REBOX" verify "$dir" "$WORK/$name.gguf" >/dev/null  # the text model and the mmproj found beside it
  ggufpy "$CLIENTS_DIR/ggufpy_mmproj.py" "$BUILD/llama-src" "$dir" "$WORK/mmproj-$name.gguf" $outtype
  ggufpy - "$WORK/$name.gguf" <<'PY'
import sys, gguf
vision = [t.name for t in gguf.GGUFReader(sys.argv[1]).tensors if t.name.startswith(("v.", "mm."))]
sys.exit(f"FAIL: the text GGUF holds {vision[:3]}" if vision else 0)
PY
done
echo "PASS test_mmproj_arch ($(clients_elapsed))"
