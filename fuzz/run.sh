#!/usr/bin/env bash
# Builds the libFuzzer harnesses (scripts/build_sanitized.sh: clang, ASan + UBSan, library
# coverage-instrumented, in build-san/) and runs each for N seconds (default 60) on the seed corpus
# fuzz/make_seed_corpus.sh makes from the project's fixtures. Harnesses run $JOBS at a time
# (default: one per core).
# Usage: fuzz/run.sh [SECONDS] [HARNESS...]   Extra libFuzzer flags: FUZZ_FLAGS="-runs=10000000"
#        FUZZ_PREPARED=1: the harnesses are built and the corpus made (no build, no corpus step).
# Exit status: 0 when every harness ran its time with no finding, 1 otherwise (logs are printed).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}; shift || true
harnesses=("$@"); ((${#harnesses[@]})) || harnesses=(fuzz_gguf fuzz_safetensors fuzz_model_dir fuzz_json_inputs fuzz_config_plan)
jobs=${JOBS:-$(nproc)}
out=build-san
seeds=$out/seeds
# The harnesses and the seed corpus (fuzz/make_seed_corpus.sh), unless FUZZ_PREPARED=1 says the
# caller made both (scripts/sanitize.sh, which runs two of these scripts side by side).
if [[ "${FUZZ_PREPARED:-}" != 1 || ! -e $seeds/complete ]]; then
  bash scripts/build_sanitized.sh "${harnesses[@]}" rebox_mkfixture rebox_cli >/dev/null
  bash fuzz/make_seed_corpus.sh
fi
export REBOX_FUZZ_MODEL_DIR=$PWD/$seeds/ok  # fuzz_model_dir: config + tokenizer that fit the seeds
export REBOX_FUZZ_CHECKPOINT_DIR=$PWD/$seeds/ok REBOX_FUZZ_GGUF=$PWD/$seeds/gguf/ok.gguf  # fuzz_config_plan

declare -A corpus=([fuzz_gguf]=gguf [fuzz_safetensors]=safetensors [fuzz_model_dir]=safetensors [fuzz_json_inputs]=json
                  [fuzz_config_plan]=config)
run_one() {  # HARNESS: runs it, prints one summary line; non-zero on a finding
  local h=$1 log=$out/$1.log
  mkdir -p "$out/corpus/$h"
  # shellcheck disable=SC2086
  if ./$out/fuzz/"$h" -max_total_time="$seconds" -max_len=$((1 << 16)) -rss_limit_mb=2048 \
       -print_final_stats=1 ${FUZZ_FLAGS:-} "$out/corpus/$h" "$seeds/${corpus[$h]}" 2>"$log"; then
    echo "fuzz: $h: no finding: $(grep -E 'stat::number_of_executed_units' "$log" | awk '{print $2}') executions" \
      "in ${seconds}s max, $(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1), corpus $(ls "$out/corpus/$h" | wc -l) files"
  else
    echo "fuzz: $h FOUND A PROBLEM ($log):"; tail -n 40 "$log"; return 1
  fi
}
status=0; pids=()
for h in "${harnesses[@]}"; do
  run_one "$h" & pids+=($!)
  if ((${#pids[@]} >= jobs)); then wait "${pids[0]}" || status=1; pids=("${pids[@]:1}"); fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
