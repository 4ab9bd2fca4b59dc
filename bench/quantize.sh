#!/usr/bin/env bash
# Quantization benchmark: one-pass `rebox convert --quantize TYPE` (verification included) from a
# BF16 checkpoint against llama.cpp's own llama-quantize (built from the source bundled in the npm
# test clients against their prebuilt libllama.v0.4.0.so) on the exact BF16 GGUF of the same
# checkpoint, same thread count, back to back in the same run (reverse order every other run), page
# cache warm and no writeback pending. Prints per run the wall and CPU seconds and peak RSS of both
# and rebox's wall-time ratio to llama-quantize; then the median ratio and its range, and whether
# the two files are identical (they must be: `cmp`).
# Usage: bench/quantize.sh BUILD_DIR [qwen3-0.6b (default) | qwen3-8b | tiny]
#   RUNS=N (default 3, tiny 1), THREADS=N (default 2), TYPE=q4_k_m (default)
set -euo pipefail
build=$(cd "$1" && pwd); preset=${2:-qwen3-0.6b}
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-$([[ "$preset" == tiny ]] && echo 1 || echo 3)}
threads=${THREADS:-2}; qtype=${TYPE:-q4_k_m}
work="$build/bench-work/quantize-$preset"; mkdir -p "$work"

# llama-quantize from the bundled source (the test clients' oracle; needs tests/clients/node_modules).
source "$here/../tests/clients/lib/common.sh"
source "$here/../tests/clients/lib/gguf_py.sh"
source "$here/../tests/clients/lib/llama_quantize.sh"
BUILD="$build"; ggufpy_setup "$build" >/dev/null; llama_quantize_setup

model="$work/model"; exact="$work/exact-bf16.gguf"
# The checkpoint is kept while rebox-mkfixture is the same; the exact GGUF while rebox is (its KVs
# are what llama-quantize copies).
fixture_key=$(sha256sum <"$build/rebox-mkfixture" | cut -c1-16)
exact_key=$(cat "$build/rebox" "$build/rebox-mkfixture" | sha256sum | cut -c1-16)
if [[ "$(cat "$work/.stamp" 2>/dev/null)" != "$fixture_key" ]]; then
  rm -rf "$model" "$exact"
  "$build/rebox-mkfixture" "$model" --preset "$preset" --format float --dtype bf16 --tokenizer small \
    --force >/dev/null
  echo "$fixture_key" >"$work/.stamp"
fi
if [[ "$(cat "$work/.stamp-exact" 2>/dev/null)" != "$exact_key" || ! -f "$exact" ]]; then
  "$build/rebox" convert "$model" -o "$exact" --quiet --force
  echo "$exact_key" >"$work/.stamp-exact"
fi

field() { sed -n "s/^[[:space:]]*$1: //p" "$2"; }
seconds() {  # h:mm:ss or m:ss.ss -> seconds
  awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }' <<<"$1"
}
measure() {  # NAME COMMAND...: runs it under GNU time, prints "wall cpu rss_mb"
  local name=$1; shift
  sync
  /usr/bin/time -v -o "$work/time.$name" "$@" >/dev/null 2>"$work/err.$name" ||
    { cat "$work/err.$name" >&2; exit 1; }
  local wall user sys rss
  wall=$(seconds "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$work/time.$name")")
  user=$(field 'User time (seconds)' "$work/time.$name")
  sys=$(field 'System time (seconds)' "$work/time.$name")
  rss=$(field 'Maximum resident set size (kbytes)' "$work/time.$name")
  echo "$wall $(echo "$user + $sys" | bc -l) $(echo "$rss / 1024" | bc -l)"
}

ratios=()
cat "$model"/*.safetensors "$exact" >/dev/null  # warm the page cache
for ((run = 1; run <= runs; run++)); do
  rm -f "$work/rebox.gguf" "$work/llama.gguf"; sync
  rebox_cmd=("$build/rebox" convert "$model" -o "$work/rebox.gguf" --quantize "$qtype" -t "$threads" --quiet --force)
  llama_cmd=("$LLAMA_QUANTIZE" "$exact" "$work/llama.gguf" "${qtype^^}" "$threads")
  if ((run % 2)); then
    r=$(measure rebox "${rebox_cmd[@]}"); l=$(measure llama "${llama_cmd[@]}")
  else
    l=$(measure llama "${llama_cmd[@]}"); r=$(measure rebox "${rebox_cmd[@]}")
  fi
  read -r rw rc rr <<<"$r"; read -r lw lc lr <<<"$l"
  ratio=$(echo "$rw / $lw" | bc -l)
  ratios+=("$ratio")
  same=identical; cmp -s "$work/rebox.gguf" "$work/llama.gguf" || same=DIFFERENT
  printf 'run %d %s %s, %d threads: rebox convert --quantize %.2f s wall %.2f s CPU %.0f MB peak | llama-quantize %.2f s wall %.2f s CPU %.0f MB peak | ratio %.3f | files %s\n' \
    "$run" "$preset" "$qtype" "$threads" "$rw" "$rc" "$rr" "$lw" "$lc" "$lr" "$ratio" "$same"
  [[ "$same" == identical ]] || { echo "rebox's file differs from llama-quantize's" >&2; exit 1; }
done
sorted=$(printf '%s\n' "${ratios[@]}" | sort -g)
median=$(sed -n "$(((runs + 1) / 2))p" <<<"$sorted")
printf 'quantize %s %s: rebox/llama-quantize wall ratio median %.3f (range %.3f..%.3f over %d runs)\n' \
  "$preset" "$qtype" "$median" "$(head -1 <<<"$sorted")" "$(tail -1 <<<"$sorted")" "$runs"
rm -f "$work/rebox.gguf" "$work/llama.gguf"
