"""rebox's GGUF of an encoder checkpoint against llama.cpp's own converter classes, read with gguf-py:
 - the {arch}.* KVs and general.architecture: exactly the keys and values the converter's
   set_gguf_parameters writes for the same checkpoint (the class chain run as written by converter_run.py);
 - every tensor: the names the converter's filter_tensors + modify_tensors give the source tensors, values
   bit-identical to what it yields (float32; MLX sources dequantized by source_values.py; block types in
   rebox's file dequantized by gguf-py); 1-D tensors, token_types and position_embd F32;
 - --wordpiece VOCAB.gguf: tokens and token types equal that vocabulary GGUF (written by llama.cpp's
   converter for the same WordPiece vocabulary) padded to config.json's vocab_size as get_vocab_base pads
   ("[PAD<i>]" UNUSED, phantom-prefixed by BertModel.set_vocab); special ids and add_* / normalizer flags
   as gguf-py's SpecialVocab writes them; token_type_count = type_vocab_size.
 - --bpe PRE: a byte-level BPE vocabulary as TextModel.get_vocab_base builds it from tokenizer.json (the
   transformers tokenizer's vocab: model.vocab and added_tokens; added special tokens CONTROL, other added
   ones USER_DEFINED, the rest NORMAL; ids up to vocab_size without a token "[PAD<i>]" UNUSED), pre PRE,
   merges, special ids and add_* flags as gguf-py's SpecialVocab(load_merges=True) writes them after the
   converter's own add_bos / add_eos / add_sep (ModernBertModel.set_vocab: True unless SpecialVocab
   overwrites them); no token_type_count.
 - --loader-kv KEY=FIELD: a KV the converter does not write but llama.cpp's loader requires, expected with
   config.json's FIELD as value (modern-bert.attention.layer_norm_epsilon = norm_eps); KEY==JSON: that value
   (a reranker's pooling_type RANK = 4, which the converter reads only from modules.json).
Usage: ggufpy_encoder_ref.py LLAMA_SRC MODEL_DIR FILE.gguf --chain bert.py:NomicBertModel,bert.py:BertModel,...
       [--wordpiece VOCAB.gguf | --bpe PRE] [--loader-kv KEY=FIELD]
"""
import argparse
import json
import os
import sys

import gguf
import numpy as np
from gguf import GGUFReader

from converter_run import Converter
from source_values import Source

UNUSED = 5


class Recorder:  # records what SpecialVocab.add_to_gguf writes
    def __init__(self):
        self.kvs = {}

    def __getattr__(self, name):
        def handler(*args):
            self.kvs[name] = args[0] if args else None
        if name.startswith("add_"):
            return handler
        raise AttributeError(name)


def field(reader, key):
    f = reader.fields.get(key)
    return None if f is None else f.contents()


def same(got, want):
    if isinstance(want, float) or isinstance(got, float):
        return got is not None and want is not None and np.float32(got) == np.float32(want)
    if isinstance(want, (list, tuple)):
        return got is not None and len(got) == len(want) and all(same(a, b) for a, b in zip(got, want))
    return got == want


def check_bpe(args, cfg, reader, problems):
    tok = json.load(open(os.path.join(args.model_dir, "tokenizer.json"), encoding="utf-8"))
    vocab = dict(tok["model"]["vocab"])
    added = {t["id"]: t for t in tok.get("added_tokens", [])}
    for i, t in added.items():
        vocab[t["content"]] = i
    reverse = {i: t for t, i in vocab.items()}
    tokens, types = [], []
    for i in range(cfg["vocab_size"]):
        if i not in reverse:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
        else:
            tokens.append(reverse[i])
            types.append(gguf.TokenType.NORMAL if i not in added else
                         gguf.TokenType.CONTROL if added[i]["special"] else gguf.TokenType.USER_DEFINED)
    want = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": args.bpe, "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.token_type": [int(t) for t in types]}
    special = gguf.SpecialVocab(args.model_dir, load_merges=True, n_vocab=cfg["vocab_size"])
    rec = Recorder()
    rec.kvs.update({"add_add_bos_token": True, "add_add_eos_token": True, "add_add_sep_token": True})
    special.add_to_gguf(rec, quiet=True)
    want["tokenizer.ggml.merges"] = rec.kvs["add_token_merges"]
    names = {"bos": "bos_token_id", "eos": "eos_token_id", "unk": "unknown_token_id",
             "sep": "seperator_token_id", "pad": "padding_token_id", "mask": "mask_token_id"}
    for typ, key in names.items():
        want["tokenizer.ggml." + key] = rec.kvs.get(f"add_{typ}_token_id")
    for typ in ("bos", "eos", "sep"):
        want[f"tokenizer.ggml.add_{typ}_token"] = rec.kvs.get(f"add_add_{typ}_token")
    want["tokenizer.ggml.token_type_count"] = None
    for key, value in want.items():
        f = reader.fields.get(key)
        if f is None:
            got = None
        elif key in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges"):
            got = [f.contents(i) for i in range(len(f.data))]
        else:
            got = f.contents()
        if got != value:
            if isinstance(value, list) and isinstance(got, list):
                first = next((i for i, (x, y) in enumerate(zip(got, value)) if x != y), min(len(got), len(value)))
                problems.append(f"{key}: differs from the converter's at index {first} "
                                f"({got[first:first + 1]} vs {value[first:first + 1]}; lengths {len(got)}, {len(value)})")
            else:
                problems.append(f"{key}: {got!r}, the converter writes {value!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("llama_src")
    ap.add_argument("model_dir")
    ap.add_argument("file")
    ap.add_argument("--chain", required=True)
    ap.add_argument("--wordpiece")
    ap.add_argument("--bpe")
    ap.add_argument("--loader-kv", action="append", default=[])
    args = ap.parse_args()
    chain = [tuple(part.split(":")) for part in args.chain.split(",")]
    cfg = json.load(open(os.path.join(args.model_dir, "config.json")))
    conv = Converter(args.llama_src, chain, args.model_dir, dict(cfg))
    reader = GGUFReader(args.file)
    problems = []

    # Architecture KVs: the converter's set_gguf_parameters.
    want_kvs = {k: v for k, v in conv.kvs().items() if k != "general.file_type"}
    arch = want_kvs["general.architecture"]
    for item in args.loader_kv:
        key, cfg_field = item.split("=", 1)
        if key in want_kvs:
            problems.append(f"{key}: the converter writes it now: drop --loader-kv")
        want_kvs[key] = json.loads(cfg_field[1:]) if cfg_field.startswith("=") else cfg[cfg_field]
    got_keys = sorted(k for k in reader.fields if k.startswith(arch + "."))
    want_keys = sorted(k for k in want_kvs if k.startswith(arch + "."))
    if got_keys != want_keys:
        problems.append(f"{arch}.* keys differ: only in the file {sorted(set(got_keys) - set(want_keys))}, "
                        f"only the converter's {sorted(set(want_keys) - set(got_keys))}")
    for key, want in want_kvs.items():
        got = field(reader, key)
        if hasattr(want, "value"):
            want = want.value
        if not same(got, want):
            problems.append(f"{key}: {got!r}, the converter writes {want!r}")

    # Tensors: the converter's names and values.
    src = Source(args.model_dir)
    expected = {}
    for name in src.names():
        for gguf_name, data in conv.tensors(name, src.values(name).astype(np.float32)):
            expected[gguf_name] = np.asarray(data, dtype=np.float32)
    got = {t.name: t for t in reader.tensors}
    if sorted(got) != sorted(expected):
        problems.append(f"tensors {sorted(set(got) ^ set(expected))} differ between the file and the converter")
    for name, want in expected.items():
        t = got.get(name)
        if t is None:
            continue
        if t.tensor_type.name != "F32" and (name.startswith(("position_embd", "token_types")) or want.ndim == 1):
            problems.append(f"{name}: {t.tensor_type.name}, expected F32 (as the converter writes it)")
            continue
        if t.tensor_type.name == "F32":
            data = np.asarray(t.data).reshape(want.shape)
        else:
            data = gguf.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(want.shape)
        if data.view(np.uint32).tobytes() != want.view(np.uint32).tobytes():
            problems.append(f"{name}: values differ from the converter's")

    if args.wordpiece:
        ref = GGUFReader(args.wordpiece)
        for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type"):
            r = ref.fields[key]
            want = [r.contents(i) for i in range(len(r.data))]
            pad = range(len(want), cfg["vocab_size"])
            want += ["\u2581[PAD%d]" % i for i in pad] if key.endswith("tokens") else [UNUSED for _ in pad]
            a = reader.fields[key]
            have = [a.contents(i) for i in range(len(a.data))]
            if have != want:
                first = next((i for i, (x, y) in enumerate(zip(have, want)) if x != y), min(len(have), len(want)))
                problems.append(f"{key}: differs from the converter's at index {first} "
                                f"({have[first:first + 1]} vs {want[first:first + 1]})")
        if field(reader, "tokenizer.ggml.model") != "bert":
            problems.append("tokenizer.ggml.model is not bert")
        if field(reader, "tokenizer.ggml.token_type_count") != cfg.get("type_vocab_size", 1):
            problems.append("tokenizer.ggml.token_type_count differs from type_vocab_size")
        special = gguf.SpecialVocab(args.model_dir, load_merges=False, n_vocab=cfg["vocab_size"])
        rec = Recorder()
        special.add_to_gguf(rec, quiet=True)
        names = {"bos": "bos_token_id", "eos": "eos_token_id", "unk": "unknown_token_id",
                 "sep": "seperator_token_id", "pad": "padding_token_id", "mask": "mask_token_id"}
        for typ, key in names.items():
            if field(reader, "tokenizer.ggml." + key) != rec.kvs.get(f"add_{typ}_token_id"):
                problems.append(f"tokenizer.ggml.{key}: {field(reader, 'tokenizer.ggml.' + key)}, "
                                f"SpecialVocab {rec.kvs.get(f'add_{typ}_token_id')}")
        for typ in ("bos", "eos", "sep"):
            if field(reader, f"tokenizer.ggml.add_{typ}_token") != rec.kvs.get(f"add_add_{typ}_token"):
                problems.append(f"tokenizer.ggml.add_{typ}_token differs from SpecialVocab's")
        for flag in ("lowercase", "strip_accents"):
            if field(reader, f"tokenizer.ggml.normalizer.{flag}") != rec.kvs.get(f"add_normalizer_{flag}"):
                problems.append(f"tokenizer.ggml.normalizer.{flag} differs from SpecialVocab's")

    if args.bpe:
        check_bpe(args, cfg, reader, problems)

    label = os.path.basename(args.file)
    if problems:
        print(f"FAIL: {label}:")
        for p in problems[:30]:
            print("  " + p)
        sys.exit(1)
    print(f"  {label}: {len(expected)} tensors bit-identical to {chain[0][1]}'s, {len(want_keys)} {arch}.* KVs "
          f"equal the converter's" + (", WordPiece vocabulary and specials as the converter writes them"
                                      if args.wordpiece else "")
          + (", BPE vocabulary, merges and specials as the converter writes them" if args.bpe else ""))


if __name__ == "__main__":
    main()
