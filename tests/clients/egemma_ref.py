"""rebox's GGUF of an EmbeddingGemma checkpoint against llama.cpp's own converter class, read with gguf-py.

The class chain EmbeddingGemma -> Gemma3Model -> TextModel -> ModelBase (conversion/gemma.py, base.py) is run
as written by converter_run.py with --sentence-transformers-dense-modules on (the option that makes the
converter write the Dense projections; without it the file lacks them, llama.cpp#16367 / #18677):
 - hparams are config.json as transformers' Gemma3TextConfig hands them to the converter: with
   use_bidirectional_attention its __post_init__ rewrites sliding_window to sliding_window // 2 + 1, which
   EmbeddingGemma.set_gguf_parameters then overrides from config.json as written;
 - the gemma-embedding.* KVs and general.architecture: exactly the keys and values set_gguf_parameters writes
   (the Dense in/out features and the pooling type included);
 - every tensor: the names filter_tensors + modify_tensors give the main checkpoint's tensors and the
   (name, tensor) pairs generate_extra_tensors yields from 2_Dense / 3_Dense (its safetensors.torch.load_file
   answered from the same files, read here), values bit-identical (float32), norms F32;
 - tokenizer: what gguf-py's SpecialVocab writes for the folder (bos / eos / unk / pad ids, add_bos /
   add_eos), tokenizer.ggml.model "llama" with add_space_prefix false as Gemma3Model.set_vocab writes it.
mlx-embeddings' layout (dense.0 / dense.1 in the model's file, no Dense folders): the converter cannot read MLX,
so it runs on the sentence-transformers checkpoint those stand for: the same folder with 2_Dense / 3_Dense
written from dense.0 / dense.1's values (dequantized by the MLX definition, F32 linear.weight, in/out features
from their [out, in] shape, no bias, identity activation); its dense_2 / dense_3 and their KVs must then equal
rebox's file.
Usage: egemma_ref.py LLAMA_SRC MODEL_DIR FILE.gguf
"""
import argparse
import json
import os
import pathlib
import sys
import tempfile
import types

import gguf
import numpy as np

from converter_run import Converter
from gguf_fast import FastGguf
from egemma_fixture import write_safetensors
from source_values import Source, float_values, read_safetensors


class _Tensor(np.ndarray):
    def clone(self):  # torch.Tensor.clone, the one method generate_extra_tensors calls
        return np.array(self, dtype=np.float32)


def _load_file(path):  # safetensors.torch.load_file, answered with numpy
    tensors, _ = read_safetensors(str(path))
    return {name: float_values(t).reshape(t.shape).view(_Tensor) for name, t in tensors.items()}


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
    value = reader.kv.get(key)
    return None if value is None else value[1]


def float_tensor(kind, ne, raw):
    """A GGUF tensor's values (F32, F16, BF16, or a block type dequantized by gguf-py), ne order reversed."""
    count = int(np.prod(ne))
    if kind == 0:
        data = np.frombuffer(raw[: 4 * count].tobytes(), dtype="<f4")
    elif kind == 1:
        data = np.frombuffer(raw[: 2 * count].tobytes(), dtype="<f2").astype(np.float32)
    elif kind == 30:
        data = (np.frombuffer(raw[: 2 * count].tobytes(), dtype="<u2").astype(np.uint32) << 16).view(np.float32)
    else:
        qtype = gguf.GGMLQuantizationType(kind)
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        blocks = np.frombuffer(raw[: count // block * size].tobytes(), dtype=np.uint8)
        data = gguf.dequantize(blocks, qtype).astype(np.float32).reshape(-1)
    return data.reshape(list(reversed(ne)))


def same(got, want):
    if isinstance(want, float) or isinstance(got, float):
        return got is not None and want is not None and np.float32(got) == np.float32(want)
    return got == want


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("llama_src")
    ap.add_argument("model_dir")
    ap.add_argument("file")
    args = ap.parse_args()
    sys.modules["safetensors"] = types.ModuleType("safetensors")
    sys.modules["safetensors.torch"] = types.SimpleNamespace(load_file=_load_file)
    cfg = json.load(open(os.path.join(args.model_dir, "config.json")))
    hparams = dict(cfg)
    if hparams.get("use_bidirectional_attention"):
        hparams["sliding_window"] = hparams["sliding_window"] // 2 + 1
    chain = [("gemma.py", "EmbeddingGemma"), ("gemma.py", "Gemma3Model"), ("base.py", "TextModel"),
             ("base.py", "ModelBase")]
    src = Source(args.model_dir)
    conv_dir, holder = args.model_dir, None
    if "dense.0.weight" in src.names():  # mlx-embeddings' layout: the equivalent Dense folders
        holder = tempfile.TemporaryDirectory()
        conv_dir = holder.name
        for entry in os.listdir(args.model_dir):
            os.symlink(os.path.abspath(os.path.join(args.model_dir, entry)), os.path.join(conv_dir, entry))
        for k, folder in enumerate(("2_Dense", "3_Dense")):
            w = src.values(f"dense.{k}.weight").astype(np.float32)
            os.makedirs(os.path.join(conv_dir, folder))
            json.dump({"in_features": w.shape[1], "out_features": w.shape[0], "bias": False,
                       "activation_function": "torch.nn.modules.linear.Identity"},
                      open(os.path.join(conv_dir, folder, "config.json"), "w"))
            write_safetensors(os.path.join(conv_dir, folder, "model.safetensors"), {"linear.weight": w}, "f32")
    conv = Converter(args.llama_src, chain, conv_dir, hparams,
                     attrs={"sentence_transformers_dense_modules": True, "module_paths": [],
                            "dense_features_dims": {}})
    reader = FastGguf(args.file)
    problems = []

    want_kvs = {k: v for k, v in conv.kvs().items() if k != "general.file_type"}
    arch = want_kvs["general.architecture"]
    got_keys = sorted(k for k in reader.kv if k.startswith(arch + "."))
    want_keys = sorted(k for k in want_kvs if k.startswith(arch + "."))
    if got_keys != want_keys:
        problems.append(f"{arch}.* keys differ: only in the file {sorted(set(got_keys) - set(want_keys))}, "
                        f"only the converter's {sorted(set(want_keys) - set(got_keys))}")
    for key, want in want_kvs.items():
        got = field(reader, key)
        if not same(got, want):
            problems.append(f"{key}: {got!r}, the converter writes {want!r}")

    expected = {}
    # EmbeddingGemma ships tokenizer.model, so Gemma3Model.modify_tensors cuts embed_tokens to the length
    # of _create_vocab_sentencepiece's token list, which is always vocab_size long (it pads or ignores to
    # it). SentencePiece is not installed here: that branch runs with a stand-in token list of that length.
    with tempfile.TemporaryDirectory() as spm_dir:
        open(os.path.join(spm_dir, "tokenizer.model"), "wb").close()
        for name in src.names():
            if name.startswith("dense."):
                continue  # mlx-embeddings' projections: generate_extra_tensors gives them from the folders
            if name.endswith("embed_tokens.weight"):
                conv.obj.dir_model, conv.obj._create_vocab_sentencepiece = \
                    pathlib.Path(spm_dir), lambda: ([b""] * cfg["vocab_size"], None, None)
            for gguf_name, data in conv.tensors(name, src.values(name).astype(np.float32)):
                expected[gguf_name] = np.asarray(data, dtype=np.float32)
            conv.obj.dir_model = pathlib.Path(conv_dir)
    extras = list(conv.obj.generate_extra_tensors())
    for gguf_name, data in extras:
        expected[gguf_name] = np.asarray(data, dtype=np.float32)
    got = reader.tensors
    if sorted(got) != sorted(expected):
        problems.append(f"tensors {sorted(set(got) ^ set(expected))} differ between the file and the converter")
    for name, want in expected.items():
        if name not in got:
            continue
        kind, ne, raw = got[name]
        if kind != 0 and want.ndim == 1:
            problems.append(f"{name}: ggml type {kind}, expected F32 (as the converter writes norms)")
            continue
        data = float_tensor(kind, ne, raw)
        if data.shape != want.shape:
            problems.append(f"{name}: ggml type {kind} ne {ne}, the converter's shape {list(want.shape)}")
            continue
        if kind in (1, 30):  # a float file keeps the source's 16-bit type: compare in it
            want = float_tensor(kind, ne, np.frombuffer(
                (want.astype("<f2") if kind == 1 else
                 ((want.view(np.uint32).astype(np.uint64) + 0x7FFF + ((want.view(np.uint32) >> 16) & 1)) >> 16)
                 .astype("<u2")).tobytes(), dtype=np.uint8))
        if data.view(np.uint32).tobytes() != np.asarray(want, np.float32).view(np.uint32).tobytes():
            problems.append(f"{name}: values differ from the converter's")

    special = gguf.SpecialVocab(args.model_dir, load_merges=False, n_vocab=cfg["vocab_size"])
    rec = Recorder()
    special.add_to_gguf(rec, quiet=True)
    for typ, key in {"bos": "bos_token_id", "eos": "eos_token_id", "unk": "unknown_token_id",
                     "pad": "padding_token_id"}.items():
        if field(reader, "tokenizer.ggml." + key) != rec.kvs.get(f"add_{typ}_token_id"):
            problems.append(f"tokenizer.ggml.{key}: {field(reader, 'tokenizer.ggml.' + key)}, "
                            f"SpecialVocab {rec.kvs.get(f'add_{typ}_token_id')}")
    for typ in ("bos", "eos"):
        if field(reader, f"tokenizer.ggml.add_{typ}_token") != rec.kvs.get(f"add_add_{typ}_token"):
            problems.append(f"tokenizer.ggml.add_{typ}_token differs from SpecialVocab's")
    if field(reader, "tokenizer.ggml.model") != "llama" or field(reader, "tokenizer.ggml.add_space_prefix") is not False:
        problems.append("tokenizer.ggml.model / add_space_prefix are not Gemma3Model.set_vocab's 'llama' / false")

    label = os.path.basename(args.file)
    if problems:
        print(f"FAIL: {label}:")
        for p in problems[:30]:
            print("  " + p)
        sys.exit(1)
    print(f"  {label}: {len(expected)} tensors ({len(extras)} Dense) bit-identical to EmbeddingGemma's, "
          f"{len(want_keys)} {arch}.* KVs and the special-token KVs equal the converter's")


if __name__ == "__main__":
    main()
