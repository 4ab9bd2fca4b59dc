#!/usr/bin/env bash
# Conversion benchmark over every input path: wall and CPU seconds, peak RSS and ratios to the
# durable floor measured in the same run. Each run times the contenders of one path back to back
# (their order alternates from run to run, so a load change hits both sides of a ratio alike) and
# the ratios are taken per run, then the median over the runs is printed.
#
# Usage: bench/run.sh BUILD_DIR [tiny|qwen3-0.6b|qwen3-8b]
#   RUNS=5            paired runs per path (default 3; 1 for tiny)
#   PATHS="mcq mlx float gptq moe"   which inputs (default: all that rebox-mkfixture can write)
#   THREADS="1 2"     thread counts for the scaling rows (default 1..nproc; mcq path only)
#
# Contenders per path: floor (read the input + write as many bytes as the output with one fsync:
# the least a durable converter can do), convert (verification included), convert --no-verify,
# verify alone; the float path adds cp + fsync of the input's bytes (what a BF16 -> BF16 convert
# must approach); the mcq path adds split against cp and cp + fsync, and the thread scaling.
# Every contender starts with the input in the page cache and no writeback pending (outputs
# removed and `sync`ed, untimed). fsyncs are per file (`sync FILE`, `dd conv=fsync`), as rebox's.
set -euo pipefail
build=$(cd "$1" && pwd); preset=${2:-qwen3-0.6b}
work="$build/bench-work/$preset"; mkdir -p "$work"
mkfixture="$build/rebox-mkfixture"; rebox="$build/rebox"
runs=${RUNS:-$([[ $preset == tiny ]] && echo 1 || echo 3)}
cores=$(nproc)
fixture_help=$("$mkfixture" --help)
default_paths="mcq mlx float"
grep -q -- 'gptq' <<<"$fixture_help" && default_paths+=" gptq"
grep -q -- 'qwen3_moe' <<<"$fixture_help" && default_paths+=" moe"
paths=${PATHS:-$default_paths}
threads_list=${THREADS:-$(seq -s ' ' 1 "$cores")}

# fixture PATH: prints the model folder of that path, generating it once (the mcq one stays at
# $work/model, shared with bench/meta.sh). Prints nothing when mkfixture cannot write it.
fixture() {
  local dir args
  case $1 in
    mcq) dir="$work/model"; args="" ;;
    mlx) dir="$work/mlx/model"; args="--format mlx" ;;
    float) dir="$work/float/model"; args="--format float --dtype bf16" ;;
    gptq) dir="$work/gptq/model"; args="--format gptq" ;;
    moe) dir="$work/moe/model"; args="--arch qwen3_moe" ;;
    *) return 0 ;;
  esac
  local stamp; stamp="$(dirname "$dir")/.stamp"; [[ $1 == mcq ]] && stamp="$work/.stamp"
  if [[ ! -f $stamp ]]; then
    rm -rf "$dir"; mkdir -p "$(dirname "$dir")"
    # shellcheck disable=SC2086
    if ! "$mkfixture" "$dir" --preset "$preset" --tokenizer small --force $args >/dev/null 2>&1; then
      rm -rf "$dir"; return 0
    fi
    touch "$stamp"
  fi
  echo "$dir"
}

declare -A secs cpu rss
# run NAME CMD...: wall seconds, CPU seconds (user+sys) and peak RSS (KiB) of one command.
run() {
  local name=$1; shift
  local t0 t1 user sys kib
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M %U %S" -o "$work/time.out" "$@" >/dev/null
  t1=$(date +%s.%N)
  read -r kib user sys < <(tail -n 1 "$work/time.out")
  secs[$name]+="$(echo "$t1 - $t0" | bc -l) "
  cpu[$name]+="$(echo "$user + $sys" | bc -l) "
  rss[$name]+="$kib "
}
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
maxof() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | tail -n 1; }
# ratios A B: the per-run ratios A/B as a list.
ratios() {
  paste -d' ' <(tr ' ' '\n' <<<"${secs[$1]}" | grep -v '^$') <(tr ' ' '\n' <<<"${secs[$2]}" | grep -v '^$') |
    awk '{printf "%.3f ", $1 / $2}'
}
range() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%.2f-%.2f", lo, hi}'; }
settle() { rm -f "$work"/out*.gguf "$work"/floor.bin "$work"/split-*.gguf; rm -rf "$work/cp"; sync; cat "$model"/*.safetensors >/dev/null; }

summary_lines=()
for path in $paths; do
  model=$(fixture "$path")
  if [[ -z $model ]]; then
    printf 'path %s: rebox-mkfixture cannot write it for preset %s, skipped\n' "$path" "$preset"
    continue
  fi
  for k in "${!secs[@]}"; do unset "secs[$k]" "cpu[$k]" "rss[$k]"; done
  in_bytes=$(cat "$model"/*.safetensors | wc -c)
  settle
  "$rebox" convert "$model" -o "$work/out.gguf" --quiet --force --no-verify
  out_bytes=$(stat -c %s "$work/out.gguf")
  contenders=(floor convert convert_noverify verify)
  [[ $path == float ]] && contenders+=(cp_sync)
  for ((r = 1; r <= runs; r++)); do
    order=("${contenders[@]}")
    if ((r % 2 == 0)); then  # every other run backwards: each pair sees both orders
      order=(); for ((i = ${#contenders[@]} - 1; i >= 0; i--)); do order+=("${contenders[$i]}"); done
    fi
    for c in "${order[@]}"; do
      settle
      case $c in
        floor) run floor bash -c "cat '$model'/*.safetensors >/dev/null && dd if=/dev/zero of='$work/floor.bin' bs=4M count=$out_bytes iflag=count_bytes conv=fsync status=none" ;;
        convert) run convert "$rebox" convert "$model" -o "$work/out.gguf" --quiet --force ;;
        convert_noverify) run convert_noverify "$rebox" convert "$model" -o "$work/out.gguf" --quiet --force --no-verify ;;
        verify)
          [[ -f $work/verify-target.gguf ]] || "$rebox" convert "$model" -o "$work/verify-target.gguf" --quiet --force --no-verify
          sync; run verify "$rebox" verify "$model" "$work/verify-target.gguf" ;;
        cp_sync) run cp_sync bash -c "mkdir -p '$work/cp' && cp '$model'/*.safetensors '$work/cp/' && sync '$work/cp'/*" ;;
      esac
    done
  done
  rm -f "$work/verify-target.gguf"
  printf '\npath %s (%s): input %d bytes, output %d bytes, %d cores, %d paired run(s), medians\n' \
    "$path" "$preset" "$in_bytes" "$out_bytes" "$cores" "$runs"
  printf '  %-18s %9s %9s %12s\n' contender "wall s" "cpu s" "peak RSS MB"
  for c in "${contenders[@]}"; do
    printf '  %-18s %9.3f %9.2f %12.1f\n' "$c" "$(median "${secs[$c]}")" "$(median "${cpu[$c]}")" \
      "$(echo "$(maxof "${rss[$c]}") / 1024" | bc -l)"
  done
  r_conv=$(ratios convert floor); r_nv=$(ratios convert_noverify floor); r_ver=$(ratios verify convert)
  printf '  convert / floor             %.2f x  (runs %s)\n' "$(median "$r_conv")" "$(range "$r_conv")"
  printf '  convert --no-verify / floor %.2f x  (runs %s)\n' "$(median "$r_nv")" "$(range "$r_nv")"
  printf '  verify / convert            %.2f x  (runs %s)\n' "$(median "$r_ver")" "$(range "$r_ver")"
  summary_lines+=("$(printf '%-6s convert/floor %.2f  no-verify/floor %.2f  verify/convert %.2f  peak RSS %.0f MB' \
    "$path" "$(median "$r_conv")" "$(median "$r_nv")" "$(median "$r_ver")" "$(echo "$(maxof "${rss[convert]}") / 1024" | bc -l)")")
  if [[ $path == float ]]; then
    r_cp=$(ratios convert_noverify cp_sync); r_cpv=$(ratios convert cp_sync)
    printf '  convert --no-verify / (cp + fsync)  %.2f x  (runs %s)\n' "$(median "$r_cp")" "$(range "$r_cp")"
    printf '  convert / (cp + fsync)              %.2f x  (runs %s)\n' "$(median "$r_cpv")" "$(range "$r_cpv")"
    summary_lines+=("$(printf 'float  convert/(cp+fsync) %.2f  no-verify/(cp+fsync) %.2f' "$(median "$r_cpv")" "$(median "$r_cp")")")
  fi
  if [[ $path == mcq ]]; then
    # Thread scaling: convert (verification included) with 1..N workers, CPU and wall.
    for t in $threads_list; do
      for ((r = 1; r <= runs; r++)); do settle; run "threads_$t" "$rebox" convert "$model" -o "$work/out.gguf" --quiet --force --threads "$t"; done
      printf '  convert --threads %-3s   %9.3f s  cpu %7.2f s  peak RSS %7.1f MB\n' "$t" \
        "$(median "${secs[threads_$t]}")" "$(median "${cpu[threads_$t]}")" "$(echo "$(maxof "${rss[threads_$t]}") / 1024" | bc -l)"
    done
    # split against cp and cp + fsync of the same file (split fsyncs every shard).
    for ((r = 1; r <= runs; r++)); do
      settle; "$rebox" convert "$model" -o "$work/out.gguf" --quiet --force --no-verify; sync
      run split "$rebox" split "$work/out.gguf" "$work/split" --split-max-size "$((out_bytes / 3 + 1))" --force
      rm -f "$work"/split-*.gguf; sync
      run cp cp "$work/out.gguf" "$work/out-copy.gguf"
      rm -f "$work/out-copy.gguf"; sync
      run cp_fsync bash -c "cp '$work/out.gguf' '$work/out-copy.gguf' && sync '$work/out-copy.gguf'"
    done
    printf '  split into 3 / cp           %.2f x   split / (cp + fsync) %.2f x   (split peak RSS %.1f MB)\n' \
      "$(median "$(ratios split cp)")" "$(median "$(ratios split cp_fsync)")" "$(echo "$(maxof "${rss[split]}") / 1024" | bc -l)"
  fi
done
settle
rm -f "$work"/out*.gguf "$work/time.out"
printf '\nsummary (%s, medians of %d paired run(s); on a shared machine the wall ratios carry the other tenants'"'"' load):\n' "$preset" "$runs"
for line in "${summary_lines[@]}"; do printf '  %s\n' "$line"; done
