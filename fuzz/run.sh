#!/usr/bin/env bash
# Builds the libFuzzer harnesses (scripts/build_sanitized.sh: clang, ASan + UBSan, library
# coverage-instrumented, in build-san/) and runs each for N seconds (default 60) on a seed corpus
# made from the project's fixtures: a tiny mkfixture model shrunk to one layer, its defect
# variants, and its real conversion. Harnesses run $JOBS at a time (default: one per core).
# Usage: fuzz/run.sh [SECONDS] [HARNESS...]   Extra libFuzzer flags: FUZZ_FLAGS="-runs=10000000"
# Exit status: 0 when every harness ran its time with no finding, 1 otherwise (logs are printed).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}; shift || true
harnesses=("$@"); ((${#harnesses[@]})) || harnesses=(fuzz_gguf fuzz_safetensors fuzz_model_dir fuzz_json_inputs fuzz_config_plan)
jobs=${JOBS:-$(nproc)}
out=build-san
bash scripts/build_sanitized.sh "${harnesses[@]}" rebox_mkfixture rebox_cli >/dev/null

# Seeds: small models (one layer, so inputs stay ~40 KB: exec/s falls with input size), the
# defect fixtures that must be refused, their real conversion to GGUF, and the JSON side files.
seeds=$out/seeds; rm -rf "$seeds"; mkdir -p "$seeds"/{gguf,safetensors,json,full,config}
mkfixture=./$out/rebox-mkfixture
"$mkfixture" "$seeds/full/ok" --preset tiny --tokenizer small >/dev/null
"$mkfixture" "$seeds/full/untied" --preset tiny --tokenizer small --untied --corners >/dev/null
for defect in group16 bits5 bytecount metadata-lie padding unknown-name; do
  "$mkfixture" "$seeds/full/$defect" --preset tiny --tokenizer small --defect "$defect" >/dev/null
done
for model in "$seeds"/full/*; do
  name=$(basename "$model")
  python3 fuzz/make_seeds.py "$model" "$seeds/$name" 1
  cp "$seeds/$name/model.safetensors" "$seeds/safetensors/$name.safetensors"
done
for model in ok untied; do
  ./$out/rebox convert "$seeds/$model" -o "$seeds/gguf/$model.gguf" --quiet --no-verify
done
./$out/rebox convert "$seeds/ok" -o "$seeds/gguf/ok-f32.gguf" --outtype f32 --quiet --no-verify
cp "$seeds/ok/config.json" "$seeds/ok/tokenizer.json" "$seeds/ok/modules.json" "$seeds/json/"
cp "$seeds/ok/tokenizer_config.json" "$seeds/json/"
export REBOX_FUZZ_MODEL_DIR=$PWD/$seeds/ok  # fuzz_model_dir: config + tokenizer that fit the seeds
# fuzz_config_plan: config.json NUL tokenizer_config.json NUL tokenizer.json beside the fixed
# one-layer checkpoint and its conversion; plus the committed hostile configs (fuzz/seeds/).
export REBOX_FUZZ_CHECKPOINT_DIR=$PWD/$seeds/ok REBOX_FUZZ_GGUF=$PWD/$seeds/gguf/ok.gguf
(cat "$seeds/ok/config.json"; printf '\0'; cat "$seeds/ok/tokenizer_config.json"; printf '\0'
 cat "$seeds/ok/tokenizer.json") >"$seeds/config/ok"
cp fuzz/seeds/config_plan/* "$seeds/config/"

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
