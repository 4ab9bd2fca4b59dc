#!/usr/bin/env bash
# rebox meta / hash / diff on a converted fixture against cp: wall seconds, CPU seconds, peak RSS,
# and meta's ratio to cp (meta fsyncs its output, so cp + sync is the like-for-like floor).
# Usage: bench/meta.sh BUILD_DIR [tiny|qwen3-0.6b|qwen3-8b]   (reuses bench/run.sh's fixture)
set -euo pipefail
build=$(cd "$1" && pwd); preset=${2:-qwen3-0.6b}
work="$build/bench-work/$preset"; mkdir -p "$work"
model="$work/model"; file="$work/meta-in.gguf"
if [[ ! -f "$work/.stamp" ]]; then
  rm -rf "$model"
  "$build/rebox-mkfixture" "$model" --preset "$preset" --tokenizer small --force >/dev/null
  touch "$work/.stamp"
fi
[[ -f "$file" ]] || "$build/rebox" convert "$model" -o "$file" --quiet --no-verify
rm -f "$work"/meta-out*.gguf "$work"/meta-copy*.bin
bytes=$(stat -c %s "$file")
printf '{%%- for m in messages %%}{{ m.content }}{%%- endfor %%}\n' >"$work/template.jinja"

run() {  # run NAME CMD...: wall s, CPU s, peak RSS KiB into globals
  local name=$1; shift
  local t0 t1 user sys
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M %U %S" -o "$work/rss.$name" "$@" >/dev/null
  t1=$(date +%s.%N)
  secs[$name]=$(echo "$t1 - $t0" | bc -l)
  read -r rss[$name] user sys < <(tail -n 1 "$work/rss.$name")
  cpu[$name]=$(echo "$user + $sys" | bc -l)
}
declare -A secs rss cpu
# Each contender starts with the input in the page cache and no other writeback pending: its
# output is removed and the filesystem synced (untimed) before the next one runs.
settle() { rm -f "$work"/meta-out*.gguf "$work"/meta-copy*.bin; sync -f "$file"; cat "$file" >/dev/null; }
settle
run meta "$build/rebox" meta "$file" -o "$work/meta-out.gguf" --quiet --set general.name=bench \
  --chat-template-file "$work/template.jinja"
# diff exits 1 here (general.name and the template differ): count that as success.
run diff bash -c '"$@"; (($? <= 1))' diff "$build/rebox" diff "$file" "$work/meta-out.gguf"
settle
cp "$file" "$work/meta-out-inplace.gguf" && sync -f "$file"
run meta_inplace "$build/rebox" meta "$work/meta-out-inplace.gguf" --quiet --set general.name=bench2 \
  --chat-template-file "$work/template.jinja"
settle
run cp cp "$file" "$work/meta-copy.bin"
settle
run cp_sync bash -c "cp '$file' '$work/meta-copy2.bin' && sync -f '$work/meta-copy2.bin'"
settle
run hash "$build/rebox" hash "$file"

ratio() { echo "scale=2; $1 / $2" | bc -l; }
printf 'preset %s: %d bytes, %s cores\n' "$preset" "$bytes" "$(nproc)"
for k in cp cp_sync meta meta_inplace hash diff; do
  printf '  %-13s %8.3f s  cpu %7.2f s  peak RSS %7.1f MB\n' "$k" "${secs[$k]}" "${cpu[$k]}" \
    "$(echo "${rss[$k]} / 1024" | bc -l)"
done
printf '  meta / cp              %s x\n' "$(ratio "${secs[meta]}" "${secs[cp]}")"
printf '  meta / (cp + sync)     %s x   (meta fsyncs its output, as a durable edit must)\n' \
  "$(ratio "${secs[meta]}" "${secs[cp_sync]}")"
printf '  hash throughput        %s GB/s\n' "$(echo "scale=3; $bytes / ${secs[hash]} / 1000000000" | bc -l)"
rm -f "$work"/meta-out*.gguf "$work"/meta-copy*.bin
