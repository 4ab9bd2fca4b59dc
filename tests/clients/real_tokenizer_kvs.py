"""Every tokenizer.* KV of rebox's GGUF against llama.cpp's vocabulary file for the same tokenizer.

The vocabulary file (models/ggml-vocab-qwen35.gguf, models/ggml-vocab-gemma-4.gguf in llama.cpp's source) is
the converter's output on the tokenizer that real_tokenizer_fixture.py rebuilt into the checkpoint, so
each key it holds must be in rebox's file with the same type and value (tokens, token types, scores, merges,
pre, model, the special ids, the add_* flags, the chat template), and rebox's file may hold no other
tokenizer.* key, except these, each checked to be exactly what is said:
  - tokenizer.ggml.add_bos_token / add_eos_token false where the vocabulary file has no such key: the
    converter writes a flag only when tokenizer_config.json or a TemplateProcessing post-processor sets one,
    rebox always writes both (Ollama's pre-0.30 Go engine defaults a missing add_bos_token to true:
    docs/check.md), and
    llama.cpp's default for both is false for these tokenizers (src/llama-vocab.cpp: add_bos / add_eos
    start false and only other pre types turn add_bos on), so the file tokenizes the same;
  - qwen35: the [PAD<id>] fillers past the real tokens are USER_DEFINED (4) in the vocabulary file and
    UNUSED (5) in rebox's: ggml-vocab-qwen35.gguf is byte for byte llama.cpp's older ggml-vocab-qwen2.gguf
    with the pre string changed, written when get_vocab_base typed fillers USER_DEFINED; v0.4.0's
    get_vocab_base (conversion/base.py, the `[PAD{i}]` branch) types them UNUSED, as rebox does. No text
    maps to a filler either way.
Reads both files with gguf_fast (a test-side reader sharing no code with rebox).

Usage: real_tokenizer_kvs.py qwen35|gemma4 VOCAB.gguf REBOX.gguf   (exit 1 on any other difference)
"""
import re
import sys

import numpy as np

from gguf_fast import FastGguf

USER_DEFINED, UNUSED = 4, 5


def main():
    kind, vocab_path, rebox_path = sys.argv[1:4]
    want = {k: v for k, v in FastGguf(vocab_path).kv.items() if k.startswith("tokenizer.")}
    got = {k: v for k, v in FastGguf(rebox_path).kv.items() if k.startswith("tokenizer.")}
    extra_flags = {"qwen35": ("tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token"),
                   "gemma4": ("tokenizer.ggml.add_eos_token",)}[kind]
    problems, explained = [], []
    for key in sorted(set(want) | set(got)):
        if key not in got:
            problems.append(f"{key}: missing in rebox's file (vocabulary file: {str(want[key][1])[:80]})")
            continue
        if key not in want:
            if key in extra_flags and got[key] == ("BOOL", False):
                explained.append(f"{key} = false (absent in the vocabulary file: llama.cpp's default)")
            else:
                problems.append(f"{key}: only in rebox's file: {got[key][0]} {str(got[key][1])[:80]}")
            continue
        (want_type, want_value), (got_type, got_value) = want[key], got[key]
        if want_type != got_type:
            problems.append(f"{key}: type {got_type}, vocabulary file {want_type}")
            continue
        if isinstance(want_value, np.ndarray):
            if want_value.shape != got_value.shape:
                problems.append(f"{key}: {got_value.size} values, vocabulary file {want_value.size}")
                continue
            # bit for bit (scores as their float bits)
            differ = np.flatnonzero(np.any(want_value.view(np.uint8).reshape(want_value.size, -1) !=
                                           got_value.view(np.uint8).reshape(got_value.size, -1), axis=1))
            if key == "tokenizer.ggml.token_type" and kind == "qwen35" and differ.size:
                tokens = want["tokenizer.ggml.tokens"][1]
                fillers = [i for i in differ if re.fullmatch(rf"\[PAD{i}\]", tokens[i]) and
                           want_value[i] == USER_DEFINED and got_value[i] == UNUSED]
                if len(fillers) == differ.size:
                    explained.append(f"{key}: the {len(fillers)} [PAD<id>] fillers UNUSED, USER_DEFINED in "
                                     "the older vocabulary file")
                    differ = np.array([], dtype=np.int64)
            if differ.size:
                i = int(differ[0])
                problems.append(f"{key}: {differ.size} values differ, first at {i}: {got_value[i]} "
                                f"(vocabulary file {want_value[i]})")
            continue
        if want_value != got_value:
            if isinstance(want_value, list):
                if len(want_value) != len(got_value):
                    problems.append(f"{key}: {len(got_value)} entries, vocabulary file {len(want_value)}")
                    continue
                i = next(i for i, (a, b) in enumerate(zip(want_value, got_value)) if a != b)
                n = sum(a != b for a, b in zip(want_value, got_value))
                problems.append(f"{key}: {n} entries differ, first at {i}: {got_value[i]!r} "
                                f"(vocabulary file {want_value[i]!r})")
            else:
                problems.append(f"{key}: {str(got_value)[:80]!r} (vocabulary file {str(want_value)[:80]!r})")
    same = len(set(want) & set(got))
    print(f"  {kind}: {same} tokenizer.* KVs of the vocabulary file compared with rebox's "
          f"({len(want['tokenizer.ggml.tokens'][1])} tokens, "
          f"{len(want.get('tokenizer.ggml.merges', ('', []))[1])} merges)")
    for line in explained:
        print(f"    explained: {line}")
    if problems:
        print(f"FAIL: {rebox_path}: tokenizer KVs differ from {vocab_path}:")
        for p in problems:
            print(f"  {p}")
        sys.exit(1)
    print(f"ok: every other tokenizer.* KV of {kind}'s vocabulary file is in rebox's file, equal")


if __name__ == "__main__":
    main()
