#!/usr/bin/env bash
# rebox check on a text model + mmproj pair, against what llama.cpp v0.4.0's mtmd requires
# (tools/mtmd/clip.cpp, clip-impl.h, mtmd.cpp of the bundled source): the pair rebox convert
# writes for a multimodal Gemma 3 is clean (found beside, and given with --mmproj), and for a Qwen2.5-VL
# (whose width is mm.2.bias's, and whose n_wa_pattern and mm.0 / mm.2 are required) and a Qwen3-VL (whose
# width counts its deepstack mergers, matched by the text model's n_deepstack_layers); a text model
# of another width, a KV of the wrong type, a projector type outside the bundle's
# PROJECTOR_TYPE_NAMES and a missing projector tensor are each one FINDING line and exit 1; every
# name of the bundle's table is known. (test_mmproj_mtmd.sh shows mtmd itself refusing the width.)
# Usage: bash tests/clients/test_check_mmproj.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init check_mmproj "${1:-}"
ggufpy_setup "$BUILD"

fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_finding TEXT ARGS...: exit 1 and exactly one FINDING line, holding TEXT.
expect_finding() {
  local text="$1" out rc=0
  shift
  out="$("$REBOX" check "$@")" || rc=$?
  [[ $rc == 1 ]] || fail "rebox check $* exited $rc, expected 1: $out"
  [[ "$(grep -c '^FINDING: ' <<<"$out")" == 1 ]] || fail "rebox check $*: not one FINDING: $out"
  grep -q "^FINDING: .*$text" <<<"$out" || fail "rebox check $*: no finding with '$text': $out"
}

"$MKFIXTURE" "$WORK/fx" --preset tiny --tokenizer small --arch gemma3 --multimodal --format float >/dev/null
"$REBOX" convert "$WORK/fx" -o "$WORK/pair.gguf" --quiet
mmproj="$WORK/mmproj-pair.gguf"
out="$("$REBOX" check "$WORK/pair.gguf")" || fail "the converted pair: $out"
grep -q "^OK: 2 file(s)" <<<"$out" || fail "mmproj-pair.gguf beside pair.gguf was not checked: $out"
"$REBOX" check "$WORK/pair.gguf" --mmproj "$mmproj" >/dev/null || fail "the pair with --mmproj"

# mtmd.cpp: llama_model_n_embd_inp(text) must equal the projection width (64 here).
"$MKFIXTURE" "$WORK/wide" --preset tiny --tokenizer small --arch gemma3 --format float --hidden 96 >/dev/null
"$REBOX" convert "$WORK/wide" -o "$WORK/wide.gguf" --quiet
expect_finding "gemma3.embedding_length is 96 .* projects to 64" "$WORK/wide.gguf" --mmproj "$mmproj"

# clip.cpp's get_u32 ends in gguf_get_val_u32, which asserts UINT32.
"$REBOX" meta -q "$mmproj" -o "$WORK/int32.gguf" --delete clip.vision.image_size \
  --set clip.vision.image_size:INT32=64
expect_finding "clip.vision.image_size has type INT32" "$WORK/pair.gguf" --mmproj "$WORK/int32.gguf"

# The gemma3 projector's tensors (clip_model_loader::load_tensors).
"$REBOX" meta -q "$mmproj" -o "$WORK/no-norm.gguf" --rename-tensor mm.soft_emb_norm.weight=mm.other.weight
expect_finding "mm.soft_emb_norm.weight missing" "$WORK/no-norm.gguf"

# Qwen2.5-VL (qwen2.5vl_merger): the pair is clean; clip_n_mmproj_embd is mm.2.bias's width;
# load_hparams requires clip.vision.n_wa_pattern, load_tensors mm.0 / mm.2 (weight and bias).
"$MKFIXTURE" "$WORK/qfx" --preset tiny --tokenizer small --arch qwen2_5_vl --format float --no-pooling >/dev/null
"$REBOX" convert "$WORK/qfx" -o "$WORK/qpair.gguf" --quiet
qmm="$WORK/mmproj-qpair.gguf"
out="$("$REBOX" check "$WORK/qpair.gguf")" || fail "the Qwen2.5-VL pair: $out"
grep -q "^OK: 2 file(s), .* 0 warning(s)" <<<"$out" || fail "the Qwen2.5-VL pair, not checked whole: $out"
expect_finding "gemma3.embedding_length is 96 .* projects to 64" "$WORK/wide.gguf" --mmproj "$qmm"
"$REBOX" meta -q "$qmm" -o "$WORK/no-wa.gguf" --delete clip.vision.n_wa_pattern
expect_finding "clip.vision.n_wa_pattern missing" "$WORK/qpair.gguf" --mmproj "$WORK/no-wa.gguf"
"$REBOX" meta -q "$qmm" -o "$WORK/no-mm0.gguf" --rename-tensor mm.0.bias=mm.9.bias
expect_finding "mm.0.bias missing" "$WORK/no-mm0.gguf"

# Qwen3-VL (qwen3vl_merger): clip_n_mmproj_embd is mm.2.bias's width times 1 + the layers holding a deepstack
# merger (v.deepstack.N.fc1.weight), which the text model's n_deepstack_layers must match (llama.cpp reads a
# missing key as 0); a deepstack merger missing a part is a finding.
"$MKFIXTURE" "$WORK/q3fx" --preset tiny --tokenizer small --arch qwen3_vl --format float --no-pooling >/dev/null
"$REBOX" convert "$WORK/q3fx" -o "$WORK/q3pair.gguf" --quiet
q3mm="$WORK/mmproj-q3pair.gguf"
out="$("$REBOX" check "$WORK/q3pair.gguf")" || fail "the Qwen3-VL pair: $out"
grep -q "^OK: 2 file(s), .* 0 warning(s)" <<<"$out" || fail "the Qwen3-VL pair, not checked whole: $out"
"$REBOX" meta -q "$WORK/q3pair.gguf" -o "$WORK/q3-nokey.gguf" --delete qwen3vl.n_deepstack_layers
expect_finding "qwen3vl.n_deepstack_layers missing, but .* has 2 deepstack mergers" "$WORK/q3-nokey.gguf" \
  --mmproj "$q3mm"
"$REBOX" meta -q "$WORK/q3pair.gguf" -o "$WORK/q3-one.gguf" --set qwen3vl.n_deepstack_layers=1
expect_finding "qwen3vl.embedding_length is 128 .* projects to 192" "$WORK/q3-one.gguf" --mmproj "$q3mm"
"$REBOX" meta -q "$q3mm" -o "$WORK/q3-nofc2.gguf" --rename-tensor v.deepstack.2.fc2.weight=v.deepstack.2.fc9.weight
expect_finding "v.deepstack.2.fc2.weight missing" "$WORK/q3-nofc2.gguf"

# Projector names: the bundle's PROJECTOR_TYPE_NAMES, read from its clip-impl.h.
names="$(sed -n '/PROJECTOR_TYPE_NAMES = {/,/^};/p' "$GGUFPY_SRC/tools/mtmd/clip-impl.h" |
  grep -o '{ *PROJECTOR_TYPE_[A-Z0-9_]*, *"[^"]*"' | sed 's/.*"\(.*\)"/\1/')"
[[ "$(wc -l <<<"$names")" -ge 50 ]] || fail "could not read PROJECTOR_TYPE_NAMES from clip-impl.h"
expect_finding 'clip.projector_type is "gemma99"' "$(
  "$REBOX" meta -q "$mmproj" -o "$WORK/unknown.gguf" --set clip.projector_type=gemma99
  echo "$WORK/unknown.gguf")"
while read -r name; do
  "$REBOX" meta -q -f "$mmproj" -o "$WORK/named.gguf" --set "clip.projector_type=$name"
  out="$("$REBOX" check "$WORK/named.gguf" || true)"
  if grep -q "does not know" <<<"$out"; then
    fail "projector type '$name' of llama.cpp's table was called unknown"
  fi
done <<<"$names"
echo "PASS test_check_mmproj ($(clients_elapsed))"
