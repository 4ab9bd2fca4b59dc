"""Deliberately broken copies of a rebox GGUF for test_forward_semantics.sh's negative cases, written with
gguf-py (llama.cpp's own reader, opened read-write on the copy), never with rebox:
  --set KEY=VALUE    a float KV set to VALUE in place, e.g. qwen3.rope.freq_base=10000 (a KV mistake both
                     rebox conversions of a checkpoint would share)
  --unpermute-qk     every F32 blk.N.attn_q/attn_k.weight put back into Hugging Face row order: the
                     inverse of llama.cpp's LlamaModel.permute (rows of each head as
                     [head, D/2, 2] -> [head, 2, D/2]), i.e. a llama file written without the permutation
  --shift SUFFIX=D   D added to every value of each F32 tensor whose name ends with SUFFIX, e.g.
                     attn_q_norm.weight=-1: a (1 + w) norm written without its + 1
  --fill SUFFIX=V    every value of each F32 tensor whose name ends with SUFFIX set to V, e.g.
                     rope_freqs.weight=1: Gemma 4's proportional rope turned into a plain one
Usage: forward_break.py IN.gguf OUT.gguf [--set KEY=VALUE]... [--unpermute-qk] [--shift SUFFIX=D]... [--fill SUFFIX=V]...
"""
import argparse
import shutil

import numpy as np
import gguf

ap = argparse.ArgumentParser()
ap.add_argument("input")
ap.add_argument("output")
ap.add_argument("--set", action="append", default=[])
ap.add_argument("--unpermute-qk", action="store_true")
ap.add_argument("--shift", action="append", default=[])
ap.add_argument("--fill", action="append", default=[])
args = ap.parse_args()

shutil.copyfile(args.input, args.output)
reader = gguf.GGUFReader(args.output, "r+")
arch = reader.fields["general.architecture"].contents()


def set_scalar(key, value):
    field = reader.fields[key]
    field.parts[field.data[0]][0] = value
    print(f"  {args.output}: {key} {field.contents()}")


for assignment in args.set:
    key, _, value = assignment.partition("=")
    set_scalar(key, float(value))
if args.unpermute_qk:
    heads = {"attn_q": int(reader.fields[f"{arch}.attention.head_count"].contents()),
             "attn_k": int(reader.fields[f"{arch}.attention.head_count_kv"].contents())}
    changed = 0
    for t in reader.tensors:
        kind = t.name.split(".")[-2] if t.name.startswith("blk.") else None
        if kind not in heads:
            continue
        if t.tensor_type != gguf.GGMLQuantizationType.F32:
            raise SystemExit(f"forward_break.py: {t.name} is {t.tensor_type.name}; --unpermute-qk needs an F32 file")
        rows, cols = t.data.shape
        n_head = heads[kind]
        hf_order = t.data.reshape(n_head, rows // n_head // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)
        t.data[...] = np.array(hf_order)
        changed += 1
    print(f"  {args.output}: {changed} attn_q/attn_k tensors put back into HF row order")
    if changed == 0:
        raise SystemExit("forward_break.py: no attn_q/attn_k tensor found")
for shift in args.shift:
    suffix, _, delta = shift.partition("=")
    hits = [t for t in reader.tensors if t.name.endswith(suffix)]
    for t in hits:
        if t.tensor_type != gguf.GGMLQuantizationType.F32:
            raise SystemExit(f"forward_break.py: {t.name} is {t.tensor_type.name}; --shift needs F32")
        t.data[...] = np.array(t.data) + np.float32(delta)
    print(f"  {args.output}: {float(delta):+g} added to {len(hits)} *{suffix} tensors")
    if not hits:
        raise SystemExit(f"forward_break.py: no tensor ends with {suffix}")
for fill in args.fill:
    suffix, _, value = fill.partition("=")
    hits = [t for t in reader.tensors if t.name.endswith(suffix)]
    for t in hits:
        if t.tensor_type != gguf.GGMLQuantizationType.F32:
            raise SystemExit(f"forward_break.py: {t.name} is {t.tensor_type.name}; --fill needs F32")
        t.data[...] = np.float32(value)
    print(f"  {args.output}: {len(hits)} *{suffix} tensors set to {float(value):g}")
    if not hits:
        raise SystemExit(f"forward_break.py: no tensor ends with {suffix}")
