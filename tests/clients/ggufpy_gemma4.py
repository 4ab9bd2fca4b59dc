"""Rebox-converted Gemma 4 GGUFs against llama.cpp's own converter class chain from the bundle, bit for bit.

For each MODEL_DIR FILE.gguf TYPES triple: the source's values (source_values.py, the dequantized checkpoint;
an MLX MoE one with mlx-lm's sanitize undone, hf_tensors) go through Gemma4Model -> Gemma3Model -> TextModel -> ModelBase (converter_run.py, run as written):
generate_extra_tensors gives the computed rope_freqs, filter_tensors + modify_tensors every other tensor (the
vision tower skipped, layer_scalar given ".weight", the embedding cut to the tokenizer's size). Then
set_gguf_parameters and Gemma4Model.set_vocab write the KVs, set_vocab through gguf-py's own LlamaHfVocab and
SpecialVocab. gguf-py's GGUFReader reads FILE.gguf: every tensor must be one of those (name, ne, values bit
for bit), every one of those must be in the file, every KV the converter writes (gemma4.* and tokenizer.*:
the tokens, scores, token types with the USER_DEFINED channel / tool tokens, merges, special ids, add_* flags,
chat template) must be there with the same type and value, no other gemma4.* or tokenizer.* KV may be, and
both namespaces come in the converter's order.

LlamaHfVocab asks transformers' AutoTokenizer for the vocabulary (transformers is not installed here), so a
stand-in answers from the folder's files what a fast tokenizer answers: get_vocab (model.vocab plus the added
tokens), vocab_size (model.vocab's size), get_added_vocab (added_tokens), all_special_tokens / ids (the tokens
tokenizer_config.json names: bos, eos, unk, sep, pad, cls, mask, additional_special_tokens,
extra_special_tokens and any other top-level "*_token" key holding a token, as Gemma 4's sot_token / eot_token /
...: the converter's output on Gemma 4's own tokenizer, llama.cpp's models/ggml-vocab-gemma-4.gguf, has those
CONTROL).

Usage: ggufpy_gemma4.py LLAMA_SRC MODEL_DIR FILE.gguf TYPES [MODEL_DIR FILE.gguf TYPES ...]
"""
import json
import pathlib
import sys
import types

import numpy as np
import gguf

from converter_compare import compare_gguf, run_triples
from converter_run import Converter, block_id
from source_values import Source
from torch_shim import Torch


class StandInFastTokenizer:
    is_fast = True

    def __init__(self, folder):
        folder = pathlib.Path(folder)
        tok = json.load(open(folder / "tokenizer.json", encoding="utf-8"))
        cfg = json.load(open(folder / "tokenizer_config.json", encoding="utf-8"))
        self.vocab = dict(tok["model"]["vocab"])
        self.vocab_size = len(self.vocab)
        self._added = {a["content"]: a["id"] for a in tok.get("added_tokens", [])}
        self._all = {**self.vocab, **self._added}
        named = [cfg.get(k) for k in ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                                      "cls_token", "mask_token")]
        for key in ("additional_special_tokens", "extra_special_tokens"):
            extra = cfg.get(key) or []
            named += list(extra.values()) if isinstance(extra, dict) else list(extra)
        seven = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
        named += [v for k, v in cfg.items() if k.endswith("_token") and k not in seven and
                  (isinstance(v, str) or (isinstance(v, dict) and isinstance(v.get("content"), str)))]
        self.all_special_tokens = []
        for entry in named:
            text = entry.get("content") if isinstance(entry, dict) else entry
            if text and text not in self.all_special_tokens:
                self.all_special_tokens.append(text)
        self.all_special_ids = [self._all[t] for t in self.all_special_tokens]

    def get_vocab(self):
        return dict(self._all)

    def get_added_vocab(self):
        return dict(self._added)


sys.modules["transformers"] = types.SimpleNamespace(
    AutoTokenizer=types.SimpleNamespace(from_pretrained=lambda path, **_: StandInFastTokenizer(path)))
CHAIN = [("gemma.py", "Gemma4Model"), ("gemma.py", "Gemma3Model"), ("base.py", "TextModel"),
         ("base.py", "ModelBase")]


def plain(value):
    """Token strings as gguf-py's reader gives them back (set_vocab hands the writer bytes)."""
    if isinstance(value, (list, tuple)):
        return [v.decode("utf-8") if isinstance(v, bytes) else v for v in value]
    return value.decode("utf-8") if isinstance(value, bytes) else value


def hf_tensors(src):
    """[(name, values)] as transformers' Gemma 4 checkpoint holds them. An MLX MoE one with mlx-lm's
    gemma4_text Model.sanitize undone: experts.switch_glu.gate_proj / up_proj ([E, F, hidden] each, its
    mx.split of experts.gate_up_proj in 2 along axis -2) concatenated back along that axis, and
    experts.switch_glu.down_proj.weight named experts.down_proj again."""
    out = []
    for name in src.names():
        if ".experts.switch_glu." not in name:
            out.append((name, src.values(name)))
            continue
        head, proj = name.split(".experts.switch_glu.")
        if proj == "gate_proj.weight":
            up = src.values(head + ".experts.switch_glu.up_proj.weight")
            out.append((head + ".experts.gate_up_proj", np.concatenate([src.values(name), up], axis=-2)))
        elif proj == "down_proj.weight":
            out.append((head + ".experts.down_proj", src.values(name)))
        elif proj != "up_proj.weight":
            raise SystemExit(f"{name}: not a switch_glu projection mlx-lm's gemma4_text saves")
    return out


def check(llama_src, model_dir, gguf_path, expect_types):
    problems = []
    src = Source(model_dir)
    hparams = dict(src.config)
    hparams.update(src.config.get("text_config") or {})  # TextModel.__init__ moves text_config up
    conv = Converter(llama_src, CHAIN, model_dir, hparams, extra_globals={"torch": Torch})
    wanted, origin = {}, {}
    for g, data in conv.obj.generate_extra_tensors():
        wanted[g], origin[g] = np.asarray(data, dtype=np.float32), "(generated from config.json)"
    for name, values in hf_tensors(src):
        for g, data in conv.tensors(name, values, block_id(name)):
            wanted[g], origin[g] = np.asarray(data, dtype=np.float32), name
    conv.obj.set_gguf_parameters()
    conv.obj.set_vocab()
    arch = conv.obj.gguf_writer.arch
    want_kvs = {key: (value.type, plain(value.value))
                for key, value in conv.obj.gguf_writer.kv_data[0].items() if not key.startswith("general.")}
    found, reader, same, types_seen = compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types,
                                                   kv_prefixes=("tokenizer.",), in_order=True)
    problems += found
    got_order = [k for k in reader.fields if k.startswith("tokenizer.")]
    want_order = [k for k in want_kvs if k.startswith("tokenizer.")]
    if got_order != want_order:
        problems.append(f"tokenizer KV order {got_order}, the converter writes {want_order}")
    n_tok = sum(1 for k in want_kvs if k.startswith("tokenizer."))
    print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}): {same}/{len(reader.tensors)} tensors, "
          f"{len(want_kvs) - n_tok} {arch} and {n_tok} tokenizer KVs as llama.cpp's converter writes them; "
          f"types {types_seen}")
    return [f"{gguf_path}: {p}" for p in problems]


run_triples(check, sys.argv, __doc__)
