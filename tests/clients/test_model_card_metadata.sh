#!/usr/bin/env bash
# Model-card metadata against llama.cpp's converter: for fixture directories with and without a
# README.md model card (license list, base_model list with an id, a URL and a mapping, datasets,
# languages with `- no`, tags, pipeline_tag, model-index), a config.json _name_or_path, a directory
# name with size / finetune / version, a generation_config.json, a --metadata override file, --name
# and a mixture of experts, every general.* KV rebox writes (key, GGUF type, value) must equal what
# the converter's prepare_metadata + gguf-py's Metadata.load write for the same directory and tensors
# (model_card_reference.py runs the bundle's code). Bad cards and override files: one line, exit 1.
# Usage: bash tests/clients/test_model_card_metadata.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init model_card_metadata "${1:-}"
ggufpy_setup "$BUILD"
export GGUFPY_SRC

# compare DIR [rebox convert flags...] [-- reference flags...]
compare() {
  local dir="$1"
  shift
  local convert_flags=() reference_flags=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do convert_flags+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  reference_flags=("$@")
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet --force "${convert_flags[@]}"
  ggufpy "$CLIENTS_DIR/model_card_reference.py" "$dir" "$dir.gguf" "${reference_flags[@]}"
}

# 1. A plain directory (no card, no _name_or_path): name, basename, finetune, version from the
# directory name; "0.6B" is far from the tiny fixture's count, so it joins the finetune; the size
# label comes from the tensors.
plain="$WORK/Qwen3-0.6B-Instruct-v2"
"$MKFIXTURE" "$plain" --preset tiny --tokenizer small --arch qwen3 --force >/dev/null
compare "$plain" -- --expect "general.basename=Qwen3" --expect "general.version=v2" \
  --expect "general.finetune=0.6b-Instruct" --expect "general.name=Qwen3 0.6B Instruct v2"

# 2. A full model card, _name_or_path and generation_config.json on a llama fixture.
card="$WORK/card-llama"
"$MKFIXTURE" "$card" --preset tiny --tokenizer small --arch llama --force >/dev/null
/usr/bin/python3 - "$card" <<'PY'
import json, sys
d = sys.argv[1]
config = json.load(open(f"{d}/config.json"))
config["_name_or_path"] = "meta-llama/Llama-3.2-1B-Instruct"
json.dump(config, open(f"{d}/config.json", "w"), indent=2)
json.dump({"bos_token_id": 1, "do_sample": True, "temperature": 0.6, "top_k": 20, "top_p": 0.95,
           "min_p": 0.05, "repetition_penalty": 1.1}, open(f"{d}/generation_config.json", "w"))
open(f"{d}/README.md", "w").write("""---
license:
- llama3.2
- apache-2.0
base_model:
- meta-llama/Llama-3.2-1B
- https://huggingface.co/Qwen/Qwen2.5-0.5B
- name: Hand Made
  organization: Rebox Tests
  repo_url: https://example.org/hand
datasets:
- HuggingFaceH4/ultrachat_200k
- open-orca
- https://huggingface.co/datasets/allenai/c4
language:
- en
- no
- de
tags:
- llama
- 'chat'
pipeline_tag: text-generation
model_creator: Rebox Tester
description: "A tiny model: a card with a colon"
model-index:
- name: card-llama
  results:
  - task:
      type: text-generation
    metrics:
    - type: accuracy
      value: 0.5
---
# card-llama

Body text. The front matter ended above:
---
license: not-this-one
---
""")
PY
compare "$card" -- --expect "general.license=llama3.2,apache-2.0" \
  --expect "general.name=Llama 3.2 1B Instruct" --expect "general.dataset.0.name=Ultrachat_200K"

# 3. The same directory with a --metadata override file (plural list keys, tags replaced, a
# sampling value, license.name; general.license is not overridable) and --name.
cat >"$WORK/overrides.json" <<'JSON'
{
  "general.name": "Overridden Name",
  "general.author": "Override Author",
  "general.version": "v9",
  "general.url": "https://example.org/model",
  "general.license": "ignored-by-the-converter",
  "general.license.name": "Custom License",
  "general.size_label": "1B",
  "general.tags": ["replaced", "tags"],
  "general.base_models": [{"name": "Base One", "organization": "Org", "repo_url": "https://huggingface.co/org/base-one"}],
  "general.datasets": [{"name": "Data One"}, {"name": "Data Two", "version": "v2"}],
  "general.sampling.temp": 0.3,
  "general.sampling.top_k": 40,
  "general.sampling.mirostat": 2,
  "general.sampling.sequence": "top_k;top_p;temperature"
}
JSON
compare "$card" --metadata "$WORK/overrides.json" -- --metadata "$WORK/overrides.json" \
  --expect "general.name=Overridden Name" --expect "general.license=llama3.2,apache-2.0"
# rebox plan takes --metadata too: its exact file size is the one of the file convert wrote with it
# (and not the size without the overrides).
for flags in "--metadata $WORK/overrides.json" ""; do
  # shellcheck disable=SC2086
  "$REBOX" plan "$card" --json $flags >"$WORK/plan.json"
  planned="$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["file_bytes"])' "$WORK/plan.json")"
  written="$(stat -c %s "$card.gguf")"
  if [[ -n "$flags" && "$planned" != "$written" ]] || [[ -z "$flags" && "$planned" == "$written" ]]; then
    echo "FAIL: rebox plan ${flags:-without --metadata}: $planned bytes, the file with the overrides $written"
    exit 1
  fi
done
echo "ok: rebox plan --metadata plans the $written-byte file convert --metadata writes"
compare "$card" --metadata "$WORK/overrides.json" --name "From The Flag" -- \
  --metadata "$WORK/overrides.json" --name "From The Flag" --expect "general.name=From The Flag"

# rebox check stays clean on a file with every kind of model-card key (no finding, no warning).
check_out="$("$REBOX" check "$card.gguf")" || { echo "FAIL: rebox check on $card.gguf: $check_out"; exit 1; }
[[ "$check_out" != *WARNING* && "$check_out" != *FINDING* ]] ||
  { echo "FAIL: rebox check on $card.gguf: $check_out"; exit 1; }
echo "ok: rebox check: clean on the file with the card and override keys"

# 4. Single values instead of lists, model_name, a size in the card; a _name_or_path that is a
# local path (more than one '/') is not used.
single="$WORK/single-7b"
"$MKFIXTURE" "$single" --preset tiny --tokenizer small --arch qwen3 --force >/dev/null
/usr/bin/python3 - "$single" <<'PY'
import json, sys
d = sys.argv[1]
config = json.load(open(f"{d}/config.json"))
config["_name_or_path"] = "/home/someone/models/thing"
json.dump(config, open(f"{d}/config.json", "w"), indent=2)
json.dump({"temperature": 1, "top_k": 0, "penalty_repeat": 1.05, "repetition_penalty": 9.0},
          open(f"{d}/generation_config.json", "w"))
open(f"{d}/README.md", "w").write(
    "---\nlicense: mit\nbase_model: Qwen/Qwen3-0.6B\nlanguage: en\nmodel_name: single model\n"
    "tags: solo\ndatasets: org/data-v1.5\n---\n")
PY
compare "$single" -- --expect "general.license=mit" --expect "general.name=single model"

# 5. A mixture of experts: the size label is NxSIZE over one expert plus the shared tensors.
moe="$WORK/moe"
"$MKFIXTURE" "$moe" --preset tiny --tokenizer small --arch qwen3_moe --force >/dev/null
compare "$moe"
ggufpy - "$moe.gguf" <<'PY'
import sys
from gguf import GGUFReader
label = bytes(GGUFReader(sys.argv[1]).get_field("general.size_label").parts[-1]).decode()
if not label.startswith("4x"):
    sys.exit(f"FAIL: moe size label {label!r}, expected 4x... (4 experts)")
print(f"ok: moe size label {label}")
PY

# 6. Bad input: YAML that does not parse, a missing override file, a number where text belongs.
bad="$WORK/bad-card"
"$MKFIXTURE" "$bad" --preset tiny --tokenizer small --arch qwen3 --force >/dev/null
expect_refusal() {
  local what="$1" pattern="$2"
  shift 2
  set +e
  out="$("$REBOX" convert "$bad" -o "$WORK/bad.gguf" --quiet --force "$@" 2>&1)"
  code=$?
  set -e
  if [[ $code == 0 || "$out" != *$pattern* || "$(printf '%s\n' "$out" | wc -l)" -ne 1 || -e "$WORK/bad.gguf" ]]; then
    echo "FAIL: $what: exit $code, output: $out"
    exit 1
  fi
  echo "ok: $what refused in one line (exit $code): $out"
}
printf -- '---\nlicense: [mit\n---\n' >"$bad/README.md"
expect_refusal "unparsable front matter" "README.md*not valid YAML"
printf -- '---\nversion: 1.5\n---\n' >"$bad/README.md"
expect_refusal "a number as general.version" "general.version*not text"
rm "$bad/README.md"
expect_refusal "a missing --metadata file" "nope.json*" --metadata "$WORK/nope.json"
echo '[1]' >"$WORK/list.json"
expect_refusal "an override file that is not an object" "list.json*" --metadata "$WORK/list.json"
echo "PASS test_model_card_metadata ($(clients_elapsed))"
