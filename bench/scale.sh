#!/usr/bin/env bash
# Entry count at the scale of the largest releases: plan and convert (verification included) of a
# checkpoint with a big MoE release's safetensors entries, real tensor names and tiny shapes
# (bench/lib/scale_checkpoint.py grows rebox-mkfixture's tiny fixtures), sharded with an index:
#   qwen35  nvidia/Qwen3.5-397B-A17B-NVFP4: 60 layers x 512 experts in NVFP4, 94 shards (371k entries)
#   kimi    moonshotai/Kimi-K2-Thinking: 61 layers x 384 experts in compressed-tensors int4, 62 shards
#           (208k entries)
# Prints the entry count, then wall and CPU seconds and peak RSS of the best of three runs of plan,
# convert and the durable copy floor (read the input, write as many bytes as the output with one
# fsync, as bench/run.sh's floor), plan's wall against its target and convert's against the floor.
#
# Usage: bench/scale.sh BUILD_DIR qwen35|kimi [LAYERS EXPERTS SHARDS]
#   The fixture is cached under BUILD_DIR/bench-work/scale/ (about 280 MB for qwen35, 110 MB kimi).
set -euo pipefail
build=$(cd "$1" && pwd)
family=$2 layers=${3:-} experts=${4:-} shards=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
work="$build/bench-work/scale"; mkdir -p "$work"
mkfixture="$build/rebox-mkfixture"; rebox="$build/rebox"

case $family in
  qwen35) plan_target=1 ;;  # issue 37: plans in under 1 s, converts in under 3 s
  kimi) plan_target=2 ;;    # issue 39: plans in under 2 s, converts within 1.5x the floor
  *) echo "usage: bench/scale.sh BUILD_DIR qwen35|kimi [LAYERS EXPERTS SHARDS]" >&2; exit 2 ;;
esac
dir="$work/$family-${layers:-d}-${experts:-d}-${shards:-d}"
if [[ ! -f $dir/.stamp ]]; then
  if [[ $family == qwen35 ]]; then
    "$mkfixture" "$work/qwen35-float" --preset tiny --arch qwen35moe --format float --force >/dev/null
    "$mkfixture" "$work/qwen35-nvfp4" --preset tiny --arch qwen35moe --format modelopt-nvfp4 \
      --force >/dev/null
    templates=("$work/qwen35-float" "$work/qwen35-nvfp4")
  else
    "$mkfixture" "$work/kimi-ct" --preset tiny --arch deepseek2 --format compressed-tensors \
      --force >/dev/null
    templates=("$work/kimi-ct" "$work/kimi-ct")
  fi
  python3 "$here/lib/scale_checkpoint.py" "$family" "${templates[@]}" "$dir" \
    ${layers:+--layers "$layers"} ${experts:+--experts "$experts"} ${shards:+--shards "$shards"} \
    >"$dir.entries"
  touch "$dir/.stamp"
fi
entries=$(cat "$dir.entries")
out_bytes=$("$rebox" plan "$dir" | sed -n 's/^GGUF: .*), \([0-9]*\) bytes.*/\1/p')

# best3 CMD...: the run with the least wall time of three, each from a warm page cache; sets wall,
# cpu (user + sys) and rss (MB).
best3() {
  local log="$work/time.log" w u s r
  wall=""
  for _ in 1 2 3; do
    rm -f "$work/out.gguf" "$work/floor.bin"; sync; cat "$dir"/*.safetensors >/dev/null
    /usr/bin/time -f '%e %U %S %M' -o "$log" "$@" >/dev/null 2>&1 || { cat "$log"; return 1; }
    read -r w u s r <"$log"
    if [[ -z $wall ]] || awk -v a="$w" -v b="$wall" 'BEGIN { exit !(a < b) }'; then
      wall=$w
      cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
      rss=$(awk -v k="$r" 'BEGIN { printf "%.0f", k / 1024 }')
    fi
  done
}

echo "$family: ${layers:-default} layers, ${experts:-default} experts, ${shards:-default} shards:" \
  "$entries safetensors entries, output $out_bytes bytes"
printf '%-8s %7s %7s %8s\n' step wall_s cpu_s rss_MB
best3 "$rebox" plan "$dir"
plan_wall=$wall
printf '%-8s %7s %7s %8s\n' plan "$wall" "$cpu" "$rss"
best3 bash -c "cat '$dir'/*.safetensors >/dev/null && dd if=/dev/zero of='$work/floor.bin' bs=4M \
  count=$out_bytes iflag=count_bytes conv=fsync status=none"
floor_wall=$wall
printf '%-8s %7s %7s %8s\n' floor "$wall" "$cpu" "$rss"
best3 "$rebox" convert "$dir" -o "$work/out.gguf"
printf '%-8s %7s %7s %8s\n' convert "$wall" "$cpu" "$rss"
rm -f "$work/out.gguf" "$work/floor.bin"
awk -v p="$plan_wall" -v t="$plan_target" -v c="$wall" -v f="$floor_wall" 'BEGIN {
  printf "plan / %d s target: %.2fx; convert / floor: %.2fx; convert / 3 s: %.2fx\n", t, p / t,
    (f > 0 ? c / f : 0), c / 3 }'
