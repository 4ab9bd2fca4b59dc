"""Puts the Qwen3.5 or Gemma 4 tokenizer of llama.cpp's vocabulary files into a tiny rebox-mkfixture checkpoint.

llama.cpp ships, in its source tree's models/, vocabulary GGUFs its converter wrote (convert_hf_to_gguf_update.py):
ggml-vocab-gemma-4.gguf from Gemma 4's tokenizer, and ggml-vocab-qwen35.gguf, which is byte for byte its
ggml-vocab-qwen2.gguf with the pre string "qwen35" (Qwen2's 151,936-entry table; released Qwen3.5 checkpoints
have 248,320 rows). This script
rebuilds from such a file the tokenizer files a Hugging Face checkpoint ships, and places them in
FIXTURE_DIR (a `rebox-mkfixture --arch qwen35|gemma4 --format float` checkpoint), whose config.json
vocab_size and embedding / output rows are then widened to the real vocabulary (each new row a copy of
row id % old_rows, so the values stay those of the fixture; the hidden size stays tiny).

qwen35 (gpt2 BPE, the converter's _set_vocab_gpt2): tokenizer.json has the file's NORMAL tokens as
model.vocab (byte-level text, ids 0..n-1), its merges as [left, right] pairs (no token holds a space),
its CONTROL tokens as added_tokens with special true, and the pre_tokenizer / decoder of Qwen's
tokenizer.json with the Split regex llama.cpp's src/llama-vocab.cpp quotes as the "original regex from
tokenizer.json" for LLAMA_VOCAB_PRE_TYPE_QWEN35, and no normalizer: unlike Qwen2's and Qwen3's NFC one,
as the .out ids of the file's decomposed test strings show ("e" U+0301 -> [68, 53839], "e" then the lone
mark; NFC would give the single token 963 for "\u00e9"). The file's [PAD<id>] entries are not
tokens: get_vocab_base pads the token list to config.json vocab_size with them. tokenizer_config.json is
Qwen's (bos_token null, eos / pad <|endoftext|>, the file's chat template) and config.json gets
bos_token_id / eos_token_id = the file's ids (gguf-py SpecialVocab takes a BOS that tokenizer_config.json
leaves null from config.json).

gemma4 (BPE with byte fallback over U+2581-escaped text, Gemma4Model.set_vocab through gguf-py's
LlamaHfVocab): every token is in model.vocab at its id; merges as pairs; the layout of Gemma's
tokenizer.json (normalizer Replace " " -> U+2581, a Split " " pre-tokenizer, a Replace / ByteFallback /
Fuse decoder, unk <unk>, byte_fallback and fuse_unk true) without a post-processor: the vocabulary file
holds no add_bos_token from SpecialVocab (Gemma4Model writes its own, last). LlamaHfVocab marks CONTROL
the ids of the tokenizer's special tokens; google/gemma-4-31B-it's tokenizer_config.json names them as
bos / eos / unk / pad / mask_token, as model-specific top-level keys (sot_token, eot_token, ...) and in
extra_special_tokens ["<|video|>"]; this tokenizer_config.json has those special-token keys (and a
few plain ones), each checked to name a token the vocabulary file has CONTROL or USER_DEFINED
(Gemma4Model's visible tokens), and together all of those. The 24 tokens are tokenizer.json's
added_tokens (special true); the real file may list more (Gemma's <unusedN> are added tokens in Gemma 3's):
LlamaHfVocab's types do not depend on that, all ids being below model.vocab's size, and no test text holds
such a token. The chat template is chat_template.jinja, as google/gemma-4-31B-it ships it.

The vocabulary file is read with gguf_fast (gguf-py's GGUFReader takes seconds per 500k-entry array).
Writes FIXTURE_DIR.tests.json (the test strings and ids of VOCAB.gguf.inp / .out, and the
tokenizer's facts the tests use).

Usage: real_tokenizer_fixture.py qwen35|gemma4 VOCAB.gguf FIXTURE_DIR
"""
import json
import struct
import sys

import numpy as np

from gguf_fast import FastGguf

NORMAL, CONTROL, USER_DEFINED, BYTE = 1, 3, 4, 6

QWEN35_REGEX = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}|"
                " ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
ESCAPE = "\u2581"

# google/gemma-4-31B-it's tokenizer_config.json: the model-specific special tokens, by key.
GEMMA4_NAMED = {
    "audio_token": "<|audio|>", "boa_token": "<|audio>", "boi_token": "<|image>", "eoa_token": "<audio|>",
    "eoc_token": "<channel|>", "eoi_token": "<image|>", "eot_token": "<turn|>", "escape_token": "<|\"|>",
    "etc_token": "<tool_call|>", "etd_token": "<tool|>", "etr_token": "<tool_response|>",
    "image_token": "<|image|>", "soc_token": "<|channel>", "sot_token": "<|turn>", "stc_token": "<|tool_call>",
    "std_token": "<|tool>", "str_token": "<|tool_response>", "think_token": "<|think|>",
}


def read_vocab(path):
    kv = FastGguf(path).kv

    def value(key):
        return kv[key][1] if key in kv else None

    return {
        "tokens": value("tokenizer.ggml.tokens"),
        "types": [int(t) for t in value("tokenizer.ggml.token_type")],
        "merges": value("tokenizer.ggml.merges"),
        "chat_template": value("tokenizer.chat_template"),
        "ids": {k.split(".")[-1][: -len("_token_id")]: int(v[1]) for k, v in kv.items() if k.endswith("_token_id")},
    }


def merge_pairs(merges):
    pairs = []
    for m in merges:
        left, sep, right = m.partition(" ")
        if not sep or " " in right or not left:
            sys.exit(f"FAIL: merge {m!r} does not split at one space")
        pairs.append([left, right])
    return pairs


def added(i, text, special=True):
    return {"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


def qwen35_files(v):
    tokens, types = v["tokens"], v["types"]
    n_base = types.index(CONTROL)
    if any(t != NORMAL for t in types[:n_base]):
        sys.exit("FAIL: qwen35 vocabulary: a non-NORMAL token before the first CONTROL one")
    controls = [i for i, t in enumerate(types) if t == CONTROL]
    pads = [i for i, t in enumerate(types) if t not in (NORMAL, CONTROL)]
    if any(tokens[i] != f"[PAD{i}]" for i in pads) or controls != list(range(n_base, n_base + len(controls))):
        sys.exit("FAIL: qwen35 vocabulary: expected NORMAL tokens, then CONTROL ones, then [PAD<id>] fillers")
    eos = tokens[v["ids"]["eos"]]
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(i, tokens[i]) for i in controls],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN35_REGEX}, "behavior": "Isolated", "invert": False},
            BYTE_LEVEL]},
        "post_processor": BYTE_LEVEL, "decoder": BYTE_LEVEL,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {tokens[i]: i for i in range(n_base)}, "merges": merge_pairs(v["merges"])},
    }
    config = {
        "add_prefix_space": False,
        "added_tokens_decoder": {str(a["id"]): {k: a[k] for k in a if k != "id"}
                                 for a in tokenizer["added_tokens"]},
        "additional_special_tokens": [tokens[i] for i in controls if tokens[i] != eos],
        "bos_token": None, "chat_template": v["chat_template"], "clean_up_tokenization_spaces": False,
        "eos_token": eos, "errors": "replace", "model_max_length": 32768, "pad_token": tokens[v["ids"]["padding"]],
        "split_special_tokens": False, "tokenizer_class": "Qwen2Tokenizer", "unk_token": None,
    }
    model_config = {"vocab_size": len(tokens), "bos_token_id": v["ids"]["bos"], "eos_token_id": v["ids"]["eos"]}
    return tokenizer, config, model_config


def gemma4_files(v):
    tokens, types = v["tokens"], v["types"]
    ids = {t: i for i, t in enumerate(tokens)}
    if len(ids) != len(tokens):
        sys.exit("FAIL: gemma4 vocabulary: a token text occurs twice")
    marked = [i for i, t in enumerate(types) if t in (CONTROL, USER_DEFINED)]
    named = {"bos_token": tokens[v["ids"]["bos"]], "eos_token": tokens[v["ids"]["eos"]],
             "unk_token": tokens[v["ids"]["unknown"]], "pad_token": tokens[v["ids"]["padding"]],
             "mask_token": tokens[v["ids"]["mask"]], **GEMMA4_NAMED}
    extra = ["<|video|>"]
    listed = sorted(ids[t] for t in [*named.values(), *extra])
    if listed != marked:
        sys.exit(f"FAIL: gemma4 vocabulary: its CONTROL / USER_DEFINED ids {marked} are not the ids of "
                 f"the tokens tokenizer_config.json names {listed}")
    escape = {"type": "Replace", "pattern": {"String": " "}, "content": ESCAPE}
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(i, tokens[i]) for i in marked],
        "normalizer": escape,
        "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
                          "invert": False},
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": ESCAPE}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": named["unk_token"],
                  "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
                  "byte_fallback": True, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merge_pairs(v["merges"])},
    }
    config = {
        "backend": "tokenizers", **named, "extra_special_tokens": extra, "model_max_length": 1000000000000000019884624838656,
        "padding_side": "left", "processor_class": "Gemma4Processor", "tokenizer_class": "GemmaTokenizer",
        "added_tokens_decoder": {str(a["id"]): {k: a[k] for k in a if k != "id"}
                                 for a in tokenizer["added_tokens"]},
    }
    return tokenizer, config, {"vocab_size": len(tokens), "vocab_size_per_layer_input": len(tokens)}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return header, data


def widen_rows(path, rows, names):
    header, data = read_safetensors(path)
    meta = header.pop("__metadata__", None)
    out, blobs, offset = {}, [], 0
    for name, info in header.items():
        start, end = info["data_offsets"]
        blob = data[start:end]
        if name in names:
            old = info["shape"][0]
            row_bytes = len(blob) // old
            table = np.frombuffer(blob, np.uint8).reshape(old, row_bytes)
            blob = table[np.arange(rows) % old].tobytes()
            info = dict(info, shape=[rows, *info["shape"][1:]])
        out[name] = dict(info, data_offsets=[offset, offset + len(blob)])
        offset += len(blob)
        blobs.append(blob)
    if meta is not None:
        out = {"__metadata__": meta, **out}
    text = json.dumps(out).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)


def vocab_tests(path):
    """The test strings and ids as llama.cpp's tests/test-tokenizer-0.cpp reads them."""
    raw = open(path + ".inp", encoding="utf-8", newline="").read()
    sep = "\n__ggml_vocab_test__\n"
    strings, pos = [], 0
    while pos < len(raw):
        nxt = raw.find(sep, pos)
        if nxt < 0:
            strings.append(raw[pos:])
            break
        strings.append(raw[pos:nxt])
        pos = nxt + len(sep)
    lines = open(path + ".out", encoding="utf-8", newline="").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(strings):
        sys.exit(f"FAIL: {path}: {len(strings)} test strings, {len(lines)} id lines")
    return [{"text": s, "ids": [int(x) for x in o.split()]} for s, o in zip(strings, lines)]


def main():
    kind, vocab_path, out = sys.argv[1:4]
    v = read_vocab(vocab_path)
    tokenizer, tok_config, model_config = (qwen35_files if kind == "qwen35" else gemma4_files)(v)
    with open(f"{out}/tokenizer.json", "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    with open(f"{out}/tokenizer_config.json", "w", encoding="utf-8") as f:
        json.dump(tok_config, f, ensure_ascii=False, indent=2)
    if kind == "gemma4":  # Gemma 4 ships its template as chat_template.jinja
        with open(f"{out}/chat_template.jinja", "w", encoding="utf-8", newline="") as f:
            f.write(v["chat_template"])
    with open(f"{out}/config.json", encoding="utf-8") as f:
        config = json.load(f)
    target = config.get("text_config", config)
    target.update(model_config)
    with open(f"{out}/config.json", "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
    names = {"model.embed_tokens.weight", "lm_head.weight", "model.language_model.embed_tokens.weight"}
    widen_rows(f"{out}/model.safetensors", model_config["vocab_size"], names)
    facts = {"kind": kind, "vocab_size": len(v["tokens"]), "ids": v["ids"],
             "tests": vocab_tests(vocab_path)}
    with open(f"{out}.tests.json", "w", encoding="utf-8") as f:
        json.dump(facts, f, ensure_ascii=False)
    print(f"  {kind}: {len(v['tokens'])} tokens, {len(v['merges'])} merges, "
          f"{len(tokenizer['added_tokens'])} added tokens, {len(facts['tests'])} test strings -> {out}")


if __name__ == "__main__":
    main()
