#!/usr/bin/env bash
# `rebox check` against llama.cpp's own loader (node-llama-cpp): every file rebox writes (each
# registry architecture, a split set) passes for llama.cpp and Ollama; the cases gguf-py writes
# (ggufpy_check_cases.py) pass or fail as llama.cpp does when it loads them: clean copies with
# another alignment, reordered KVs and gguf-py's own shards load and pass; a known key of the
# wrong type, a missing required key, a tensor of the wrong shape, deleted merges, a Phi-3 name on a
# vocabulary without </s>, a split set without its last shard and a split set
# whose first shard's split.count is wrong are refused by llama.cpp and are findings (exit 1)
# naming the key or tensor; a truncated file is unreadable (exit 2); a missing add_bos_token
# loads in llama.cpp and is a finding only --for ollama (Ollama's reader defaults it to true).
# An NVFP4 file's per-tensor `.scale` factors pass with no warning, and the three factors
# llama.cpp's loader refuses (shape [2], beside a weight the file lacks, beside a non-NVFP4 output)
# are findings naming the factor.
# Usage: bash tests/clients/test_check.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init check "${1:-}"
ggufpy_setup "$BUILD"
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_check CODE PATTERN FILE [ARGS...]: rebox check exits CODE and, for 1, prints PATTERN.
expect_check() {
  local want="$1" pattern="$2" file="$3" code=0
  shift 3
  "$REBOX" check "$file" "$@" >"$WORK/check.out" 2>&1 || code=$?
  [[ $code == "$want" ]] || { cat "$WORK/check.out" >&2; fail "check $file $*: exit $code, expected $want"; }
  if [[ -n "$pattern" ]] && ! grep -q -- "$pattern" "$WORK/check.out"; then
    cat "$WORK/check.out" >&2
    fail "check $file $*: no line matching '$pattern'"
  fi
}

# Every file rebox writes: each architecture's tiny fixture, and a split set.
mkdir -p "$WORK/out"
"$MKFIXTURE" "$WORK/qwen3" --preset tiny --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER" --force >/dev/null
"$REBOX" convert "$WORK/qwen3" -o "$WORK/out/qwen3.gguf" --quiet --no-verify
for arch in qwen2 llama mistral qwen3_moe qwen2_moe mixtral phi3 gemma gemma2 gemma3; do
  "$MKFIXTURE" "$WORK/$arch" --preset tiny --arch "$arch" --force >/dev/null
  "$REBOX" convert "$WORK/$arch" -o "$WORK/out/$arch.gguf" --quiet --no-verify --name "tiny-${arch/phi3/p3}"
done
"$REBOX" convert "$WORK/qwen3" -o "$WORK/out/split.gguf" --quiet --no-verify --split-max-size 1M
"$MKFIXTURE" "$WORK/qwen3-nvfp4" --preset tiny --arch qwen3 --format modelopt-nvfp4 --force >/dev/null
"$REBOX" convert "$WORK/qwen3-nvfp4" -o "$WORK/out/qwen3-nvfp4.gguf" --quiet --no-verify
written=("$WORK"/out/*.gguf)
for file in "${written[@]}"; do
  [[ "$file" == *-0000[2-9]-of-* ]] && continue
  expect_check 0 "" "$file"
  grep -q ", 0 warning(s)" "$WORK/check.out" || { cat "$WORK/check.out" >&2; fail "check $file: warnings"; }
  expect_check 0 "" "$file" --for ollama
done
echo "rebox's own files pass for llama.cpp and ollama: ${#written[@]} files ($(clients_elapsed))"

mkdir -p "$WORK/cases"
ggufpy "$CLIENTS_DIR/ggufpy_check_cases.py" "$WORK/out/qwen3.gguf" "$WORK/cases" "$WORK/out/llama.gguf" \
  "$WORK/out/qwen3-nvfp4.gguf" >"$WORK/cases.txt"
declare -A file_of
while read -r name file; do file_of[$name]="$file"; done <"$WORK/cases.txt"

# llama.cpp's verdict on every case.
(cd "$CLIENTS_DIR" && node llama_load.mjs $(cut -d' ' -f2 "$WORK/cases.txt")) >"$WORK/llama.txt"
while read -r name file; do
  verdict=$(grep -F " $file" "$WORK/llama.txt" | cut -d' ' -f1)
  case "$name" in
    clean_* | ollama_*) [[ "$verdict" == LOADED ]] || fail "llama.cpp refused $name: $(grep -F "$file" "$WORK/llama.txt")" ;;
    *) [[ "$verdict" == REFUSED ]] || fail "llama.cpp loaded $name, which rebox check must flag" ;;
  esac
done <"$WORK/cases.txt"
sed 's/^/  /' "$WORK/llama.txt"

for name in clean_align64 clean_reordered clean_shards clean_nvfp4; do
  expect_check 0 "" "${file_of[$name]}"
  grep -q ", 0 warning(s)" "$WORK/check.out" || { cat "$WORK/check.out" >&2; fail "$name: warnings"; }
  expect_check 0 "" "${file_of[$name]}" --for ollama
done
expect_check 1 "FINDING: .*qwen3.block_count has type INT32" "${file_of[bad_type]}"
expect_check 1 "FINDING: .*qwen3.context_length is missing" "${file_of[bad_missing_key]}"
expect_check 1 "FINDING: .*blk.0.attn_norm.weight has ne \[128\]" "${file_of[bad_shape]}"
expect_check 1 "FINDING: .*tokenizer.ggml.merges is missing" "${file_of[bad_no_merges]}"
expect_check 1 "FINDING: .*general.name contains .*</s>" "${file_of[bad_phi3_name]}"
expect_check 1 "FINDING: .*although split.count is 3" "${file_of[bad_split_count]}"
expect_check 1 "FINDING: .*split.count is 1 but the file name says shard 1 of 2" "${file_of[bad_split_count_one]}"
expect_check 1 "FINDING: .*clean_shards-00003-of-00003.gguf is missing" "${file_of[bad_missing_shard]}"
expect_check 1 "FINDING: .*blk.0.attn_q.scale has ne \[2\] but llama.cpp expects \[1\]" "${file_of[bad_scale_shape]}"
expect_check 1 "FINDING: .*blk.0.attn_gate.scale has no blk.0.attn_gate.weight beside it" "${file_of[bad_scale_orphan]}"
expect_check 1 "FINDING: .*output.scale belongs to an output that is not NVFP4" "${file_of[bad_output_scale]}"
expect_check 2 "" "${file_of[bad_truncated]}"
expect_check 2 "" "${file_of[bad_truncated]}" --for ollama
expect_check 0 "" "${file_of[ollama_no_bos]}"
expect_check 1 "FINDING: .*tokenizer.ggml.add_bos_token is missing" "${file_of[ollama_no_bos]}" --for ollama
"$REBOX" check "${file_of[bad_type]}" --json >"$WORK/check.json" || true
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); f=r["findings"]
assert r["status"]=="findings" and [x["subject"] for x in f]==["qwen3.block_count"], r' "$WORK/check.json" ||
  fail "--json does not list exactly the block_count finding"
echo "PASS test_check ($(clients_elapsed))"
