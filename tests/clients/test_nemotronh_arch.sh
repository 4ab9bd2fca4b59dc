#!/usr/bin/env bash
# Nemotron-H dense (nemotron_h) against llama.cpp's own code: the tiny BF16 fixture (rebox-mkfixture
# --arch nemotron_h: 6 layers "M-M*-M" under backbone.*, Mamba2 mixers of 8 heads in 2 groups with a
# conv bias, attention with head_dim * heads != hidden_size, relu² MLPs) and its mcq-v1 twin
# (--format mcq: every matrix 4-bit / 32) are converted by default (BF16 kept / mcq-v1 as Q4_1; F32
# norms, ssm_a, ssm_d, ssm_dt, ssm_conv1d), and so are the tiny nemotron_h_moe fixture (--arch
# nemotron_h_moe: "MEM*EM", 4 relu² experts with a router, its score-correction bias and a shared
# expert) and its mcq-v1 twin (routers float), and the same with Nemotron 3 Super's LatentMoE
# (--nemotron-h-latent: moe_latent_size 32, fc1_latent_proj / fc2_latent_proj on each 'E' layer,
# latent-wide experts) in BF16 and mcq-v1, and with Nemotron 3 Super's MTP layers
# (--nemotron-h-mtp: mtp.layers.0 / .1, which NemotronHModel folds into one block 6) in BF16 and
# mcq-v1, each also with --outtype f32 and each verified by convert, then
#  - rebox verify passes again, and rebox check finds nothing (it reads the layer kinds back from
#    the per-layer feed_forward_length / head_count_kv arrays, as llama.cpp's loader does);
#  - ggufpy_nemotronh.py (one process): every tensor (name, type, ne, values bit for bit; ssm_a with
#    a correctly rounded exp standing in for torch's) and every nemotron_h.* KV, in order, equal what
#    the bundle's NemotronHModel chain writes for the same checkpoint (the mcq-v1 one dequantized by
#    source_values.py, the Q4_1 tensors dequantized by gguf-py);
#  - llama_embed_pairs.mjs (one llama.cpp process): llama.cpp v0.4.0 loads all sixteen files and
#    each pair's embeddings agree (cos >= 0.999); llama_generate_pairs.mjs: the LatentMoE and MTP
#    files generate, their next-token log-probabilities agreeing with their F32 twins' (cos >= 0.999);
#  - ModelOpt NVFP4 of both (--format modelopt-nvfp4): every FP4 value and .scale as the format defines
#    it (ggufpy_nvfp4_formats.py), the .scale kept on ssm_in / ssm_out and the shared expert too (the
#    Mamba2 graph and nemotron-h.cpp multiply them in), llama.cpp agreeing with the folded F32 twins
#    and disagreeing with a twin whose factors are doubled;
#  - Super's whole shape (LatentMoE and MTP, whose MoE sub-layer has the latent projections too):
#    the files equal the converter's, rebox check names the MTP block's two latent projections,
#    and llama.cpp v0.4.0 refuses them as check says ("wrong number of tensors": its loader
#    creates no latent projections on the MTP block); the same checkpoint without its mtp.*
#    tensors is written without the block (as --no-mtp) and loads;
#  - MLX (mlx-lm's nemotron_h layout: conv1d [channels, kernel, 1], experts stacked as
#    switch_mlp.fc1 / fc2, 4-bit / 64, routers float), GPTQ, AWQ and compressed-tensors int4 (every
#    *_proj Linear 4-bit / 32) of both, default and --outtype f32: every tensor and KV as the
#    converter writes the dequantized checkpoint (MLX with sanitize undone), verify and check pass,
#    llama.cpp v0.4.0 loads the eight files and embeds each like its F32 twin;
#  - a pattern one layer short (bad input, exit 1), a LatentMoE checkpoint without one
#    fc2_latent_proj, an MTP block without its final_layernorm, mtp.* tensors that config.json
#    counts no block for, an MLX expert stack without its scales and a GPTQ checkpoint with a true
#    act-order g_idx (BLOCKERs, exit 2) are refused: one line naming the tensor, no file.
# Usage: bash tests/clients/test_nemotronh_arch.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init nemotronh_arch "${1:-}"
ggufpy_setup "$BUILD"

dir="$WORK/nemotronh"
mcq="$WORK/nemotronh-mcq"
moe="$WORK/nemotronh-moe"
moeq="$WORK/nemotronh-moe-mcq"
lat="$WORK/nemotronh-latent"
latq="$WORK/nemotronh-latent-mcq"
mtp="$WORK/nemotronh-mtp"
mtpq="$WORK/nemotronh-mtp-mcq"
"$MKFIXTURE" "$dir" --preset tiny --arch nemotron_h --force >/dev/null
"$MKFIXTURE" "$mcq" --preset tiny --arch nemotron_h --format mcq --force >/dev/null
"$MKFIXTURE" "$moe" --preset tiny --arch nemotron_h_moe --force >/dev/null
"$MKFIXTURE" "$moeq" --preset tiny --arch nemotron_h_moe --format mcq --force >/dev/null
"$MKFIXTURE" "$lat" --preset tiny --arch nemotron_h_moe --nemotron-h-latent --force >/dev/null
"$MKFIXTURE" "$latq" --preset tiny --arch nemotron_h_moe --nemotron-h-latent --format mcq \
  --force >/dev/null
"$MKFIXTURE" "$mtp" --preset tiny --arch nemotron_h_moe --nemotron-h-mtp --force >/dev/null
"$MKFIXTURE" "$mtpq" --preset tiny --arch nemotron_h_moe --nemotron-h-mtp --format mcq \
  --force >/dev/null
all=("$dir" "$mcq" "$moe" "$moeq" "$lat" "$latq" "$mtp" "$mtpq")
for d in "${all[@]}"; do  # convert verifies each file (verify's own records)
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  "$REBOX" convert "$d" -o "$d-f32.gguf" --outtype f32 --quiet
done
"$REBOX" verify "$dir" "$dir.gguf" >/dev/null
"$REBOX" verify "$moe" "$moe.gguf" >/dev/null
"$REBOX" verify "$lat" "$lat.gguf" >/dev/null
"$REBOX" verify "$mtp" "$mtp.gguf" >/dev/null
for d in "${all[@]}"; do  # the layer kinds read back from the per-layer arrays
  "$REBOX" check "$d.gguf" >/dev/null || { "$REBOX" check "$d.gguf"; exit 1; }
done
ggufpy "$CLIENTS_DIR/ggufpy_nemotronh.py" "$BUILD/llama-src" "$dir" "$dir.gguf" F32,BF16 \
  "$dir" "$dir-f32.gguf" F32 "$mcq" "$mcq.gguf" F32,Q4_1 "$mcq" "$mcq-f32.gguf" F32 \
  "$moe" "$moe.gguf" F32,BF16 "$moe" "$moe-f32.gguf" F32 "$moeq" "$moeq.gguf" F32,Q4_1 \
  "$moeq" "$moeq-f32.gguf" F32 "$lat" "$lat.gguf" F32,BF16 "$lat" "$lat-f32.gguf" F32 \
  "$latq" "$latq.gguf" F32,Q4_1 "$latq" "$latq-f32.gguf" F32 "$mtp" "$mtp.gguf" F32,BF16 \
  "$mtp" "$mtp-f32.gguf" F32 "$mtpq" "$mtpq.gguf" F32,Q4_1 "$mtpq" "$mtpq-f32.gguf" F32
echo "nemotron_h, nemotron_h_moe, LatentMoE, MTP (BF16, mcq-v1) converted, verified and compared with llama.cpp's converter ($(clients_elapsed))"
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 4 --min-cos 0.999 \
  "nemotron_h:$dir.gguf:$dir-f32.gguf" "nemotron_h-mcq:$mcq.gguf:$mcq-f32.gguf" \
  "nemotron_h_moe:$moe.gguf:$moe-f32.gguf" "nemotron_h_moe-mcq:$moeq.gguf:$moeq-f32.gguf" \
  "latent:$lat.gguf:$lat-f32.gguf" "latent-mcq:$latq.gguf:$latq-f32.gguf" \
  "mtp:$mtp.gguf:$mtp-f32.gguf" "mtp-mcq:$mtpq.gguf:$mtpq-f32.gguf"
node "$CLIENTS_DIR/llama_generate_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --min-cos 0.999 \
  "latent:$lat.gguf:$lat-f32.gguf" "latent-mcq:$latq.gguf:$latq-f32.gguf" \
  "mtp:$mtp.gguf:$mtp-f32.gguf" "mtp-mcq:$mtpq.gguf:$mtpq-f32.gguf"

# Super's whole shape: LatentMoE and the MTP block, whose MoE sub-layer has the projections too.
sup="$WORK/nemotronh-super"
supq="$WORK/nemotronh-super-mcq"
"$MKFIXTURE" "$sup" --preset tiny --arch nemotron_h_moe --nemotron-h-latent --nemotron-h-mtp \
  --force >/dev/null
"$MKFIXTURE" "$supq" --preset tiny --arch nemotron_h_moe --nemotron-h-latent --nemotron-h-mtp \
  --format mcq --force >/dev/null
for d in "$sup" "$supq"; do
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  set +e
  out="$("$REBOX" check "$d.gguf" 2>&1)"
  set -e
  [[ $(grep -c "FINDING.*blk.6.ffn_latent_\(down\|up\).weight is on the MTP layer 6" <<<"$out") -eq 2 ]] ||
    { echo "FAIL: rebox check does not name the MTP block's latent projections: $out"; exit 1; }
done
ggufpy "$CLIENTS_DIR/ggufpy_nemotronh.py" "$BUILD/llama-src" "$sup" "$sup.gguf" F32,BF16 \
  "$supq" "$supq.gguf" F32,Q4_1
# The same checkpoint without its mtp.* tensors (config.json still counts the block): written
# without it, as the converter's --no-mtp writes it.
trunk="$WORK/nemotronh-super-trunk"
rm -rf "$trunk" && mkdir -p "$trunk" && cp "$lat"/* "$trunk"/
ggufpy -c 'import json, sys
p = sys.argv[1] + "/config.json"; c = json.load(open(p)); c["num_nextn_predict_layers"] = 1
c["mtp_hybrid_override_pattern"] = "*E"; json.dump(c, open(p, "w"), indent=2)' "$trunk"
"$REBOX" convert "$trunk" -o "$trunk.gguf" --quiet
node "$CLIENTS_DIR/llama_load.mjs" "$sup.gguf" "$trunk.gguf" >"$sup.load.txt"
grep -q "^REFUSED $sup.gguf: .*wrong number of tensors; expected 71, got 69" "$sup.load.txt" ||
  { echo "FAIL: llama.cpp v0.4.0 was expected to refuse Super's MTP block with latent projections"; cat "$sup.load.txt"; exit 1; }
grep -q "^LOADED $trunk.gguf" "$sup.load.txt" || { cat "$sup.load.txt"; exit 1; }
echo "  Super (LatentMoE + MTP): as the converter writes it; llama.cpp v0.4.0 refuses it as rebox check says; trunk-only loads"

# MLX (mlx-lm's nemotron_h layout: conv1d [channels, kernel, 1], the experts stacked as
# switch_mlp.fc1 / fc2, 4-bit / 64, the routers float), GPTQ, AWQ and compressed-tensors int4
# (every *_proj Linear 4-bit / 32; embeddings, lm_head and routers float) of both: each file and its
# --outtype f32 twin as the converter writes the dequantized checkpoint (MLX: sanitize undone), rebox
# verify and check pass, and llama.cpp embeds each like its F32 twin.
pq=()
pairs=()
for variant in nemotron_h nemotron_h_moe latent; do
  arch=$variant extra=()
  [[ $variant == latent ]] && arch=nemotron_h_moe extra=(--nemotron-h-latent)
  for fmt in mlx gptq awq compressed-tensors; do
    d="$WORK/nemotronh-$variant-$fmt"
    "$MKFIXTURE" "$d" --preset tiny --arch "$arch" "${extra[@]}" --format "$fmt" --force >/dev/null
    "$REBOX" convert "$d" -o "$d.gguf" --quiet
    "$REBOX" convert "$d" -o "$d-f32.gguf" --outtype f32 --quiet
    "$REBOX" verify "$d" "$d.gguf" >/dev/null
    "$REBOX" check "$d.gguf" >/dev/null || { "$REBOX" check "$d.gguf"; exit 1; }
    case "$fmt" in  # the routers F32 (exact), embeddings / lm_head as stored
      mlx) types=F32,Q4_1 ;;  # LatentMoE: + BF16, the modules of input width 32 mlx-lm leaves float
      gptq) types=F32,F16,Q4_0 ;;
      awq) types=F32,F16,Q4_0,Q4_1,Q5_0 ;;
      compressed-tensors) types=F32,BF16,Q4_0 ;;
    esac
    [[ $variant-$fmt == latent-mlx ]] && types=F32,BF16,Q4_1
    pq+=("$d" "$d.gguf" "$types" "$d" "$d-f32.gguf" F32)
    # The MoE MLX and compressed-tensors pairs measure 0.9734 / 0.9687, LatentMoE's
    # compressed-tensors pair 0.9988 (the rest >= 0.9994): their values are bit-exact above, but
    # on this content llama.cpp's Q8_1 activation rounding flips the top-2 expert choice against
    # the F32 twin on some tokens. With every expert used (num_experts_per_tok 4: no choice to
    # flip) the same weights agree >= 0.999 (0.9992 / 0.9997).
    min=0.999
    [[ $variant-$fmt == latent-compressed-tensors ]] && min=0.998
    if [[ $variant-$fmt == nemotron_h_moe-mlx || $variant-$fmt == nemotron_h_moe-compressed-tensors ]]; then
      min=0.96
      all="$d-all-experts"
      rm -rf "$all" && mkdir -p "$all" && cp "$d"/* "$all"/
      ggufpy -c 'import json, sys
p = sys.argv[1] + "/config.json"; c = json.load(open(p)); c["num_experts_per_tok"] = c["n_routed_experts"]
json.dump(c, open(p, "w"), indent=2)' "$all"
      "$REBOX" convert "$all" -o "$all.gguf" --quiet
      "$REBOX" convert "$all" -o "$all-f32.gguf" --outtype f32 --quiet
      pairs+=("$variant-$fmt-all-experts:$all.gguf:$all-f32.gguf")
    fi
    pairs+=("$variant-$fmt:$d.gguf:$d-f32.gguf:$min")
  done
done
ggufpy "$CLIENTS_DIR/ggufpy_nemotronh.py" "$BUILD/llama-src" "${pq[@]}"
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 4 --min-cos 0.999 \
  "${pairs[@]}"
echo "  MLX, GPTQ, AWQ, compressed-tensors (nemotron_h, nemotron_h_moe, LatentMoE): as the converter writes them ($(clients_elapsed))"

# ModelOpt NVFP4 (every matrix but the embedding and routers): each FP4 value and .scale as the
# format defines it, on the 15 / 19 tensors whose graph applies .scale (attention, ssm_in / ssm_out,
# the MLP or the experts and shared expert, output); llama.cpp embeds each file like its folded F32
# twin (every .scale multiplied in), and not like a twin with the factors doubled.
for spec in nemotron_h:15 nemotron_h_moe:19; do
  arch=${spec%:*} n=${spec#*:} d="$WORK/nemotronh-$arch-nvfp4"
  "$MKFIXTURE" "$d" --preset tiny --arch "$arch" --format modelopt-nvfp4 --force >/dev/null
  "$REBOX" convert "$d" -o "$d.gguf" --quiet
  "$REBOX" plan "$d" --json >"$d.plan.json"
  ggufpy "$CLIENTS_DIR/ggufpy_nvfp4_formats.py" "$GGUFPY_SRC" "$d" "$d.gguf" "$d.plan.json" \
    --scales "$n" --expect-exact --fold "$d-fold.gguf"
  ggufpy "$CLIENTS_DIR/ggufpy_nvfp4_formats.py" "$GGUFPY_SRC" "$d" "$d.gguf" "$d.plan.json" \
    --scales "$n" --fold "$d-wrong.gguf" --fold-wrong-factor >/dev/null
done
node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 4 --min-cos 0.999 \
  "nemotron_h-nvfp4:$WORK/nemotronh-nemotron_h-nvfp4.gguf:$WORK/nemotronh-nemotron_h-nvfp4-fold.gguf" \
  "nemotron_h_moe-nvfp4:$WORK/nemotronh-nemotron_h_moe-nvfp4.gguf:$WORK/nemotronh-nemotron_h_moe-nvfp4-fold.gguf"
d="$WORK/nemotronh-nemotron_h_moe-nvfp4"
if node "$CLIENTS_DIR/llama_embed_pairs.mjs" --corpus "$CLIENTS_DIR/corpus.txt" --lines 2 --min-cos 0.999 \
  "wrong-factor:$d.gguf:$d-wrong.gguf" >"$d-wrong.txt" 2>&1; then
  echo "FAIL: a twin with doubled factors agrees with the NVFP4 file (is .scale applied at all?)"
  cat "$d-wrong.txt"
  exit 1
fi
echo "  a twin with doubled factors disagrees ($(grep -o 'min cosine [0-9][0-9.]*' "$d-wrong.txt" | head -1))"

refused() {  # ARCH DEFECT CODE TEXT: converting the defective fixture exits CODE, one line with TEXT
  local bad="$WORK/${1%% *}-$2"
  # shellcheck disable=SC2086  # ARCH may carry a --format
  "$MKFIXTURE" "$bad" --preset tiny --arch $1 --nemotron-h-defect "$2" --force >/dev/null
  shift
  set +e
  out="$("$REBOX" convert "$bad" -o "$bad.gguf" 2>&1)"
  code=$?
  set -e
  [[ $code -eq $2 && ! -e "$bad.gguf" ]] || { echo "FAIL: $1 defect: exit $code"; echo "$out"; exit 1; }
  [[ $(grep -c "$3" <<<"$out") -eq 1 ]] || { echo "FAIL: $1: not one line with '$3': $out"; exit 1; }
}
refused nemotron_h pattern-length 1 "hybrid_override_pattern.*num_hidden_layers 6"  # bad input
refused nemotron_h_moe latent-missing 2 "blk.1.ffn_latent_up.weight"  # BLOCKER: a projection short
refused nemotron_h_moe mtp-partial 2 "blk.6.nextn.shared_head_norm.weight"  # BLOCKER: MTP partial
refused nemotron_h_moe mtp-no-count 2 "num_nextn_predict_layers"  # BLOCKER: mtp.* not counted
refused "nemotron_h_moe --format mlx" mlx-missing-scales 2 "'backbone.layers.1.mixer.switch_mlp.fc1.scales'"
refused "nemotron_h --format gptq" gptq-actorder 2 \
  "BLOCKER backbone.layers.0.mixer.in_proj.weight: g_idx (act-order)"  # not exact: act-order
echo "PASS test_nemotronh_arch ($(clients_elapsed))"
