"""gguf-py reads a rebox-converted GGUF and its values are checked against the source checkpoint.

Opens the GGUF with llama.cpp's GGUFReader, dequantizes every tensor with gguf.quants.dequantize
(Q4_1, Q5_1, F16, BF16; F32 as stored) and compares it BIT FOR BIT (float32 viewed as uint32) with
values computed here, in numpy, straight from the source model dir (own header parser, own lsb0
unpacking): mcq-v1 safetensors, or an MLX affine checkpoint (U32 words, .scales/.biases, bits and
group_size from config.json "quantization"), with the formula w = float(code) * float(scale) +
float(min) in float32. Float source tensors must keep their values (F32/F16/BF16 widened exactly)
and, when the GGUF type is the source dtype, their bytes. Every GGUF tensor must come from exactly
one source tensor and every source tensor must appear.

Usage: ggufpy_dequant.py MODEL_DIR FILE.gguf [--expect-qwen3-0.6b] [--expect-q5_1] [--expect TYPE=N ...]
  --expect TYPE=N      the file must hold exactly N tensors of ggml type TYPE (e.g. Q5_1=2, BF16=15)
  --expect-qwen3-0.6b  also check the reference figures of the 0.6B shape (mcq-v1 spec): 310 tensors,
                       197 Q4_1 + 113 F32, 151,669 tokens with none empty, size within 0.2% of 378,522,208.
"""
import json
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

from source_values import Source, float_values, unpack_lsb0

model_dir, gguf_path = sys.argv[1], sys.argv[2]
expect_06b = "--expect-qwen3-0.6b" in sys.argv[3:]
expect_q51 = "--expect-q5_1" in sys.argv[3:]
expect_counts = {}
for i, arg in enumerate(sys.argv[3:], start=3):
    if arg == "--expect":
        type_name, count = sys.argv[i + 1].split("=")
        expect_counts[type_name] = int(count)
problems = []
ROWS_PER_CHUNK_VALUES = 1 << 22  # values per chunk, keeps memory flat on the 0.6B shape


def fail(msg):
    problems.append(msg)


# ---- the source checkpoint, parsed here (source_values.py: own safetensors parser, own lsb0 unpacking) ----
_source = Source(model_dir)
source, quant_meta = _source.tensors, dict(_source.mcq)

# MLX affine (no mcq metadata, config.json "quantization"): module P stores P.weight (U32 words; a
# row is whole words, so the bytes are one flat lsb0 code stream), P.scales and P.biases
# [rows, cols/group]; bits/group from the module's override or the global setting.
config_path = os.path.join(model_dir, "config.json")
config = json.load(open(config_path)) if os.path.exists(config_path) else {}
mlx_quant = config.get("quantization") if not quant_meta else None
PARTS = (".qcodes", ".scales", ".mins")
if mlx_quant:
    PARTS = (".weight", ".scales", ".biases")
    for n in source:
        if not n.endswith(".scales"):
            continue
        module = n[: -len(".scales")]
        setting = mlx_quant.get(module, mlx_quant)
        bits, group = setting["bits"], setting["group_size"]
        rows, words = source[module + ".weight"].shape
        quant_meta[module + ".weight"] = {"shape": [rows, words * 32 // bits], "bits": bits,
                                          "group": group, "module": module}

# Logical source weights: quantized (name -> meta) and plain tensors.
part_names = {meta.get("module", q) + s for q, meta in quant_meta.items() for s in PARTS}
plain = {n for n in source if n not in part_names}
logical = sorted(set(quant_meta) | plain)


# ---- Hugging Face -> GGUF names for qwen3 (written out here, independent of the converter) ----
LAYER_NAMES = {
    "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_norm.weight": "attn_q_norm.weight", "self_attn.k_norm.weight": "attn_k_norm.weight",
    "input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}
TOP_NAMES = {"embed_tokens.weight": "token_embd.weight", "norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}


def gguf_name(hf):
    short = hf[len("model."):] if hf.startswith("model.") and hf != "model." else hf
    if short in TOP_NAMES:
        return TOP_NAMES[short]
    parts = short.split(".", 2)
    if len(parts) == 3 and parts[0] == "layers" and parts[2] in LAYER_NAMES:
        return f"blk.{int(parts[1])}.{LAYER_NAMES[parts[2]]}"
    return None


# ---- expected values straight from the checkpoint ----
def expected_rows(name, meta, r0, r1):
    rows, cols = meta["shape"]
    bits, group = meta["bits"], meta["group"]
    codes_part, mins_part = (".weight", ".biases") if "module" in meta else (".qcodes", ".mins")
    name = meta.get("module", name)
    codes = unpack_lsb0(source[name + codes_part].bytes, bits, r0 * cols, (r1 - r0) * cols)
    scales = float_values(source[name + ".scales"])
    mins = float_values(source[name + mins_part])
    group_of = np.arange(r0 * cols, r1 * cols, dtype=np.int64) // group
    value = codes.astype(np.float32) * scales.astype(np.float32)[group_of] + mins.astype(np.float32)[group_of]
    return value.astype(np.float32).reshape(r1 - r0, cols)


# ---- the comparison ----
reader = gguf.GGUFReader(gguf_path)
by_gguf = {}
for hf in logical:
    g = gguf_name(hf)
    if g is None:
        fail(f"source tensor {hf}: no qwen3 GGUF name known to this test")
    elif g in by_gguf:
        fail(f"source tensors {by_gguf[g]} and {hf} both map to {g}")
    else:
        by_gguf[g] = hf

n_q41 = n_q41_same = n_q51 = n_q51_same = n_f32 = n_f32_same = 0
plain_types, plain_same = {}, {}  # float source tensors by GGUF type: all / equal to the source
seen = set()
for t in reader.tensors:
    hf = by_gguf.get(t.name)
    if hf is None:
        fail(f"GGUF tensor {t.name}: no source tensor")
        continue
    seen.add(t.name)
    if hf in quant_meta:
        meta = quant_meta[hf]
        rows, cols = meta["shape"]
        if [int(x) for x in t.shape] != [cols, rows]:
            fail(f"{t.name}: ne {list(map(int, t.shape))}, source shape {meta['shape']} (expected ne [{cols}, {rows}])")
            continue
        if t.tensor_type not in (Q.Q4_1, Q.Q5_1, Q.F32, Q.F16, Q.BF16):
            fail(f"{t.name}: type {t.tensor_type.name} for a {meta['bits']}-bit source (expected Q4_1, Q5_1, F32, F16 or BF16)")
            continue
        is_q41 = t.tensor_type == Q.Q4_1
        is_q51 = t.tensor_type == Q.Q5_1
        n_q41 += is_q41
        n_q51 += is_q51
        n_f32 += t.tensor_type == Q.F32
        step = max(1, ROWS_PER_CHUNK_VALUES // cols)
        mismatched = 0
        first_bad = None
        for r0 in range(0, rows, step):
            r1 = min(rows, r0 + step)
            rows_data = t.data[r0:r1]
            if t.tensor_type == Q.F32:
                got = np.asarray(rows_data, dtype=np.float32)
            else:
                got = gguf.quants.dequantize(rows_data, t.tensor_type).astype(np.float32)
            want = expected_rows(hf, meta, r0, r1)
            diff = got.reshape(r1 - r0, cols).view(np.uint32) != want.view(np.uint32)
            if diff.any():
                mismatched += int(diff.sum())
                if first_bad is None:
                    i = np.argwhere(diff)[0]
                    first_bad = (r0 + int(i[0]), int(i[1]), float(got[i[0], i[1]]), float(want[i[0], i[1]]))
        if mismatched:
            r, c, g_, w_ = first_bad
            fail(f"{t.name}: {mismatched} of {rows * cols} values differ; first at row {r} col {c}: gguf {g_!r} source {w_!r}")
        elif is_q41:
            n_q41_same += 1
        elif is_q51:
            n_q51_same += 1
        elif t.tensor_type == Q.F32:
            n_f32_same += 1
    else:
        src = source[hf]
        if t.tensor_type not in (Q.F32, Q.F16, Q.BF16):
            fail(f"{t.name}: type {t.tensor_type.name} for plain source {src.dtype} (expected F32, F16 or BF16)")
            continue
        plain_types[t.tensor_type.name] = plain_types.get(t.tensor_type.name, 0) + 1
        if t.tensor_type == Q.F32:
            n_f32 += 1
        want = float_values(src)
        if t.tensor_type == Q.F32:
            got = np.asarray(t.data, dtype=np.float32).reshape(-1)
        else:
            got = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(-1)
        if int(np.prod(t.shape)) != want.size or [int(x) for x in t.shape][::-1] != list(src.shape):
            fail(f"{t.name}: ne {list(map(int, t.shape))} vs source shape {src.shape}")
        elif got.view(np.uint32).tobytes() != want.view(np.uint32).tobytes():
            fail(f"{t.name}: {t.tensor_type.name} values differ from source {hf} ({src.dtype})")
        elif t.tensor_type.name == src.dtype and np.asarray(t.data).tobytes() != src.bytes.tobytes():
            fail(f"{t.name}: {src.dtype} bytes differ from the source's")
        else:
            plain_same[t.tensor_type.name] = plain_same.get(t.tensor_type.name, 0) + 1
            if t.tensor_type == Q.F32:
                n_f32_same += 1

for g, hf in by_gguf.items():
    if g not in seen:
        fail(f"source tensor {hf}: missing from the GGUF (expected {g})")

name = os.path.basename(gguf_path)
print(f"  {name}: {len(reader.tensors)} tensors; {n_q41_same}/{n_q41} Q4_1 and {n_q51_same}/{n_q51} Q5_1 tensors "
      f"bit-identical to the source; "
      f"{n_f32_same}/{n_f32} F32 tensors equal to the source; float sources by type: "
      + (", ".join(f"{plain_same.get(k, 0)}/{v} {k}" for k, v in sorted(plain_types.items())) or "none"))
if n_q41 == 0 and quant_meta and not expect_counts:
    fail("no Q4_1 tensor in the file (expected the default conversion)")
type_counts = {}
for t in reader.tensors:
    type_counts[t.tensor_type.name] = type_counts.get(t.tensor_type.name, 0) + 1
for type_name, count in expect_counts.items():
    if type_counts.get(type_name, 0) != count:
        fail(f"{type_name} tensors: {type_counts.get(type_name, 0)} (expected {count}); all: {type_counts}")
if expect_q51 and n_q51 == 0:
    fail("no Q5_1 tensor in the file (expected one for the 5-bit source tensor)")

if expect_06b:
    size = os.path.getsize(gguf_path)
    tokens = reader.get_field("tokenizer.ggml.tokens")
    token_lens = [len(tokens.parts[i]) for i in tokens.data] if tokens else []
    checks = [
        ("tensors", len(reader.tensors), 310),
        ("Q4_1 tensors", n_q41, 197),
        ("F32 tensors", n_f32, 113),
        ("tokens", len(token_lens), 151669),
        ("empty tokens", sum(1 for n in token_lens if n == 0), 0),
    ]
    for what, got, want in checks:
        if got != want:
            fail(f"{name}: {what} {got} (expected {want})")
    ref = 378_522_208
    if abs(size - ref) > ref * 0.002:
        fail(f"{name}: file size {size:,} is {100 * (size - ref) / ref:+.3f}% off the reference {ref:,} (allowed 0.2%)")
    print(f"  {name}: 0.6B figures: {len(reader.tensors)} tensors ({n_q41} Q4_1 + {n_f32} F32), "
          f"{len(token_lens):,} tokens, size {size:,} ({100 * (size - ref) / ref:+.3f}% vs {ref:,})")

if problems:
    print(f"FAIL: {gguf_path} vs {model_dir}:")
    for p in problems[:40]:
        print("  " + p)
    sys.exit(1)
