"""rebox's xlm-roberta (and BertModel + XLM-R tokenizer) GGUF against llama.cpp's own converter code and gguf-py
(the file is read with gguf_fast.py: gguf-py's GGUFReader takes ~15 s on a 250k-token vocabulary). The converter cannot be imported here (conversion/base.py needs torch), so the functions that
decide this file are taken from the bundle's conversion/bert.py source with Python's ast module and run
unchanged:
 - BertModel._xlmroberta_set_vocab on the checkpoint directory, writing into gguf-py's own GGUFWriter (each
   key, value and the GGUF type gguf-py would give it recorded, nothing written); its tokenizer.json branch asks transformers' AutoTokenizer for five facts, which
   HfUnigramTokenizer below gives as transformers' XLMRobertaTokenizerFast does (the pieces, added tokens and
   special ids of tokenizer.json / tokenizer_config.json, add_prefix_space default true,
   clean_up_tokenization_spaces as tokenizer_config.json says). Every tokenizer.* KV of rebox's file must equal
   that file's, and rebox's file must have no other tokenizer.* key;
 - BertModel._xlmroberta_tokenizer_init (XLMRobertaModel only): the position offset and context_length;
 - the bert.* keys with config.json's values (as ggufpy_bert.py), the pooling the sentence-transformers files
   give (RANK for a reranker), the classifier labels;
 - every tensor: XLMRobertaModel/BertModel.filter_tensors' renames and drops, then gguf-py's TensorNameMap
   (classifier.dense -> cls, classifier.out_proj -> cls.output), position_embd = source[offset:] (the
   modify_tensors slice); values bit-identical to the source's (float32, or MLX dequantized by
   source_values.py; block types dequantized by gguf-py), position_embd / token_types and 1-D tensors F32.
Usage: ggufpy_xlmr.py LLAMA_SRC MODEL_DIR FILE.gguf [--reranker]
"""
import ast
import json
import logging
import os
import sys
import tempfile
import types
from enum import IntEnum
from pathlib import Path

import numpy as np
import gguf
from gguf import MODEL_ARCH, get_tensor_name_map

from gguf_fast import FastGguf
from source_values import Source


class HfUnigramTokenizer:
    """The five facts _xlmroberta_set_vocab reads from transformers' XLMRobertaTokenizerFast."""

    def __init__(self, model_dir):
        self.tj = json.load(open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8"))
        path = os.path.join(model_dir, "tokenizer_config.json")
        self.tc = json.load(open(path, encoding="utf-8")) if os.path.isfile(path) else {}
        self.pieces = [p for p, _ in self.tj["model"]["vocab"]]
        self.added = {t["content"]: t["id"] for t in self.tj.get("added_tokens", [])}
        self.vocab_size = len(self.pieces)  # get_vocab_size(with_added_tokens=False)
        self.add_prefix_space = self.tc.get("add_prefix_space", True)
        self.clean_up_tokenization_spaces = self.tc.get("clean_up_tokenization_spaces", False)
        ids = {p: i for i, p in enumerate(self.pieces)}
        ids.update(self.added)
        named = []
        for key in ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"):
            value = self.tc.get(key)
            named.append(value.get("content") if isinstance(value, dict) else value)
        named += [t["content"] if isinstance(t, dict) else t for t in self.tc.get("additional_special_tokens", [])]
        self.all_special_ids = sorted({ids[t] for t in named if t in ids})

    def get_added_vocab(self):
        return dict(self.added)

    def _convert_id_to_token(self, i):
        for content, j in self.added.items():
            if j == i:
                return content
        return self.pieces[i] if i < len(self.pieces) else None


def converter_functions(llama_src):
    """BertModel's XLM-R methods from the bundle's conversion/bert.py, with the names they use."""
    ns = {"os": os, "json": json, "gguf": gguf, "Path": Path, "logger": logging.getLogger("conversion")}
    base = ast.parse(open(os.path.join(llama_src, "conversion", "base.py"), encoding="utf-8").read())
    for node in base.body:
        if isinstance(node, ast.ClassDef) and node.name == "SentencePieceTokenTypes":
            ns["IntEnum"] = IntEnum
            exec(compile(ast.Module([node], []), "conversion/base.py", "exec"), ns)
    tree = ast.parse(open(os.path.join(llama_src, "conversion", "bert.py"), encoding="utf-8").read())
    wanted = ("_xlmroberta_set_vocab", "_xlmroberta_tokenizer_init")
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "BertModel":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name in wanted:
                    exec(compile(ast.Module([item], []), "conversion/bert.py", "exec"), ns)
    missing = [w for w in wanted if w not in ns]
    if missing:
        raise SystemExit(f"ggufpy_xlmr.py: conversion/bert.py has no BertModel.{missing}")
    return ns


def install_import_stand_ins():
    """transformers (AutoTokenizer) for the tokenizer.json branch; sentencepiece_model_pb2 needs protobuf,
    which only the sentencepiece.bpe.model branch uses."""
    transformers = types.ModuleType("transformers")
    transformers.AutoTokenizer = types.SimpleNamespace(from_pretrained=lambda d: HfUnigramTokenizer(str(d)))
    sys.modules["transformers"] = transformers
    import sentencepiece
    try:
        from sentencepiece import sentencepiece_model_pb2  # noqa: F401
    except ImportError:
        stub = types.ModuleType("sentencepiece.sentencepiece_model_pb2")
        sys.modules[stub.__name__] = stub
        sentencepiece.sentencepiece_model_pb2 = stub


def unwrapped_copy(model_dir):
    """The converter reads the charsmap only from a top-level Precompiled normalizer (it raises KeyError on
    the Sequence newer tokenizer.json files have): a copy of the directory whose normalizer is that Sequence's
    Precompiled member, so the converter can be asked what it writes for the same charsmap. None when the
    normalizer is already top level."""
    path = os.path.join(model_dir, "tokenizer.json")
    if not os.path.isfile(path):
        return None
    tj = json.load(open(path, encoding="utf-8"))
    normalizer = tj.get("normalizer") or {}
    if normalizer.get("type") != "Sequence":
        return None
    tj["normalizer"] = next(n for n in normalizer["normalizers"] if n.get("type") == "Precompiled")
    copy = tempfile.mkdtemp()
    for name in os.listdir(model_dir):
        if name != "tokenizer.json":
            os.symlink(os.path.join(os.path.abspath(model_dir), name), os.path.join(copy, name))
    json.dump(tj, open(os.path.join(copy, "tokenizer.json"), "w"), ensure_ascii=False)
    return copy


class RecordingWriter(gguf.GGUFWriter):
    """gguf-py's own writer, recording every key/value/type the converter adds (nothing is written)."""

    def __init__(self):
        self.recorded = {}
        super().__init__(None, arch="bert")

    def add_key_value(self, key, val, vtype, sub_type=None):
        self.recorded[key] = (vtype, sub_type, val)


def gguf_kind(vtype, sub_type, val):
    """The type name FastGguf reports for what gguf-py would write."""
    V = gguf.GGUFValueType
    if vtype == V.ARRAY:
        item = sub_type or (V.STRING if val and isinstance(val[0], (str, bytes)) else V.get_type(val[0]))
        if isinstance(val, (bytes, bytearray)):
            item = V.UINT8
        return f"ARRAY[{item.name}]"
    return vtype.name


def converter_vocab(llama_src, model_dir, cfg, xlmr):
    """What the converter writes for the checkpoint's vocabulary (key -> (type name, value)), and the model
    object _xlmroberta_tokenizer_init left (position offset, hparams)."""
    install_import_stand_ins()
    if (copy := unwrapped_copy(model_dir)) is not None:
        print("  (the Precompiled normalizer sits in a Sequence, which the converter cannot read: it is run "
              "on the same files with that member at the top level)")
        model_dir = copy
    ns = converter_functions(llama_src)
    writer = RecordingWriter()
    model = types.SimpleNamespace(dir_model=Path(model_dir), hparams=dict(cfg), gguf_writer=writer,
                                  model_arch=gguf.MODEL_ARCH.BERT, _position_offset=None)
    if xlmr:
        ns["_xlmroberta_tokenizer_init"](model)
    ns["_xlmroberta_set_vocab"](model)
    out = {}
    for key, (vtype, sub_type, val) in writer.recorded.items():
        kind = gguf_kind(vtype, sub_type, val)
        if kind == "ARRAY[STRING]":
            val = [v.decode("utf-8") if isinstance(v, bytes) else v for v in val]
        elif kind.startswith("ARRAY["):
            val = np.frombuffer(bytes(val), dtype=np.uint8) if isinstance(val, (bytes, bytearray)) else \
                np.asarray(val, dtype={"FLOAT32": np.float32, "INT32": np.int32, "UINT32": np.uint32}[kind[6:-1]])
        out[key] = (kind, val)
    return out, model


def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.tobytes() == b.astype(a.dtype).tobytes()
    return a == b


def main():
    llama_src, model_dir, path = sys.argv[1:4]
    reranker = "--reranker" in sys.argv
    gguf_file = FastGguf(path)
    kv = gguf_file.kv
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    xlmr = cfg["model_type"] == "xlm-roberta"
    ref, converted = converter_vocab(llama_src, model_dir, cfg, xlmr)
    problems = []

    # Tokenizer: every tokenizer.* KV the converter wrote, with its type, and no other.
    want_keys = sorted(k for k in ref if k.startswith("tokenizer."))
    got_keys = sorted(k for k in kv if k.startswith("tokenizer."))
    if want_keys != got_keys:
        problems.append(f"tokenizer keys: rebox has {sorted(set(got_keys) - set(want_keys))} more, "
                        f"lacks {sorted(set(want_keys) - set(got_keys))}")
    for key in want_keys:
        if key not in kv:
            continue
        (want_kind, want), (got_kind, got) = ref[key], kv[key]
        if want_kind != got_kind:
            problems.append(f"{key}: type {got_kind}, the converter's {want_kind}")
        elif not same(want, got):
            if isinstance(want, (list, np.ndarray)):
                n = min(len(got), len(want))
                first = next((i for i in range(n) if not same(got[i], want[i])), n)
                problems.append(f"{key}: {len(got)} entries, the converter's {len(want)}; first difference at "
                                f"{first}: {got[first:first + 1]} vs {want[first:first + 1]}")
            else:
                problems.append(f"{key}: {got!r:.80}, the converter's {want!r:.80}")

    def expect(key, want):
        got = kv.get(key, (None, None))[1]
        ok = got is not None and np.float32(got) == np.float32(want) if isinstance(want, float) else got == want
        if not ok:
            problems.append(f"{key}: {got!r}, expected {want!r}")

    # Architecture KVs: the converter's bert keys with config.json's values (context after the offset).
    values = {"bert.block_count": cfg["num_hidden_layers"],
              "bert.context_length": converted.hparams["max_position_embeddings"],
              "bert.embedding_length": cfg["hidden_size"], "bert.feed_forward_length": cfg["intermediate_size"],
              "bert.attention.head_count": cfg["num_attention_heads"],
              "bert.attention.layer_norm_epsilon": float(cfg["layer_norm_eps"]), "bert.attention.causal": False}
    for key, want in values.items():
        expect(key, want)
    pooling = 4 if reranker else {True: 2, False: 1}[
        json.load(open(os.path.join(model_dir, "1_Pooling", "config.json")))["pooling_mode_cls_token"]]
    expect("bert.pooling_type", pooling)
    extra = {"bert.pooling_type"} | ({"bert.classifier.output_labels"} if reranker else set())
    got_arch = sorted(k for k in kv if k.startswith("bert."))
    if got_arch != sorted(set(values) | extra):
        problems.append(f"bert.* keys {got_arch}, expected {sorted(set(values) | extra)}")
    if reranker:
        got = kv.get("bert.classifier.output_labels", (None, None))[1]
        want = [v for _, v in sorted(cfg["id2label"].items(), key=lambda item: int(item[0]))]
        if got != want:
            problems.append(f"bert.classifier.output_labels {got}, expected {want}")

    # Tensors: filter_tensors ("roberta." / "bert." stripped; position ids, pooler, MLM heads dropped), then
    # the name map; the position table sliced as XLMRobertaModel.modify_tensors does.
    name_map = get_tensor_name_map(MODEL_ARCH.BERT, cfg["num_hidden_layers"])
    offset = converted._position_offset if xlmr else None
    src = Source(model_dir)
    expected = {}
    for name in src.names():
        stem = name
        for prefix in ("roberta.", "bert."):
            if stem.startswith(prefix):
                stem = stem[len(prefix):]
        if stem in ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias") or \
                stem.startswith(("cls.predictions", "cls.seq_relationship", "lm_head.")):
            continue
        gguf_name = name_map.get_name(stem, try_suffixes=(".weight", ".bias"))
        if gguf_name is None:
            problems.append(f"{name}: gguf-py has no bert name for it")
            continue
        data = src.values(name).astype(np.float32)
        if stem == "embeddings.position_embeddings.weight" and offset is not None:
            data = data[offset:, :]
        expected[gguf_name] = data
    got = gguf_file.tensors
    if sorted(got) != sorted(expected):
        problems.append(f"tensors {sorted(set(got) ^ set(expected))} differ between the file and the converter")
    for name, want in expected.items():
        if name not in got:
            continue
        kind, ne, raw = got[name]
        type_name = gguf.GGMLQuantizationType(kind).name
        if list(reversed(ne)) != list(want.shape) and not (want.ndim == 1 and ne == [want.size]):
            problems.append(f"{name}: ne {ne}, the converter's {list(reversed(want.shape))}")
            continue
        if type_name != "F32" and (name.startswith(("position_embd", "token_types")) or want.ndim == 1):
            problems.append(f"{name}: {type_name}, expected F32 (as the converter writes it)")
            continue
        block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType(kind)]
        data = np.asarray(raw[: want.size // block * size])
        if type_name == "F32":
            data = data.view(np.float32)
        else:  # a block type (MLX source): gguf-py's own dequantization
            data = gguf.dequantize(data, gguf.GGMLQuantizationType(kind)).astype(np.float32)
        if data.reshape(-1).view(np.uint32).tobytes() != want.reshape(-1).view(np.uint32).tobytes():
            problems.append(f"{name}: values differ from the source")
    label = os.path.basename(path)
    if problems:
        print(f"FAIL: {label}:")
        for p in problems[:30]:
            print("  " + p)
        sys.exit(1)
    print(f"  {label}: {len(expected)} tensors bit-identical under the converter's names "
          f"(position offset {offset}), bert.* and {len(want_keys)} tokenizer KVs equal the converter's")


if __name__ == "__main__":
    main()
