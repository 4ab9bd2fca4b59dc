#!/usr/bin/env bash
# Mixture-of-experts conversion benchmark: peak RSS (GNU time -v) of `rebox convert` (with its
# verification) on a checkpoint with Qwen3-30B-A3B's shapes for its first two layers (128 experts of
# 768 x 2048, 8 used, 32 heads / 4 kv heads of 128), once as MLX (experts pre-stacked in switch_mlp
# tensors) and once as mcq-v1 (one tensor per expert, stacked by rebox). Pass mark: 256 MB peak RSS;
# the script exits 1 above it. Stacking streams one expert at a time, so the figure stays far below
# one layer's expert bytes (~300 MB at 4 bits).
# Usage: bench/moe.sh BUILD_DIR [qwen3-30b-a3b-2layers (default) | tiny]
set -euo pipefail
build=$(cd "$1" && pwd); preset=${2:-qwen3-30b-a3b-2layers}
pass_kb=$((256 * 1024))
work="$build/bench-work/moe-$preset"; mkdir -p "$work"
status=0
for format in mlx mcq; do
  model="$work/$format"
  if [[ ! -f "$work/.stamp-$format" ]]; then
    rm -rf "$model"
    "$build/rebox-mkfixture" "$model" --preset "$preset" --arch qwen3_moe --format "$format" \
      --tokenizer small --force >/dev/null
    touch "$work/.stamp-$format"
  fi
  out="$work/$format.gguf"; rm -f "$out"
  in_bytes=$(cat "$model"/*.safetensors | wc -c)
  cat "$model"/*.safetensors >/dev/null   # warm the page cache
  /usr/bin/time -v -o "$work/time.$format" "$build/rebox" convert "$model" -o "$out" --quiet --force
  rss_kb=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$work/time.$format")
  wall=$(sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.$format")
  verdict=PASS
  if (( rss_kb > pass_kb )); then verdict=FAIL; status=1; fi
  printf 'moe %s (%s): input %d bytes, output %d bytes, convert+verify %s, peak RSS %.1f MB (pass mark 256 MB): %s\n' \
    "$preset" "$format" "$in_bytes" "$(stat -c %s "$out")" "$wall" "$(echo "$rss_kb / 1024" | bc -l)" "$verdict"
  rm -f "$out"
done
exit "$status"
