"""Rebox-converted Gemma 4 GGUFs against llama.cpp's own converter class chain from the bundle, bit for bit.

For each MODEL_DIR FILE.gguf TYPES triple: the source's values (source_values.py, the dequantized checkpoint;
an MLX MoE one with mlx-lm's sanitize undone, hf_tensors; an NVFP4 one's FP4 linears by the formats' own
definitions, nvfp4_tensors, each GGUF .scale then multiplied into its weight as llama.cpp's graph does) go through Gemma4Model -> Gemma3Model -> TextModel -> ModelBase (converter_run.py, run as written):
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
from source_values import Source, float_values
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


# E2M1 by its bits (code 8 is -0).
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def e4m3(byte):
    """OCP E4M3 (4 exponent bits, bias 7, 3 mantissa bits) as float64."""
    b = np.asarray(byte, dtype=np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    e, m = (b >> 3) & 0xF, b & 7
    return sign * np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7.0))


def nvfp4_tensors(src):
    """[(name, values)] of an NVFP4 checkpoint, each FP4 linear as its float32 weight, or None for any
    other source. ModelOpt (nvfp4_tensor.py: P.weight U8 [out, in/2], element 2i in the low nibble;
    P.weight_scale E4M3 [out, in/16]; P.weight_scale_2 F32): E2M1 * scale * scale_2. compressed-tensors
    nvfp4-pack-quantized (P.weight_packed, P.weight_scale, P.weight_global_scale g): E2M1 * scale *
    float32(1 / g), the per-tensor factor a GGUF .scale can hold (F32; the conversion takes
    --allow-inexact-global-scale for it, as docs/formats.md §2.2 says). Products in float64 (exact),
    then float32. Every other tensor as it is stored."""
    mo = {n[: -len(".weight_scale_2")] for n in src.tensors if n.endswith(".weight_scale_2")}
    ct = {n[: -len(".weight_global_scale")] for n in src.tensors if n.endswith(".weight_global_scale")}
    if not mo and not ct:
        return None
    parts = set()
    for m in mo:
        parts |= {m + p for p in (".weight", ".weight_scale", ".weight_scale_2", ".input_scale")}
    for m in ct:
        parts |= {m + p for p in (".weight_packed", ".weight_scale", ".weight_global_scale",
                                  ".input_global_scale")}
    out = [(n, float_values(t).reshape(t.shape)) for n, t in sorted(src.tensors.items()) if n not in parts]
    for m in sorted(mo | ct):
        packed_t = src.tensors[m + (".weight" if m in mo else ".weight_packed")]
        packed = np.asarray(packed_t.bytes, dtype=np.uint8)
        rows, half = packed_t.shape
        codes = np.stack([packed & 0xF, packed >> 4], axis=-1).reshape(rows, 2 * half)
        scales = e4m3(np.asarray(src.tensors[m + ".weight_scale"].bytes)).reshape(rows, -1)
        if m in mo:
            factor = float(float_values(src.tensors[m + ".weight_scale_2"]).ravel()[0])
        else:
            g = float_values(src.tensors[m + ".weight_global_scale"]).ravel()[0]
            factor = float(np.float32(1) / np.float32(g))
        out.append((m + ".weight", (E2M1[codes] * np.repeat(scales, 16, axis=1) * factor).astype(np.float32)))
    return out


def hf_tensors(src):
    """[(name, values)] as transformers' Gemma 4 checkpoint holds them. An MLX MoE one with mlx-lm's
    gemma4_text Model.sanitize undone: experts.switch_glu.gate_proj / up_proj ([E, F, hidden] each, its
    mx.split of experts.gate_up_proj in 2 along axis -2) concatenated back along that axis, and
    experts.switch_glu.down_proj.weight named experts.down_proj again."""
    nvfp4 = nvfp4_tensors(src)
    if nvfp4 is not None:
        return nvfp4
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
    tensors = hf_tensors(src)
    nvfp4 = nvfp4_tensors(src)
    for name, values in tensors:
        for g, data in conv.tensors(name, values, block_id(name)):
            wanted[g], origin[g] = np.asarray(data, dtype=np.float32), name
    conv.obj.set_gguf_parameters()
    conv.obj.set_vocab()
    arch = conv.obj.gguf_writer.arch
    want_kvs = {key: (value.type, plain(value.value))
                for key, value in conv.obj.gguf_writer.kv_data[0].items() if not key.startswith("general.")}
    found, reader, same, types_seen = compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types,
                                                   kv_prefixes=("tokenizer.",), in_order=True,
                                                   fold_scales=nvfp4 is not None)
    problems += found
    got_order = [k for k in reader.fields if k.startswith("tokenizer.")]
    want_order = [k for k in want_kvs if k.startswith("tokenizer.")]
    if got_order != want_order:
        problems.append(f"tokenizer KV order {got_order}, the converter writes {want_order}")
    n_tok = sum(1 for k in want_kvs if k.startswith("tokenizer."))
    label = src.format if nvfp4 is None else "NVFP4"
    print(f"  {gguf_path.rsplit('/', 1)[-1]} ({label}): {same}/{len(reader.tensors)} tensors, "
          f"{len(want_kvs) - n_tok} {arch} and {n_tok} tokenizer KVs as llama.cpp's converter writes them; "
          f"types {types_seen}")
    return [f"{gguf_path}: {p}" for p in problems]


if __name__ == "__main__":
    run_triples(check, sys.argv, __doc__)
