#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (ASan + UBSan) into build-fuzz/ and runs each for N seconds
# (default 60) on a seed corpus made from the project's fixtures. Usage: fuzz/run.sh [SECONDS] [HARNESS...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}; shift || true
harnesses=("$@"); ((${#harnesses[@]})) || harnesses=(fuzz_gguf fuzz_safetensors fuzz_model_dir fuzz_json_inputs)
CXX=clang++ CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREBOX_FUZZ=ON \
  -DREBOX_SANITIZE=ON -DREBOX_BUILD_TESTS=OFF -DREBOX_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${harnesses[@]}" rebox_mkfixture rebox_cli >/dev/null

# Seeds: a tiny fixture and its conversion.
seeds=build-fuzz/seeds; rm -rf "$seeds"; mkdir -p "$seeds"/{gguf,safetensors,json}
./build-fuzz/rebox-mkfixture "$seeds/model" --preset tiny --tokenizer small --force >/dev/null
./build-fuzz/rebox convert "$seeds/model" -o "$seeds/gguf/tiny.gguf" --quiet --no-verify
cp "$seeds/model/model.safetensors" "$seeds/safetensors/"
cp "$seeds/model/config.json" "$seeds/model/tokenizer.json" "$seeds/model/modules.json" "$seeds/json/"
declare -A corpus=([fuzz_gguf]=gguf [fuzz_safetensors]=safetensors [fuzz_model_dir]=safetensors [fuzz_json_inputs]=json)
status=0
for h in "${harnesses[@]}"; do
  mkdir -p "build-fuzz/corpus/$h"
  echo "fuzz: $h for ${seconds}s"
  if ! ./build-fuzz/fuzz/"$h" -max_total_time="$seconds" -max_len=$((1 << 20)) -rss_limit_mb=4096 \
       -print_final_stats=1 "build-fuzz/corpus/$h" "$seeds/${corpus[$h]}" 2>"build-fuzz/$h.log"; then
    echo "fuzz: $h FOUND A PROBLEM (build-fuzz/$h.log):"; tail -n 40 "build-fuzz/$h.log"; status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "build-fuzz/$h.log" | tail -n 2
  fi
done
exit $status
