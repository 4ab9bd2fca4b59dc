"""gguf-py dequantizes a GGUF converted from an MLX mxfp4 / nvfp4 checkpoint; every value must equal,
bit for bit, the value computed here from the checkpoint by the formats' own definitions.

Source side (written here from the OCP Microscaling and NVIDIA NVFP4 definitions, numpy only): module P
of an MLX checkpoint whose config.json "quantization" mode is mxfp4 (group 32) or nvfp4 (group 16) stores
P.weight as U32 words (code k at bits 4k of the little-endian word, i.e. element 2i in the low nibble of
byte i) and P.scales as U8 (E8M0 2^(e-127), or E4M3 with bias 7), no biases. Value = E2M1(code) * scale,
E2M1 decoded from its bits (sign, 2 exponent bits, 1 mantissa bit). ggml's table has no negative zero:
code 8 (-0) is expected as +0.
GGUF side: llama.cpp's GGUFReader and gguf.quants.dequantize (its MXFP4 / NVFP4 classes).
Which GGUF tensor holds which source tensor comes from `rebox plan --json` (names are checked elsewhere);
llama's attn_q / attn_k rows are permuted with LlamaModel.permute taken from the bundle.

Usage: ggufpy_fp4.py LLAMA_SRC MODEL_DIR FILE.gguf PLAN.json [--expect TYPE=N ...]
"""
import json
import sys

import numpy as np
import gguf

from converter_run import static_method
from source_values import Source

llama_src, model_dir, gguf_path, plan_path = sys.argv[1:5]
expect = dict(a.split("=") for a in sys.argv[6::2]) if len(sys.argv) > 5 else {}
problems = []
src = Source(model_dir)
mode = src.config["quantization"]["mode"]
group = {"mxfp4": 32, "nvfp4": 16}[mode]


def e2m1(codes):
    sign = np.where(codes & 8, -1.0, 1.0)
    e = (codes >> 1) & 3
    m = (codes & 1).astype(np.float64)
    mag = np.where(e == 0, m * 0.5, (1.0 + m * 0.5) * 2.0 ** (e.astype(np.float64) - 1))
    return sign * mag


def scale_values(s):
    s = s.astype(np.int64)
    if mode == "mxfp4":
        return 2.0 ** (s.astype(np.float64) - 127)
    e, m = (s >> 3) & 15, (s & 7).astype(np.float64)
    return np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e.astype(np.float64) - 7))


def source_values(module):
    w, s = src.tensors[module + ".weight"], src.tensors[module + ".scales"]
    raw = np.frombuffer(w.bytes, dtype=np.uint8)
    codes = np.empty(raw.size * 2, dtype=np.int64)
    codes[0::2], codes[1::2] = raw & 15, raw >> 4
    scales = np.frombuffer(s.bytes, dtype=np.uint8)
    value = (e2m1(codes) * scale_values(scales)[np.arange(codes.size) // group]).astype(np.float32)
    value[codes == 8] = 0.0
    cols = w.shape[-1] * 8
    return value.reshape(-1, cols)


plan = json.load(open(plan_path))
cfg = src.config
permute = static_method(llama_src, "llama.py", "LlamaModel", "permute") if plan["arch"] == "llama" else None
by_name = {t["gguf_name"]: t for t in plan["tensors"]}
reader = gguf.GGUFReader(gguf_path)
counts, same = {}, 0
for t in reader.tensors:
    kind = t.tensor_type.name
    counts[kind] = counts.get(kind, 0) + 1
    if kind not in ("MXFP4", "NVFP4"):
        continue
    entry = by_name.get(t.name)
    if entry is None:
        problems.append(f"{t.name}: not in the plan")
        continue
    module = entry["source_name"][: -len(".weight")]
    want = source_values(module)
    if permute is not None and t.name.endswith(("attn_q.weight", "attn_k.weight")):
        heads = cfg["num_attention_heads"]
        kv = cfg.get("num_key_value_heads", heads) if "attn_k" in t.name else heads
        want = np.ascontiguousarray(permute(want, heads, kv))
    want = np.ascontiguousarray(want[: int(np.prod(t.shape[1:]))])  # gemma3: the first vocab_size rows
    got = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(want.shape)
    diff = got.view(np.uint32) != want.view(np.uint32)
    if diff.any():
        i = tuple(np.argwhere(diff)[0])
        problems.append(f"{t.name}: {int(diff.sum())} of {want.size} values differ; first at {i}: "
                        f"gguf {got[i]!r} source {want[i]!r}")
    else:
        same += 1
for kind, n in expect.items():
    if counts.get(kind, 0) != int(n):
        problems.append(f"expected {n} {kind} tensors, found {counts.get(kind, 0)}")
fp4 = counts.get("MXFP4", 0) + counts.get("NVFP4", 0)
print(f"  {gguf_path.split('/')[-1]}: {same}/{fp4} {mode} tensors bit-identical to the source ({counts})")
if fp4 == 0:
    problems.append("no MXFP4/NVFP4 tensor in the file")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
