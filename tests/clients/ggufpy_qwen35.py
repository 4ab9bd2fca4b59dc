"""Rebox-converted GGUFs of Qwen3.5 (qwen35, and qwen35moe) against llama.cpp's own converter class chain
from the bundle, bit for bit, several files in one process.

For each MODEL_DIR FILE.gguf TYPES triple: the source's values (source_values.py, the dequantized
checkpoint) go through Qwen3_5TextModel -> _Qwen35MRopeMixin -> _LinearAttentionVReorderBase ->
Qwen3NextModel -> _QwenMtpMixin -> Qwen2MoeModel -> TextModel -> ModelBase (run as written by
converter_run.py; torch stood in for by numpy: permute is transpose, cat is concatenate, exp is
the correctly rounded float32 exp, from Python's decimal at 60 digits): filter_tensors (the MTP renames), modify_tensors (the V-head reorder of rows
and out_proj's column blocks, -exp(A_log), the + 1 on every norm but linear_attn.norm, conv1d
squeezed; Qwen2MoeModel's split of the fused gate_up_proj and its stacking of per-expert tensors for
a MoE, whose chain starts at Qwen3_5MoeTextModel) and gguf-py's tensor name map give every GGUF name and array llama.cpp's converter
writes. gguf-py's GGUFReader reads FILE.gguf: every tensor must be one of those (name, ne, values bit
for bit) and every one of those must be in the file; every qwen35.* KV set_gguf_parameters writes
must be in the file with the same type and value, and the file may hold no other qwen35.* KV.

torch's own CPU exp (SLEEF, 1-ulp bound) is not correctly rounded, nor is numpy's: the file is held
to the correctly rounded value (what docs/architectures.md "qwen35" says rebox writes), and the
script prints how many ssm_a values numpy's float32 exp would have rounded otherwise.

Usage: ggufpy_qwen35.py LLAMA_SRC MODEL_DIR FILE.gguf TYPES [MODEL_DIR FILE.gguf TYPES ...]
"""
import sys
from decimal import Decimal, getcontext

import numpy as np

from converter_compare import compare_gguf, field_value, run_triples
from converter_run import Converter, block_id
from source_values import Source

getcontext().prec = 60


def chain(first):
    return [("qwen.py", c) for c in (first, "_Qwen35MRopeMixin", "_LinearAttentionVReorderBase",
                                     "Qwen3NextModel", "_QwenMtpMixin", "Qwen2MoeModel")] + \
           [("base.py", "TextModel"), ("base.py", "ModelBase")]


class T(np.ndarray):
    """A torch tensor as far as these modify_tensors use one."""

    def permute(self, *dims):
        return np.transpose(self, dims).view(T)

    def contiguous(self):
        return np.ascontiguousarray(self).view(T)

    def unsqueeze(self, dim):
        return np.expand_dims(self, dim).view(T)


def exp_f32(v):
    """e^v for a float32 v, rounded once to the nearest float32 (ties to even)."""
    exact = Decimal(float(v)).exp()
    f = np.float32(float(exact))
    best = f
    for g in (np.nextafter(f, np.float32(0)), np.nextafter(f, np.float32(np.inf))):
        d_best, d_g = abs(Decimal(float(best)) - exact), abs(Decimal(float(g)) - exact)
        if d_g < d_best or (d_g == d_best and int(g.view(np.uint32)) % 2 == 0):
            best = g
    return best


NUMPY_EXP_OFF = [0]


class Torch:
    @staticmethod
    def exp(x):
        out = np.array([exp_f32(v) for v in np.asarray(x, dtype=np.float32).ravel()],
                       dtype=np.float32).reshape(np.shape(x))
        NUMPY_EXP_OFF[0] += int((np.exp(np.asarray(x, dtype=np.float32)) != out).sum())
        return out.view(T)

    @staticmethod
    def cat(parts, dim=0):
        return np.concatenate(parts, axis=dim).view(T)

    @staticmethod
    def stack(parts, dim=0):
        return np.stack(parts, axis=dim).view(T)


def check(llama_src, model_dir, gguf_path, expect_types):
    problems = []
    src = Source(model_dir)
    layers = src.config["num_hidden_layers"]
    attrs = {"_experts": None, "no_mtp": False, "mtp_only": False, "_original_block_count": layers,
             "opt_num_mtp_layers": 0, "block_count": layers + src.config.get("mtp_num_hidden_layers", 0)}
    moe = src.config["model_type"].startswith("qwen3_5_moe")
    conv = Converter(llama_src, chain("Qwen3_5MoeTextModel" if moe else "Qwen3_5TextModel"), model_dir,
                     dict(src.config), attrs=attrs,
                     extra_globals={"torch": Torch})
    conv.obj.set_gguf_parameters()
    arch = conv.obj.gguf_writer.arch
    want_kvs = {key: (value.type, value.value) for key, value in conv.obj.gguf_writer.kv_data[0].items()
                if not key.startswith("general.")}
    wanted, origin = {}, {}
    NUMPY_EXP_OFF[0] = 0
    for name in src.names():
        kept = conv.obj.filter_tensors((name, None))
        if kept is None:
            problems.append(f"source tensor {name}: the converter skips it")
            continue
        renamed = kept[0]
        for g, data in conv.obj.modify_tensors(src.values(name).view(T), renamed, block_id(renamed)):
            if g in wanted:
                problems.append(f"{origin[g]} and {name} both become {g}")
            wanted[g], origin[g] = np.asarray(data, dtype=np.float32), name

    found, reader, same, types = compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types,
                                              in_order=True)
    problems += found
    pre = field_value(reader.fields["tokenizer.ggml.pre"])
    if pre != "qwen35":
        problems.append(f"tokenizer.ggml.pre {pre!r}: Qwen3.5's split regex is llama.cpp's 'qwen35'")
    print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}): {same}/{len(reader.tensors)} tensors and "
          f"{len(want_kvs)} {arch} KVs as llama.cpp's converter writes them ({NUMPY_EXP_OFF[0]} ssm_a values "
          f"numpy's float32 exp rounds otherwise); types {types}")
    return [f"{gguf_path}: {p}" for p in problems]


if __name__ == "__main__":  # ggufpy_nemotronh.py imports T, Torch
    run_triples(check, sys.argv, __doc__)
