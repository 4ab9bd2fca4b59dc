"""Every tokenizer.* KV of rebox's GGUF for a Kimi-K2 style folder (tiktoken.model,
tokenization_kimi.py, tokenizer_config.json, no tokenizer.json) against llama.cpp's own converter:
DeepseekV2Model.set_vocab (conversion/deepseek.py, the kimi-k2 branch) run as written through
converter_run.py, with QwenModel.bpe / token_bytes_to_string from conversion/qwen.py and gguf-py's
SpecialVocab. transformers is not installed, so two stand-ins take its place:
  - AutoTokenizer.from_pretrained returns the object Kimi's remote-code TikTokenTokenizer would be for
    what set_vocab reads: model._mergeable_ranks as tiktoken's load_tiktoken_bpe reads the file (base64
    token, int rank per non-empty line), and special_tokens as TikTokenTokenizer.__init__ builds them
    (ids n .. n + num_reserved_special_tokens + 1, named by added_tokens_decoder, else
    <|reserved_token_ID|>);
  - transformers.convert_slow_tokenizer.bytes_to_unicode is gguf-py's own copy (gguf/vocab.py).
get_vocab_base_pre is answered "kimi-k2": the converter names the tokenizer by the hash of its
encoding of a check text, which only the real Kimi-K2 vocabulary gives; this fixture's ranks are
not Kimi's (tests/clients/kimi_tiktoken_fixture.mjs).
Usage: kimi_tiktoken_converter.py LLAMA_SRC MODEL_DIR REBOX.gguf   (exit 1 on any difference)
"""
import base64
import json
import logging
import pathlib
import re
import sys
import types

import gguf
import numpy as np

from converter_run import Converter, static_method

CHAIN = [("deepseek.py", "DeepseekV2Model"), ("base.py", "TextModel"), ("base.py", "ModelBase")]


def kimi_tokenizer(model_dir):
    ranks = {}
    for line in (model_dir / "tiktoken.model").read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    source = (model_dir / "tokenization_kimi.py").read_text(encoding="utf-8")
    reserved = int(re.search(r"^\s*num_reserved_special_tokens\s*=\s*(\d+)", source, re.M).group(1))
    config = json.loads((model_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    mapping = {int(i): entry["content"] for i, entry in config.get("added_tokens_decoder", {}).items()}
    n = len(ranks)
    special = {mapping.get(i, f"<|reserved_token_{i}|>"): i for i in range(n, n + reserved + 2)}
    return types.SimpleNamespace(model=types.SimpleNamespace(_mergeable_ranks=ranks), special_tokens=special)


def main():
    llama_src, model_dir, rebox_path = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    logging.getLogger("gguf.gguf_writer").setLevel(logging.ERROR)
    tokenizer = kimi_tokenizer(model_dir)
    transformers = types.ModuleType("transformers")
    transformers.AutoTokenizer = types.SimpleNamespace(from_pretrained=lambda *a, **k: tokenizer)
    slow = types.ModuleType("transformers.convert_slow_tokenizer")
    slow.bytes_to_unicode = gguf.vocab.bytes_to_unicode
    transformers.convert_slow_tokenizer = slow
    sys.modules["transformers"] = transformers
    sys.modules["transformers.convert_slow_tokenizer"] = slow
    qwen = types.SimpleNamespace(
        bpe=static_method(llama_src, "qwen.py", "QwenModel", "bpe"),
        token_bytes_to_string=static_method(llama_src, "qwen.py", "QwenModel", "token_bytes_to_string"))
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    conv = Converter(llama_src, CHAIN, model_dir, config, attrs={"_experts": None},
                     extra_globals={"QwenModel": qwen})
    conv.obj.get_vocab_base_pre = lambda tok: "kimi-k2"
    conv.obj.set_vocab()
    want = {k: v.value for k, v in conv.obj.gguf_writer.kv_data[0].items() if k.startswith("tokenizer.")}
    reader = gguf.GGUFReader(rebox_path)
    got = {k: f.contents() for k, f in reader.fields.items() if k.startswith("tokenizer.")}
    problems, explained = [], []
    for key in sorted(set(want) | set(got)):
        if key not in got:
            problems.append(f"{key}: missing in rebox's file")
        elif key not in want:
            if key in ("tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token") and not bool(got[key]):
                explained.append(f"{key} = false (the converter writes none: llama.cpp's default)")
            else:
                problems.append(f"{key}: the converter writes none")
        else:
            a, b = want[key], got[key]
            if isinstance(a, (list, tuple, np.ndarray)):
                a, b = list(a), list(b)
            if a != b:
                where = ""
                if isinstance(a, list):
                    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                    where = f" (first at {i}: {a[i] if i < len(a) else None!r} vs {b[i] if i < len(b) else None!r}; " \
                            f"{len(a)} vs {len(b)} entries)"
                problems.append(f"{key}: differs{where}")
    if problems:
        print(f"FAIL: {rebox_path}: tokenizer KVs differ from DeepseekV2Model.set_vocab's:")
        for p in problems:
            print("  " + p)
        sys.exit(1)
    for line in explained:
        print("  explained: " + line)
    print(f"ok: {len(want)} tokenizer.* KVs equal DeepseekV2Model.set_vocab's "
          f"({len(want['tokenizer.ggml.tokens'])} tokens, {len(want['tokenizer.ggml.merges'])} merges)")


if __name__ == "__main__":
    main()
