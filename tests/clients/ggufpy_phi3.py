"""A rebox-converted phi3 GGUF against llama.cpp's own phi3 conversion code, bit for bit.

gguf-py (GGUFReader + gguf.quants.dequantize) reads every tensor of FILE.gguf. The expected values are
computed from the source checkpoint in numpy (source_values.py: mcq-v1, MLX or float); llama.cpp's
converter moves phi3 tensors unchanged (the fused qkv_proj and gate_up_proj stay fused), so each GGUF
tensor must equal its source tensor in the source's shape, reversed. rope_factors_long/short must
equal what the bundle's Phi3MiniModel.generate_extra_tensors yields for config.json (and be absent when
it yields nothing), and every phi3.* KV must be exactly what Phi3MiniModel.set_gguf_parameters and
generate_extra_tensors write (same type, same value): no more (pooling_type aside, which rebox adds
from modules.json), no fewer. Every GGUF tensor comes from exactly one source tensor and every source
tensor appears. --tokenizer KIND also checks tokenizer.ggml.model / pre as llama.cpp's converter sets
them (llama2: SentencePiece "llama" with pre "default", Phi3MiniModel.set_vocab).

Usage: ggufpy_phi3.py LLAMA_SRC MODEL_DIR FILE.gguf [--expect-types T1,T2,...] [--tokenizer small|llama2]
"""
import math
import sys

import numpy as np
import gguf

from converter_run import Converter
from source_values import Source

llama_src, model_dir, gguf_path = sys.argv[1:4]


def option(name):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


expect_types = set(option("--expect-types").split(",")) if option("--expect-types") else set()
tokenizer_kind = option("--tokenizer")
problems = []

src = Source(model_dir)
cfg = src.config


class Float32Torch:
    """torch as Phi3MiniModel.generate_extra_tensors uses it: torch.tensor(list, dtype=torch.float32) is
    numpy's float32 array of the same Python numbers (each rounded once to binary32, as torch does)."""
    float32 = np.float32

    @staticmethod
    def tensor(items, dtype=None):
        assert dtype is np.float32, "the phi3 converter builds float32 tensors"
        return np.array(items, dtype=np.float32)


# The bundle's Phi3MiniModel -> TextModel -> ModelBase chain run as written (converter_run.py): every KV
# set_gguf_parameters and generate_extra_tensors write, {key: (GGUFValueType, value)} without general.*,
# and the extra tensors {gguf name: float32 array}.
conv = Converter(llama_src, [("phi.py", "Phi3MiniModel"), ("base.py", "TextModel"), ("base.py", "ModelBase")],
                 model_dir, dict(cfg), extra_globals={"torch": Float32Torch, "math": math})
conv.obj.set_gguf_parameters()
extras = {name: np.asarray(t, dtype=np.float32) for name, t in conv.obj.generate_extra_tensors()}
want_kvs = {key: (value.type, value.value) for key, value in conv.obj.gguf_writer.kv_data[0].items()
            if not key.startswith("general.")}

# HF -> GGUF names of the phi3 graph, written out here (independent of rebox's registry).
LAYER = {
    "input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
    "self_attn.qkv_proj.weight": "attn_qkv.weight", "self_attn.qkv_proj.bias": "attn_qkv.bias",
    "self_attn.o_proj.weight": "attn_output.weight",
    "mlp.gate_up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight",
}
TOP = {"embed_tokens.weight": "token_embd.weight", "norm.weight": "output_norm.weight",
       "lm_head.weight": "output.weight"}
hidden, heads = cfg["hidden_size"], cfg["num_attention_heads"]
kv_heads, ffn = cfg.get("num_key_value_heads", heads), cfg["intermediate_size"]
head_dim = hidden // heads
FUSED_ROWS = {"attn_qkv.weight": heads * head_dim + 2 * kv_heads * head_dim, "ffn_up.weight": 2 * ffn}


def gguf_name(hf):
    short = hf[len("model."):] if hf.startswith("model.") else hf
    if short in TOP:
        return TOP[short]
    parts = short.split(".", 2)
    if len(parts) == 3 and parts[0] == "layers" and parts[2] in LAYER:
        return f"blk.{int(parts[1])}.{LAYER[parts[2]]}"
    return None


by_gguf = {}
for hf in src.names():
    g = gguf_name(hf)
    if g is None:
        problems.append(f"source tensor {hf}: no phi3 GGUF name known to this test")
    elif g in by_gguf:
        problems.append(f"{by_gguf[g]} and {hf} both map to {g}")
    else:
        by_gguf[g] = hf

reader = gguf.GGUFReader(gguf_path)
seen, types = set(), {}
same = fused = generated = 0
for t in reader.tensors:
    seen.add(t.name)
    types[t.tensor_type.name] = types.get(t.tensor_type.name, 0) + 1
    if t.tensor_type == gguf.GGMLQuantizationType.F32:
        got = np.asarray(t.data, dtype=np.float32)
    else:
        got = gguf.quants.dequantize(t.data, t.tensor_type)
    if t.name in extras:
        want, hf = extras[t.name], "(generated from config.json)"
        if t.tensor_type != gguf.GGMLQuantizationType.F32:
            problems.append(f"{t.name}: type {t.tensor_type.name}, the converter writes F32")
    elif t.name in by_gguf:
        hf = by_gguf[t.name]
        want = src.values(hf)
    else:
        problems.append(f"GGUF tensor {t.name}: no source tensor and not generated by llama.cpp's converter")
        continue
    ne = [int(x) for x in t.shape]
    if ne[::-1] != list(want.shape) and not (len(want.shape) == 2 and want.shape[0] == 1 and ne == [want.shape[1]]):
        problems.append(f"{t.name}: ne {ne}, expected the reverse of {list(want.shape)} from {hf}")
        continue
    suffix = t.name.split(".", 2)[-1]
    if suffix in FUSED_ROWS and ne[1] != FUSED_ROWS[suffix]:
        problems.append(f"{t.name}: {ne[1]} rows, phi3 needs {FUSED_ROWS[suffix]}")
    got = got.reshape(want.shape)
    diff = got.view(np.uint32) != want.astype(np.float32).view(np.uint32)
    if diff.any():
        i = tuple(int(x) for x in np.argwhere(diff)[0])
        problems.append(f"{t.name} ({t.tensor_type.name}): {int(diff.sum())} of {want.size} values differ from "
                        f"llama.cpp's conversion of {hf}; first at {i}: gguf {got[i]!r}, expected {want[i]!r}")
        continue
    same += 1
    fused += suffix in FUSED_ROWS
    generated += t.name in extras

for g, hf in by_gguf.items():
    if g not in seen:
        problems.append(f"source tensor {hf}: missing from the GGUF (expected {g})")
for g in extras:
    if g not in seen:
        problems.append(f"{g}: llama.cpp's converter generates it from config.json; missing from the GGUF")
if fused == 0:
    problems.append("no fused attn_qkv / ffn_up tensor was checked")
if expect_types and set(types) != expect_types:
    problems.append(f"tensor types {sorted(types)}, expected {sorted(expect_types)}")


def field_value(field):
    vtype = field.types[0]
    if vtype == gguf.GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]).decode("utf-8")
    return field.parts[field.data[0]][0]


def same_value(vtype, want, got):
    if vtype == gguf.GGUFValueType.FLOAT32:
        return np.float32(want).view(np.uint32) == np.float32(got).view(np.uint32)
    return want == got


for key, (vtype, want) in want_kvs.items():
    field = reader.fields.get(key)
    if field is None:
        problems.append(f"KV {key}: missing; llama.cpp's converter writes {vtype.name} {want!r}")
        continue
    if field.types[0] != vtype:
        problems.append(f"KV {key}: type {field.types[0].name}, the converter writes {vtype.name}")
    elif not same_value(vtype, want, field_value(field)):
        problems.append(f"KV {key}: {field_value(field)!r}, the converter writes {want!r}")
for key in reader.fields:
    if key.startswith("phi3.") and key not in want_kvs and key != "phi3.pooling_type":
        problems.append(f"KV {key}: written by rebox, not by llama.cpp's converter for this config")

if tokenizer_kind == "llama2":
    for key, want in (("tokenizer.ggml.model", "llama"), ("tokenizer.ggml.pre", "default")):
        field = reader.fields.get(key)
        got = field_value(field) if field is not None else None
        if got != want:
            problems.append(f"KV {key}: {got!r}, Phi3MiniModel.set_vocab writes {want!r}")
elif tokenizer_kind == "small":
    field = reader.fields.get("tokenizer.ggml.model")
    if field is None or field_value(field) != "gpt2":
        problems.append("tokenizer.ggml.model: a GPT-2 style BPE (Phi-4) must be 'gpt2'")

print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}): {same}/{len(reader.tensors)} tensors equal to llama.cpp's "
      f"conversion of the source ({fused} fused, {generated} generated: {sorted(extras) or 'none'}); "
      f"{len(want_kvs)} phi3 KVs as the converter writes them; types {types}")
if problems:
    print(f"FAIL: {gguf_path} vs {model_dir}:")
    for p in problems[:40]:
        print("  " + p)
    sys.exit(1)
