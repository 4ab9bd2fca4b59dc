#!/usr/bin/env bash
# Conversion benchmark: wall times, CPU times (user+sys), peak RSS and ratios to the I/O floor, in
# one run. On a shared machine the wall times carry the other tenants' load; the CPU times do not.
# Usage: bench/run.sh BUILD_DIR [tiny|qwen3-0.6b|qwen3-8b]
set -euo pipefail
build=$(cd "$1" && pwd); preset=${2:-qwen3-0.6b}
work="$build/bench-work/$preset"; mkdir -p "$work"
model="$work/model"
if [[ ! -f "$work/.stamp" ]]; then
  rm -rf "$model"
  "$build/rebox-mkfixture" "$model" --preset "$preset" --tokenizer small --force >/dev/null
  touch "$work/.stamp"
fi
out="$work/out.gguf"; rm -f "$out" "$work"/split-*.gguf "$work/floor.bin" "$work/copy.bin"
in_bytes=$(cat "$model"/*.safetensors | wc -c)

# run NAME CMD...: wall seconds, CPU seconds and peak RSS (KiB) of one command, into globals.
run() {
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
cat "$model"/*.safetensors >/dev/null   # warm the page cache for every contender alike
run convert "$build/rebox" convert "$model" -o "$out" --quiet --force
out_bytes=$(stat -c %s "$out")
run floor bash -c "cat '$model'/*.safetensors >/dev/null && head -c $out_bytes /dev/zero > '$work/floor.bin' && sync -f '$work/floor.bin'"
run convert_noverify "$build/rebox" convert "$model" -o "$out" --quiet --force --no-verify
run verify "$build/rebox" verify "$model" "$out"
run cp cp "$out" "$work/copy.bin"
run cp_sync bash -c "cp '$out' '$work/copy2.bin' && sync -f '$work/copy2.bin'"
run split "$build/rebox" split "$out" "$work/split" --split-max-size "$((out_bytes / 3 + 1))" --force

ratio() { echo "scale=2; $1 / $2" | bc -l; }
printf 'preset %s: input %d bytes, output %d bytes, %s cores\n' "$preset" "$in_bytes" "$out_bytes" "$(nproc)"
for k in floor convert convert_noverify verify cp cp_sync split; do
  printf '  %-17s %8.3f s  cpu %7.2f s  peak RSS %7.1f MB\n' "$k" "${secs[$k]}" "${cpu[$k]}" \
    "$(echo "${rss[$k]} / 1024" | bc -l)"
done
printf '  convert / floor            %s x\n' "$(ratio "${secs[convert]}" "${secs[floor]}")"
printf '  verify / convert           %s x\n' "$(ratio "${secs[verify]}" "${secs[convert]}")"
printf '  split / cp                 %s x\n' "$(ratio "${secs[split]}" "${secs[cp]}")"
printf '  split / (cp + sync)        %s x   (split fsyncs every shard, as a durable copy must)\n' "$(ratio "${secs[split]}" "${secs[cp_sync]}")"
printf '  convert output throughput  %s GB/s\n' "$(echo "scale=3; $out_bytes / ${secs[convert]} / 1000000000" | bc -l)"
rm -f "$work/floor.bin" "$work/copy.bin" "$work/copy2.bin" "$work"/split-*.gguf
