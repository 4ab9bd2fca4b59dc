"""gguf-py reads a GGUF converted from an FP8 block-quantized checkpoint; every value of every tensor
whose source is an FP8 weight must equal, exactly, the value computed here in float64 from the
checkpoint's raw bytes (the outside oracle; numpy only, no rebox code).

Source side (DeepSeek-V3's "FP8 Weights" and the OCP 8-bit floating point spec): config.json's
quantization_config gives weight_block_size [br, bc]; P.weight is F8_E4M3 [out, in], E4M3FN decoded
here from its bits (sign, exponent bias 7, 3 mantissa bits, subnormals m * 2^-9, S.1111.111 NaN);
P.weight_scale_inv is F32 / BF16 / F16 [ceil(out/br), ceil(in/bc)]; value = e4m3 * scale of the block,
in float64 (exact). llm-compressor's compressed-tensors FP8 (quant_method compressed-tensors, one config
group of 8-bit float weights, format float-quantized; compressed-tensors' docs and conversion/base.py's
dequant_model): P.weight_scale, [out, 1] with strategy "channel" (one scale per output row) or
[ceil(out/br), ceil(in/bc)] with strategy "block" and block_structure [br, bc]. ModelOpt's FP8 export
(hf_quant_config.json quant_algo FP8): P.weight_scale F32 [] for the whole weight.
GGUF side: llama.cpp's GGUFReader and gguf.quants.dequantize, widened to float64.
Which GGUF tensor holds which source tensor comes from `rebox plan --json`.

Usage: ggufpy_fp8.py MODEL_DIR FILE.gguf PLAN.json EXPECTED_TYPE|any
"""
import json
import os
import sys

import numpy as np
import gguf

from source_values import first_difference, float_values, read_safetensors

model_dir, gguf_path, plan_path, want_type = sys.argv[1:5]
config = json.load(open(f"{model_dir}/config.json"))
q = config.get("quantization_config", {})
if os.path.exists(f"{model_dir}/hf_quant_config.json"):  # ModelOpt FP8: one scale per weight
    assert json.load(open(f"{model_dir}/hf_quant_config.json"))["quantization"]["quant_algo"] == "FP8"
    suffix, br, bc = "_scale", None, None
elif q["quant_method"] == "fp8":
    suffix, (br, bc) = "_scale_inv", q["weight_block_size"]
else:
    weights = next(iter(q["config_groups"].values()))["weights"]
    assert weights["type"] == "float" and weights["num_bits"] == 8, weights
    suffix = "_scale"
    br, bc = (1, None) if weights["strategy"] == "channel" else weights["block_structure"]
tensors, _ = read_safetensors(f"{model_dir}/model.safetensors")


def e4m3_table():
    b = np.arange(256)
    sign = np.where(b & 0x80, -1.0, 1.0)
    e, m = (b >> 3) & 15, (b & 7).astype(np.float64)
    mag = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e.astype(np.float64) - 7))
    mag[(e == 15) & (m == 7)] = np.nan
    return sign * mag


E4M3 = e4m3_table()


def source_values(name):
    w, s = tensors[name], tensors[name + suffix]
    rows, cols = w.shape
    block_rows, block_cols = br or rows, bc or cols  # channel: the whole row; ModelOpt: the weight
    codes = np.asarray(w.bytes).reshape(rows, cols)
    scale = float_values(s).astype(np.float64).reshape(-1, 1 if br is None else s.shape[-1])  # exact
    per_value = scale[np.arange(rows)[:, None] // block_rows, np.arange(cols)[None, :] // block_cols]
    return E4M3[codes] * per_value


plan = json.load(open(plan_path))
by_name = {t["gguf_name"]: t for t in plan["tensors"]}
problems, same, fp8, types = [], 0, 0, {}
for t in gguf.GGUFReader(gguf_path).tensors:
    entry = by_name.get(t.name)
    if entry is None:
        problems.append(f"{t.name}: not in the plan")
        continue
    source = entry["source_name"]
    if source + suffix not in tensors:
        continue
    fp8 += 1
    kind = t.tensor_type.name
    types[kind] = types.get(kind, 0) + 1
    if want_type != "any" and kind != want_type:
        problems.append(f"{t.name}: {kind}, expected {want_type}")
    want = source_values(source)
    got = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64).reshape(want.shape)
    problem = first_difference(t.name, got, want, ~((got == want) & (np.signbit(got) == np.signbit(want))))
    if problem:
        problems.append(problem)
    else:
        same += 1
print(f"  {gguf_path.split('/')[-1]}: {same}/{fp8} FP8 tensors equal the float64 products {types}")
if fp8 == 0:
    problems.append("no tensor with an FP8 source in the file")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
