"""What llama.cpp's convert_hf_to_gguf.py makes of an FP8 block-quantized checkpoint before it writes
its file, as a float checkpoint: written here from the converter's code (conversion/base.py
`dequant_model`'s `dequant_simple`: `weight.float() * scale.float()`, the scale repeated over its
block, one binary32 multiplication per value) and its output type (`ModelBase.__init__`'s
`--outtype auto` heuristic: the dtype of the first tensor of two or more dims that is BF16 or F16,
the safetensors files in name order and each in its header's order, F16 when none is; the FP8
tensors are not yet dequantized then), rounded to that type by gguf-py's own `gguf.quants.quantize`
(BF16) or numpy's float16 cast (F16), as `prepare_tensors` does. Every FP8 weight becomes that
float tensor, its `weight_scale_inv` is dropped, and config.json loses its quantization_config:
rebox's exact conversion of OUT_DIR is then the converter's file, which llama-quantize quantizes.

A compressed-tensors `float-quantized` checkpoint (config_groups) is read the same way with its
`weight_scale` names: the `channel` strategy one scale per row ([out, 1], a block of one row by the
whole width, as `dequant_simple` broadcasts it), the `block` strategy its `block_structure`.

With --f32 the products are stored unrounded, as F32 tensors (what --fp8-as-q8 quantizes to Q8_0:
the converter's tensor_force_quant sees the binary32 products).

Usage: fp8_dequant.py FP8_DIR OUT_DIR [--f32]   (prints the output type: BF16 or F16)
"""
import json
import os
import shutil
import sys

import numpy as np
import gguf

src, dst = sys.argv[1:3]
keep_f32 = "--f32" in sys.argv[3:]
shutil.copytree(src, dst)
parts = sorted(x for x in os.listdir(src) if x.endswith(".safetensors"))


def header_of(path):
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    return raw, n, header


outtype = "F16"  # ModelBase.__init__ with --outtype auto
for f in parts:
    _, _, header = header_of(f"{src}/{f}")
    found = next((e["dtype"] for k, e in header.items()
                  if k != "__metadata__" and len(e["shape"]) >= 2 and e["dtype"] in ("BF16", "F16")), None)
    if found:
        outtype = found
        break

config = json.load(open(f"{src}/config.json"))
qc = config["quantization_config"]
suffix = "_scale_inv"
if qc.get("quant_method") == "compressed-tensors":
    weights = next(iter(qc["config_groups"].values()))["weights"]
    suffix = "_scale"
    br, bc = weights["block_structure"] if weights["strategy"] == "block" else (1, 1 << 62)
else:
    br, bc = qc["weight_block_size"]
b = np.arange(256)
e, m = (b >> 3) & 15, (b & 7).astype(np.float64)
E4M3 = np.where(b & 0x80, -1.0, 1.0) * np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7.0))
E4M3 = E4M3.astype(np.float32)  # every E4M3 value is a binary32 value


def scale_values(raw, offset, entry):
    begin, end = entry["data_offsets"]
    data = raw[offset + begin : offset + end]
    if entry["dtype"] == "F32":
        return np.frombuffer(data, dtype="<f4").astype(np.float32)
    if entry["dtype"] == "F16":
        return np.frombuffer(data, dtype="<f2").astype(np.float32)
    return (np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16).view(np.float32)  # BF16


for f in parts:
    raw, n, header = header_of(f"{src}/{f}")
    meta = header.pop("__metadata__", None)
    out, blobs, offset = {}, [], 0
    for name, entry in header.items():
        if name.endswith(suffix):
            continue
        begin, end = entry["data_offsets"]
        data, dtype = raw[8 + n + begin : 8 + n + end], entry["dtype"]
        if dtype == "F8_E4M3":
            rows, cols = entry["shape"]
            scale = scale_values(raw, 8 + n, header[name + suffix]).reshape(-(-rows // br), -(-cols // bc))
            per_value = np.repeat(np.repeat(scale, br, axis=0), min(bc, cols), axis=1)[:rows, :cols]
            codes = np.frombuffer(data, dtype=np.uint8).reshape(rows, cols)
            product = E4M3[codes] * per_value  # float32 x float32: one rounding, as torch's
            if keep_f32:
                data, dtype = product.astype("<f4").tobytes(), "F32"
            elif outtype == "BF16":
                data, dtype = gguf.quants.quantize(product, gguf.GGMLQuantizationType.BF16).tobytes(), outtype
            else:
                data, dtype = product.astype(np.float16).tobytes(), outtype
        out[name] = {"dtype": dtype, "shape": entry["shape"], "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if meta:
        out["__metadata__"] = meta
    text = json.dumps(out).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(f"{dst}/{f}", "wb") as w:
        w.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))
config.pop("quantization_config")
json.dump(config, open(f"{dst}/config.json", "w"), indent=2)
print(outtype)
