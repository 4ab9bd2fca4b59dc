#!/usr/bin/env bash
# Makes the fuzz harnesses' seed corpus in build-san/seeds from the project's fixtures: a tiny
# mkfixture model shrunk to one layer (inputs stay ~40 KB: exec/s falls with input size), its
# defect variants that must be refused, their real conversion to GGUF, the JSON side files, and
# the committed hostile configs (fuzz/seeds/). Needs build-san's rebox and rebox-mkfixture.
# fuzz/run.sh calls it; scripts/sanitize.sh runs it beside the sanitized test suites.
# Usage: fuzz/make_seed_corpus.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-san
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
# fuzz_config_plan: config.json NUL tokenizer_config.json NUL tokenizer.json beside the fixed
# one-layer checkpoint and its conversion; plus the committed hostile configs (fuzz/seeds/).
(cat "$seeds/ok/config.json"; printf '\0'; cat "$seeds/ok/tokenizer_config.json"; printf '\0'
 cat "$seeds/ok/tokenizer.json") >"$seeds/config/ok"
cp fuzz/seeds/config_plan/* "$seeds/config/"
touch "$seeds/complete"
