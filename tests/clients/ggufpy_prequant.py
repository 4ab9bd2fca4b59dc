"""A rebox-converted GPTQ / AWQ / compressed-tensors checkpoint read back by gguf-py, bit for bit.

gguf-py (GGUFReader + gguf.quants.dequantize) reads every tensor of FILE.gguf; the expected values come
from the SOURCE files alone (source_values.py: its own unpacking of qweight/qzeros/g_idx, AWQ's nibble
order, compressed-tensors' offset fields; value (q - z) * s in float64, exact, then float32), through
llama.cpp's own LlamaModel.permute (from the bundle's conversion code) for llama q/k. Every GGUF tensor
must come from exactly one source tensor and every source tensor must appear.

Unless --outtype-f32, each quantized tensor's ggml type must be the one docs/formats.md §5.0's rule
gives, derived here from the source's integers and scales: every 32-column block inside one group and
every scale that matters an fp16 value (else BLOCKER), then the first exact type of Q4_0 (q - z in
[-8, 7]), Q4_1 (codes <= 15, z*s an fp16 value for every group, no s < 0 with q == z), Q5_0 ([-16, 15]),
Q5_1 (codes <= 31, same z*s rule), Q8_0 ([-128, 127]).

Usage: ggufpy_prequant.py LLAMA_SRC MODEL_DIR FILE.gguf [--plan PLAN.json] [--outtype-f32]
         [--quant-types Q4_0,Q4_1,...] [--fallback-f32 HF_NAME]
  --plan         `rebox plan --json` of MODEL_DIR: its per-tensor types must be the file's and its
                 file_bytes the file's size; size_ratio = file_bytes / source_bytes.
  --quant-types  the set of ggml types of the quantized source tensors must be exactly this.
  --fallback-f32 this quantized tensor is expected as an exact F32 copy (--allow-lossless-fallback).
"""
import json
import os
import sys

import numpy as np
import gguf

from converter_run import static_method
from source_values import Source

llama_src, model_dir, gguf_path = sys.argv[1:4]
args = sys.argv[4:]


def arg(flag):
    return args[args.index(flag) + 1] if flag in args else None


outtype_f32 = "--outtype-f32" in args
plan_path, quant_types, fallback = arg("--plan"), arg("--quant-types"), arg("--fallback-f32")
problems = []

src = Source(model_dir)
cfg = src.config
llama = cfg.get("model_type") in ("llama", "mistral")
n_head = cfg["num_attention_heads"]
n_kv = cfg.get("num_key_value_heads", n_head)
permute = static_method(llama_src, "llama.py", "LlamaModel", "permute") if llama else None

LAYER = {
    "input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.bias": "attn_v.bias", "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight", "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight",
}
TOP = {"embed_tokens.weight": "token_embd.weight", "norm.weight": "output_norm.weight",
       "lm_head.weight": "output.weight"}


def gguf_name(hf):
    short = hf[len("model."):] if hf.startswith("model.") else hf
    if short in TOP:
        return TOP[short]
    parts = short.split(".", 2)
    if len(parts) == 3 and parts[0] == "layers" and parts[2] in LAYER:
        return f"blk.{int(parts[1])}.{LAYER[parts[2]]}"
    return None


def f16_exact(x):
    with np.errstate(over="ignore"):
        return np.float16(x).astype(np.float64) == x if np.isscalar(x) else x.astype(np.float16).astype(np.float64) == x


def rule_type(hf):
    """docs/formats.md §5.0, from the source integers: the smallest exact ggml type, or BLOCKER."""
    q, z, s = src.pq_parts(hf)
    groups = src.pq_column_groups(hf)
    n_in = q.shape[1]
    if n_in % 32 or (groups.reshape(-1, 32) != groups.reshape(-1, 32)[:, :1]).any():
        return "BLOCKER"
    d = q - z
    if (~f16_exact(s) & (d != 0)).any():
        return "BLOCKER"
    zs = z.astype(np.float64) * s
    zs_ok = bool(f16_exact(zs).all()) and not ((s < 0) & (d == 0)).any()
    lo, hi, top = int(d.min()), int(d.max()), int(q.max())
    for name, ok in (("Q4_0", -8 <= lo and hi <= 7), ("Q4_1", top <= 15 and zs_ok),
                     ("Q5_0", -16 <= lo and hi <= 15), ("Q5_1", top <= 31 and zs_ok),
                     ("Q8_0", -128 <= lo and hi <= 127)):
        if ok:
            return name
    return "BLOCKER"


by_gguf = {}
for hf in src.names():
    g = gguf_name(hf)
    if g is None:
        problems.append(f"source tensor {hf}: no GGUF name known to this test")
    elif g in by_gguf:
        problems.append(f"{by_gguf[g]} and {hf} both map to {g}")
    else:
        by_gguf[g] = hf

reader = gguf.GGUFReader(gguf_path)
seen, types, quant_seen, file_types = set(), {}, {}, {}
same = 0
for t in reader.tensors:
    seen.add(t.name)
    tname = t.tensor_type.name
    types[tname] = types.get(tname, 0) + 1
    file_types[t.name] = tname
    if t.name not in by_gguf:
        if t.name == "rope_freqs.weight" and llama:
            continue  # generated from config.json; test_llama_arch checks it against llama.cpp's code
        problems.append(f"GGUF tensor {t.name}: no source tensor")
        continue
    hf = by_gguf[t.name]
    want = src.values(hf)
    if llama and hf.endswith(("q_proj.weight", "q_proj.bias")):
        want = permute(want, n_head, n_head)
    elif llama and hf.endswith(("k_proj.weight", "k_proj.bias")):
        want = permute(want, n_head, n_kv)
    got = np.asarray(t.data, dtype=np.float32) if t.tensor_type == gguf.GGMLQuantizationType.F32 \
        else gguf.quants.dequantize(t.data, t.tensor_type)
    ne = [int(x) for x in t.shape]
    if ne[::-1] != list(want.shape):
        problems.append(f"{t.name}: ne {ne}, expected the reverse of {list(want.shape)} from {hf}")
        continue
    got = got.reshape(want.shape)
    diff = got.view(np.uint32) != want.astype(np.float32).view(np.uint32)
    if diff.any():
        i = tuple(int(x) for x in np.argwhere(diff)[0])
        problems.append(f"{t.name} ({tname}): {int(diff.sum())} of {want.size} values differ from "
                        f"(q - z) * s of {hf}; first at {i}: gguf {got[i]!r}, source {want[i]!r}")
        continue
    same += 1
    if src.is_quantized(hf):
        quant_seen[tname] = quant_seen.get(tname, 0) + 1
        expected = "F32" if (outtype_f32 or hf == fallback) else rule_type(hf)
        if tname != expected:
            problems.append(f"{t.name} ({hf}): type {tname}, docs/formats.md §5.0 gives {expected}")

for g, hf in by_gguf.items():
    if g not in seen:
        problems.append(f"source tensor {hf}: missing from the GGUF (expected {g})")
if not quant_seen:
    problems.append("no quantized source tensor was checked")
if quant_types is not None and set(quant_seen) != set(quant_types.split(",")):
    problems.append(f"quantized tensors became {sorted(quant_seen)}, expected exactly {quant_types}")

if plan_path:
    plan = json.load(open(plan_path))
    for entry in plan.get("tensors", []):
        g = entry.get("gguf_name")
        if g in file_types and entry.get("type") != file_types[g]:
            problems.append(f"plan says {g} is {entry.get('type')}, the file holds {file_types[g]}")
    if {e.get("gguf_name") for e in plan.get("tensors", [])} != set(file_types):
        problems.append("plan and file disagree on the tensor set")
    size = os.path.getsize(gguf_path)
    if plan.get("file_bytes") != size:
        problems.append(f"plan file_bytes {plan.get('file_bytes')} != file size {size}")
    ratio, source_bytes = plan.get("size_ratio"), plan.get("source_bytes")
    if not source_bytes or ratio is None or abs(ratio - size / source_bytes) > 1e-9:
        problems.append(f"plan size_ratio {ratio} is not file_bytes / source_bytes ({size} / {source_bytes})")

print(f"  {os.path.basename(gguf_path)} ({src.format}): {same}/{len(reader.tensors)} tensors bit-identical to "
      f"the source values; quantized tensors as {dict(sorted(quant_seen.items()))}; all types {types}")
if problems:
    print(f"FAIL: {gguf_path} vs {model_dir}:")
    for p in problems[:40]:
        print("  " + p)
    sys.exit(1)
