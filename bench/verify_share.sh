#!/usr/bin/env bash
# verify's share of the work, counted in instructions (valgrind's callgrind), which do not depend
# on what else the machine is doing: per input path, `rebox convert --no-verify --threads 1` (the
# encode) and `rebox verify --threads 1` of its output, each under callgrind, then verify's count
# over the encode's. The fixtures are bench/run.sh's (same cache, BUILD_DIR/bench-work/PRESET/).
#
# Usage: bench/verify_share.sh BUILD_DIR [tiny|qwen3-0.6b]     PATHS="mcq mlx float" (default)
# Prints one line per path: encode and verify instructions and their ratio. Exits 1 if verify
# does not pass (a benchmark of a failing verify would measure the wrong work).
set -euo pipefail
build=$(cd "$1" && pwd); preset=${2:-qwen3-0.6b}
work="$build/bench-work/$preset"; mkdir -p "$work"
mkfixture="$build/rebox-mkfixture"; rebox="$build/rebox"
command -v valgrind >/dev/null || { echo "verify_share: needs valgrind (Debian package valgrind)" >&2; exit 1; }

fixture() {  # as bench/run.sh: generated once, the mcq one at $work/model
  local dir args stamp
  case $1 in
    mcq) dir="$work/model"; args=""; stamp="$work/.stamp" ;;
    mlx) dir="$work/mlx/model"; args="--format mlx"; stamp="$work/mlx/.stamp" ;;
    float) dir="$work/float/model"; args="--format float --dtype bf16"; stamp="$work/float/.stamp" ;;
    *) echo "verify_share: unknown path $1" >&2; exit 1 ;;
  esac
  if [[ ! -f $stamp ]]; then
    rm -rf "$dir"; mkdir -p "$(dirname "$dir")"
    # shellcheck disable=SC2086
    "$mkfixture" "$dir" --preset "$preset" --tokenizer small --force $args >/dev/null
    touch "$stamp"
  fi
  echo "$dir"
}

# instructions CMD...: the total instruction count callgrind reports for one run of CMD.
instructions() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p; s/.*refs: *\([0-9,]*\).*/\1/p' | tr -d , | tail -n 1
}

for path in ${PATHS:-mcq mlx float}; do
  model=$(fixture "$path")
  out="$work/share-$path.gguf"; rm -f "$out"
  encode=$(instructions "$rebox" convert "$model" -o "$out" --no-verify --threads 1)
  "$rebox" verify "$model" "$out" --threads 1 >/dev/null || { echo "verify_share: $path: verify failed" >&2; exit 1; }
  verify=$(instructions "$rebox" verify "$model" "$out" --threads 1)
  rm -f "$out"
  awk -v p="$path" -v e="$encode" -v v="$verify" -v s="$preset" \
    'BEGIN {printf "%s %s: encode %.3f G instructions, verify %.3f G, verify / encode %.3f\n", s, p, e / 1e9, v / 1e9, v / e}'
done
