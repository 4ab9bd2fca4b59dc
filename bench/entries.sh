#!/usr/bin/env bash
# Tensor-count scaling: plan and convert (verification included) of 2-layer qwen3_moe mcq-v1
# checkpoints whose expert count sets the number of safetensors entries (18 per expert: 3
# projections x 3 parts x 2 layers, each expert 64 x 64), from about 2k to 300k entries. Prints
# wall and CPU seconds, peak RSS and microseconds of CPU per entry for each size, then the ratio of
# the largest model's CPU per entry to the smallest's (flat, i.e. near 1, when every look-up by
# name is constant time; the target is within 1.5x).
#
# Usage: bench/entries.sh BUILD_DIR [EXPERTS...]
#   EXPERTS defaults to "112 1024 3072 16666" (about 2k, 18k, 55k and 300k entries). Fixtures are
#   generated once, cached under BUILD_DIR/bench-work/entries/ (16666 experts: about 270 MB).
set -euo pipefail
build=$(cd "$1" && pwd); shift
expert_counts=("$@"); [[ ${#expert_counts[@]} -gt 0 ]] || expert_counts=(112 1024 3072 16666)
work="$build/bench-work/entries"; mkdir -p "$work"
mkfixture="$build/rebox-mkfixture"; rebox="$build/rebox"

# entries FILE: the number of tensor entries in a safetensors header (the __metadata__ key aside).
entries() {
  local length
  length=$(od -An -tu8 -N8 "$1" | tr -d ' ')
  head -c $((8 + length)) "$1" | tail -c "$length" | grep -o '"data_offsets"' | wc -l
}

# timed CMD...: sets wall and cpu (user+sys seconds, bash's `time`: millisecond resolution) and
# rss (peak MB, GNU time) of one command.
timed() {
  local log="$work/time.log" times="$work/times.log" user sys kib
  { TIMEFORMAT='%3R %3U %3S'; time /usr/bin/time -f '%M' -o "$log" "$@" >/dev/null; } 2>"$times"
  read -r wall user sys <"$times"
  read -r kib <"$log"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')
  rss=$(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }')
}

printf '%8s %8s | %7s %7s %8s %9s | %7s %7s %8s %9s\n' experts entries \
  plan_s cpu_s rss_MB us/entry convert cpu_s rss_MB us/entry
first_per_entry="" last_per_entry=""
for experts in "${expert_counts[@]}"; do
  dir="$work/e$experts"
  if [[ ! -f $dir/.stamp ]]; then
    "$mkfixture" "$dir" --preset tiny --arch qwen3_moe --experts "$experts" --tokenizer small \
      --force >/dev/null
    touch "$dir/.stamp"
  fi
  count=$(entries "$dir/model.safetensors")
  timed "$rebox" plan "$dir"
  plan_wall=$wall plan_cpu=$cpu plan_rss=$rss
  plan_per=$(awk -v c="$cpu" -v n="$count" 'BEGIN { printf "%.2f", c * 1e6 / n }')
  out="$work/out.gguf"; rm -f "$out"; sync
  timed "$rebox" convert "$dir" -o "$out"
  rm -f "$out"
  per=$(awk -v c="$cpu" -v n="$count" 'BEGIN { printf "%.2f", c * 1e6 / n }')
  printf '%8s %8s | %7s %7s %8s %9s | %7s %7s %8s %9s\n' "$experts" "$count" \
    "$plan_wall" "$plan_cpu" "$plan_rss" "$plan_per" "$wall" "$cpu" "$rss" "$per"
  [[ -n $first_per_entry ]] || first_per_entry=$per
  last_per_entry=$per
done
awk -v a="$first_per_entry" -v b="$last_per_entry" 'BEGIN {
  if (a > 0) printf "convert CPU per entry, largest / smallest model: %.2fx\n", b / a
  else print "convert CPU per entry, largest / smallest model: smallest run too short to time" }'
