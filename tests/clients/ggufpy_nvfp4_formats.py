"""gguf-py reads a GGUF converted from a ModelOpt NVFP4 or compressed-tensors nvfp4- / mxfp4-pack-quantized
checkpoint; every value must equal, bit for bit, the value computed here from the checkpoint's files by
the formats' own definitions, and each per-tensor factor must sit in <tensor>.scale as the F32 its
definition gives.

Source side (numpy only, written from the formats' documentation): the packed weight (ModelOpt P.weight,
compressed-tensors P.weight_packed) is U8 [out, in/2] with element 2i in the low nibble of byte i; the
block scales P.weight_scale are E4M3 bytes (4 exponent bits, bias 7, 3 mantissa bits) per 16 values, or
E8M0 (2^(e-127)) per 32 for mxfp4. Value = E2M1(code) * scale, E2M1 decoded from its bits. ggml's table
has no negative zero: code 8 is expected as +0. The per-tensor factor is ModelOpt's weight_scale_2 as
stored, or for compressed-tensors float32(1) / float32(weight_global_scale) (IEEE division: the nearest
float to 1/g); the real weight is E2M1 * scale * factor (compressed-tensors: E2M1 * scale / g), computed
here in float64 (exact: at most 2 + 4 + 24 significant bits) against the GGUF's block value * .scale.
GGUF side: llama.cpp's GGUFReader and gguf.quants.dequantize (its NVFP4 / MXFP4 classes).
Which GGUF tensor holds which source tensor comes from `rebox plan --json`; llama's attn_q / attn_k rows
are permuted with LlamaModel.permute taken from the bundle; stacked experts are the per-expert modules
in order.

Usage: ggufpy_nvfp4_formats.py LLAMA_SRC MODEL_DIR FILE.gguf PLAN.json --scales N [--fold OUT.gguf]
  --scales N: the number of .scale tensors the file must hold.
  --fold OUT.gguf: also write a twin of FILE.gguf in which every FP4 weight is F32 E2M1*scale*factor
  (each .scale multiplied in here, in float64, rounded once) and no .scale tensor is left: a file whose
  outputs llama.cpp must reproduce if it applies the .scale tensors. With --fold-wrong-factor the
  twin multiplies each factor in twice over (2x; a file llama.cpp must NOT agree with).
"""
import json
import os
import struct
import sys

import numpy as np
import gguf

from converter_run import static_method
from ggufpy_fold_scales import write_f32_twin

llama_src, model_dir, gguf_path, plan_path = sys.argv[1:5]
args = sys.argv[5:]
want_scales = int(args[args.index("--scales") + 1])
fold_path = args[args.index("--fold") + 1] if "--fold" in args else None
problems = []


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        out[name] = (e["dtype"], e["shape"], raw[8 + n + a:8 + n + b])
    return out


tensors = {}
for f in sorted(os.listdir(model_dir)):
    if f.endswith(".safetensors"):
        tensors.update(read_safetensors(os.path.join(model_dir, f)))
cfg = json.load(open(os.path.join(model_dir, "config.json")))
cfg = {**cfg, **cfg.get("text_config", {})}  # Mistral3ForConditionalGeneration: the text model's numbers
if os.path.exists(os.path.join(model_dir, "hf_quant_config.json")):
    layout = "modelopt"
    assert json.load(open(os.path.join(model_dir, "hf_quant_config.json")))["quantization"]["quant_algo"] == "NVFP4"
else:
    fmt = cfg["quantization_config"]["format"]
    layout = {"nvfp4-pack-quantized": "ct-nvfp4", "mxfp4-pack-quantized": "ct-mxfp4"}[fmt]
group = 32 if layout == "ct-mxfp4" else 16


def e2m1(codes):
    sign = np.where(codes & 8, -1.0, 1.0)
    e = (codes >> 1) & 3
    m = (codes & 1).astype(np.float64)
    return sign * np.where(e == 0, m * 0.5, (1.0 + m * 0.5) * 2.0 ** (e.astype(np.float64) - 1))


def scale_values(s):
    s = s.astype(np.int64)
    if layout == "ct-mxfp4":
        return 2.0 ** (s.astype(np.float64) - 127)
    e, m = (s >> 3) & 15, (s & 7).astype(np.float64)
    return np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e.astype(np.float64) - 7))


def module_values(module):
    """float64 [out, in] E2M1 * block scale (the -0 of code 8 as +0), and the factor as float32."""
    dtype, shape, raw = tensors[module + (".weight" if layout == "modelopt" else ".weight_packed")]
    assert dtype == "U8"
    b = np.frombuffer(raw, dtype=np.uint8)
    codes = np.empty(b.size * 2, dtype=np.int64)
    codes[0::2], codes[1::2] = b & 15, b >> 4
    sdtype, _, sraw = tensors[module + ".weight_scale"]
    scales = scale_values(np.frombuffer(sraw, dtype=np.uint8))
    value = e2m1(codes) * scales[np.arange(codes.size) // group]
    value[codes == 8] = 0.0
    factor, real_divisor = None, None
    if layout == "modelopt":
        factor = np.frombuffer(tensors[module + ".weight_scale_2"][2], dtype=np.float32)[0]
    elif layout == "ct-nvfp4":
        g = np.frombuffer(tensors[module + ".weight_global_scale"][2], dtype=np.float32)[0]
        factor = np.float32(1) / g  # float32 / float32: IEEE's correctly rounded quotient
        real_divisor = float(g)
    return value.reshape(shape[0], shape[1] * 2), factor, real_divisor


plan = json.load(open(plan_path))
# llama, mistral3 (Ministral3Model is a LlamaModel) and nemotron_h* (GraniteHybridModel keeps
# LlamaModel's undo_permute)
permute = static_method(llama_src, "llama.py", "LlamaModel", "permute") if plan["arch"] in (
    "llama", "mistral3", "nemotron_h", "nemotron_h_moe") else None
by_name = {t["gguf_name"]: t for t in plan["tensors"]}
reader = gguf.GGUFReader(gguf_path)
gguf_tensors = {t.name: t for t in reader.tensors}
counts, same, scales_same, worst_rel = {}, 0, 0, 0.0
expected_factors = {}  # .scale name -> float32 array
folded = {}  # weight name -> float32 values (ggml shape order) for --fold
for t in reader.tensors:
    kind = t.tensor_type.name
    counts[kind] = counts.get(kind, 0) + 1
    if kind not in ("MXFP4", "NVFP4"):
        continue
    entry = by_name.get(t.name)
    if entry is None:
        problems.append(f"{t.name}: not in the plan")
        continue
    src = entry["source_name"]
    experts = entry.get("experts", 0)
    names = [src.replace(".experts.0.", f".experts.{e}.") for e in range(experts)] if experts else [src]
    parts, factors, divisors = [], [], []
    for name in names:
        v, f, d = module_values(name[: -len(".weight")])
        if permute is not None and t.name.endswith(("attn_q.weight", "attn_k.weight")):
            heads = cfg["num_attention_heads"]
            kv = cfg.get("num_key_value_heads", heads) if "attn_k" in t.name else heads
            v = np.ascontiguousarray(permute(v, heads, kv))
        parts.append(v)
        factors.append(f)
        divisors.append(d)
    want64 = np.stack(parts) if experts else parts[0]
    want = want64.astype(np.float32)
    got = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(want.shape)
    diff = got.view(np.uint32) != want.view(np.uint32)
    if diff.any():
        i = tuple(np.argwhere(diff)[0])
        problems.append(f"{t.name}: {int(diff.sum())} of {want.size} values differ; first at {i}: "
                        f"gguf {got[i]!r} source {want[i]!r}")
    else:
        same += 1
    scale_name = t.name[: -len(".weight")] + ".scale"
    f32 = np.array([1.0 if f is None else f for f in factors], dtype=np.float32)
    if not np.all(f32 == 1.0):
        expected_factors[scale_name] = f32
    if scale_name in gguf_tensors:
        s = gguf_tensors[scale_name]
        got_s = np.asarray(s.data).astype(np.float32).reshape(-1)
        if s.tensor_type.name != "F32" or got_s.size != f32.size or \
                (got_s.view(np.uint32) != f32.view(np.uint32)).any():
            problems.append(f"{scale_name}: {s.tensor_type.name} {got_s.tolist()} but the source's "
                            f"factor is float32 {f32.tolist()}")
        else:
            scales_same += 1
            # the real weight against the GGUF's block value times its .scale, in float64
            applied = got.astype(np.float64) * (got_s[:, None, None] if experts else got_s[0])
            if all(d is None for d in divisors):
                real = want64 * (f32.astype(np.float64)[:, None, None] if experts else float(f32[0]))
            else:
                dv = np.array(divisors, dtype=np.float64)
                real = want64 / (dv[:, None, None] if experts else dv[0])
            nz = real != 0
            rel = np.abs(applied[nz] - real[nz]) / np.abs(real[nz])
            worst_rel = max(worst_rel, float(rel.max()) if rel.size else 0.0)
    factor = got_s if scale_name in gguf_tensors else np.ones(len(names), dtype=np.float32)
    if "--fold-wrong-factor" in args:  # the negative control: each factor taken twice
        factor = factor * np.float32(2)
    folded[t.name] = (got.astype(np.float64) * (factor.astype(np.float64)[:, None, None] if experts
                                                 else float(factor[0]))).astype(np.float32)

scale_tensors = [n for n in gguf_tensors if n.endswith(".scale")]
for name in scale_tensors:
    if name not in expected_factors:
        problems.append(f"{name}: in the file, but its source factor is 1 or it has no FP4 weight")
missing = [n for n in expected_factors if n not in gguf_tensors]
if missing:
    problems.append(f"source factors other than 1 with no .scale in the file: {missing}")
if len(scale_tensors) != want_scales:
    problems.append(f"expected {want_scales} .scale tensors, found {len(scale_tensors)}")
if any(n.endswith(".input_scale") for n in gguf_tensors):
    problems.append("an .input_scale tensor was written (no llama.cpp graph reads it)")
fp4 = counts.get("MXFP4", 0) + counts.get("NVFP4", 0)
exact = "bit-identical" if worst_rel == 0 else f"NOT bit-identical: max relative error {worst_rel:.3g}"
print(f"  {os.path.basename(gguf_path)}: {same}/{fp4} {layout} tensors bit-identical to the source, "
      f"{scales_same}/{len(scale_tensors)} .scale equal to the source's factor bits; block value * .scale "
      f"against the real weight: {exact} ({counts})")
if fp4 == 0:
    problems.append("no MXFP4/NVFP4 tensor in the file")
if "--expect-exact" in args and worst_rel != 0:
    problems.append(f"block value * .scale differs from the real weight (max relative {worst_rel:.3g})")
if "--expect-inexact" in args and worst_rel == 0:
    problems.append("expected the compressed-tensors factor to be inexact, but every value is exact")

if fold_path:
    write_f32_twin(reader, fold_path, folded)
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
