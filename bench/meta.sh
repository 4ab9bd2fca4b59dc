#!/usr/bin/env bash
# rebox meta / hash / diff on a converted fixture against cp: wall seconds, CPU seconds, peak RSS,
# and meta's ratio to cp and to cp + fsync (meta fsyncs its output, so cp + fsync is the
# like-for-like floor). Paired runs as in bench/run.sh: RUNS=N (default 3, tiny 1), contenders in
# reverse order every other run, ratios per run, medians printed.
# Usage: bench/meta.sh BUILD_DIR [tiny|qwen3-0.6b|qwen3-8b]   (reuses bench/run.sh's fixture)
set -euo pipefail
build=$(cd "$1" && pwd); preset=${2:-qwen3-0.6b}
work="$build/bench-work/$preset"; mkdir -p "$work"
model="$work/model"; file="$work/meta-in.gguf"
runs=${RUNS:-$([[ $preset == tiny ]] && echo 1 || echo 3)}
if [[ ! -f "$work/.stamp" ]]; then
  rm -rf "$model"
  "$build/rebox-mkfixture" "$model" --preset "$preset" --tokenizer small --force >/dev/null
  touch "$work/.stamp"
fi
[[ -f "$file" ]] || "$build/rebox" convert "$model" -o "$file" --quiet --no-verify
rm -f "$work"/meta-out*.gguf "$work"/meta-copy*.bin
bytes=$(stat -c %s "$file")
printf '{%%- for m in messages %%}{{ m.content }}{%%- endfor %%}\n' >"$work/template.jinja"

declare -A secs cpu rss
run() {  # run NAME CMD...: wall s, CPU s, peak RSS KiB appended to the name's lists
  local name=$1; shift
  local t0 t1 user sys kib
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M %U %S" -o "$work/time.meta" "$@" >/dev/null
  t1=$(date +%s.%N)
  read -r kib user sys < <(tail -n 1 "$work/time.meta")
  secs[$name]+="$(echo "$t1 - $t0" | bc -l) "
  cpu[$name]+="$(echo "$user + $sys" | bc -l) "
  rss[$name]+="$kib "
}
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
maxof() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | tail -n 1; }
ratios() {
  paste -d' ' <(tr ' ' '\n' <<<"${secs[$1]}" | grep -v '^$') <(tr ' ' '\n' <<<"${secs[$2]}" | grep -v '^$') |
    awk '{printf "%.3f ", $1 / $2}'
}
range() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%.2f-%.2f", lo, hi}'; }
# Each contender starts with the input in the page cache and no other writeback pending: its
# output is removed and the filesystem synced (untimed) before the next one runs.
settle() { rm -f "$work"/meta-out*.gguf "$work"/meta-copy*.bin; sync; cat "$file" >/dev/null; }

contenders=(meta meta_inplace cp cp_sync)
for ((r = 1; r <= runs; r++)); do
  order=("${contenders[@]}")
  ((r % 2 == 0)) && order=(cp_sync cp meta_inplace meta)
  for c in "${order[@]}"; do
    settle
    case $c in
      meta) run meta "$build/rebox" meta "$file" -o "$work/meta-out.gguf" --quiet --set general.name=bench \
              --chat-template-file "$work/template.jinja" ;;
      meta_inplace)
        cp "$file" "$work/meta-out-inplace.gguf" && sync
        run meta_inplace "$build/rebox" meta "$work/meta-out-inplace.gguf" --quiet --set general.name=bench2 \
          --chat-template-file "$work/template.jinja" ;;
      cp) run cp cp "$file" "$work/meta-copy.bin" ;;
      cp_sync) run cp_sync bash -c "cp '$file' '$work/meta-copy2.bin' && sync '$work/meta-copy2.bin'" ;;
    esac
  done
done
settle
"$build/rebox" meta "$file" -o "$work/meta-out.gguf" --quiet --set general.name=bench \
  --chat-template-file "$work/template.jinja"
sync
# diff exits 1 here (general.name and the template differ): count that as success.
run diff bash -c '"$@"; (($? <= 1))' diff "$build/rebox" diff "$file" "$work/meta-out.gguf"
settle
run hash "$build/rebox" hash "$file"

printf 'preset %s: %d bytes, %s cores, %d paired run(s), medians\n' "$preset" "$bytes" "$(nproc)" "$runs"
for k in cp cp_sync meta meta_inplace hash diff; do
  printf '  %-13s %8.3f s  cpu %7.2f s  peak RSS %7.1f MB\n' "$k" "$(median "${secs[$k]}")" \
    "$(median "${cpu[$k]}")" "$(echo "$(maxof "${rss[$k]}") / 1024" | bc -l)"
done
r_cp=$(ratios meta cp); r_sync=$(ratios meta cp_sync); r_in=$(ratios meta_inplace cp_sync)
printf '  meta / cp                    %.2f x  (runs %s)\n' "$(median "$r_cp")" "$(range "$r_cp")"
printf '  meta / (cp + fsync)          %.2f x  (runs %s)   (meta fsyncs its output, as a durable edit must)\n' \
  "$(median "$r_sync")" "$(range "$r_sync")"
printf '  meta in place / (cp + fsync) %.2f x  (runs %s)\n' "$(median "$r_in")" "$(range "$r_in")"
printf '  hash throughput              %s GB/s\n' "$(echo "scale=3; $bytes / $(median "${secs[hash]}") / 1000000000" | bc -l)"
rm -f "$work"/meta-out*.gguf "$work"/meta-copy*.bin "$work/time.meta"
