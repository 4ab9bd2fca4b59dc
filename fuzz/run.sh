#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (ASan + UBSan, library coverage-instrumented) into
# build-fuzz/ and runs each for N seconds (default 60) on a seed corpus made from the project's
# fixtures: a tiny mkfixture model shrunk to one layer, its defect variants, and its real conversion.
# Usage: fuzz/run.sh [SECONDS] [HARNESS...]   Extra libFuzzer flags: FUZZ_FLAGS="-runs=10000000"
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}; shift || true
harnesses=("$@"); ((${#harnesses[@]})) || harnesses=(fuzz_gguf fuzz_safetensors fuzz_model_dir fuzz_json_inputs)
jobs=${JOBS:-2}
CXX=clang++ CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREBOX_FUZZ=ON \
  -DREBOX_SANITIZE=ON -DREBOX_BUILD_TESTS=OFF -DREBOX_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target "${harnesses[@]}" rebox_mkfixture rebox_cli >/dev/null

# Seeds: small models (one layer, so inputs stay ~40 KB: exec/s falls with input size), the
# defect fixtures that must be refused, their real conversion to GGUF, and the JSON side files.
seeds=build-fuzz/seeds; rm -rf "$seeds"; mkdir -p "$seeds"/{gguf,safetensors,json,full}
mkfixture=./build-fuzz/rebox-mkfixture
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
  ./build-fuzz/rebox convert "$seeds/$model" -o "$seeds/gguf/$model.gguf" --quiet --no-verify
done
./build-fuzz/rebox convert "$seeds/ok" -o "$seeds/gguf/ok-f32.gguf" --outtype f32 --quiet --no-verify
cp "$seeds/ok/config.json" "$seeds/ok/tokenizer.json" "$seeds/ok/modules.json" "$seeds/json/"
cp "$seeds/ok/tokenizer_config.json" "$seeds/json/"
export REBOX_FUZZ_MODEL_DIR=$PWD/$seeds/ok  # fuzz_model_dir: config + tokenizer that fit the seeds

declare -A corpus=([fuzz_gguf]=gguf [fuzz_safetensors]=safetensors [fuzz_model_dir]=safetensors [fuzz_json_inputs]=json)
status=0
for h in "${harnesses[@]}"; do
  mkdir -p "build-fuzz/corpus/$h"
  echo "fuzz: $h for ${seconds}s"
  # shellcheck disable=SC2086
  if ! ./build-fuzz/fuzz/"$h" -max_total_time="$seconds" -max_len=$((1 << 16)) -rss_limit_mb=2048 \
       -print_final_stats=1 ${FUZZ_FLAGS:-} "build-fuzz/corpus/$h" "$seeds/${corpus[$h]}" \
       2>"build-fuzz/$h.log"; then
    echo "fuzz: $h FOUND A PROBLEM (build-fuzz/$h.log):"; tail -n 40 "build-fuzz/$h.log"; status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "build-fuzz/$h.log" | tr '\n' ' '
    grep -E "DONE" "build-fuzz/$h.log" | tail -n 1
  fi
done
exit $status
