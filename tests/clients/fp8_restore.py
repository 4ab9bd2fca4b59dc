"""Re-stores a float checkpoint as an FP8 block-quantized one (docs/formats.md §6), written here from
the format's definition: every 2-D `*_proj.weight` but the embedding becomes F8_E4M3 codes (seeded
random bytes, the NaNs 0x7F / 0xFF replaced by 0x38) with an F32 `weight_scale_inv` of one power of two
2^-16 .. 2^-20 per 128 x 128 block (DeepSeek-V3.1's `scale_fmt: ue8m0`); config.json gets
DeepSeek-V3.1's quantization_config. Used for architectures rebox-mkfixture has no FP8 layout for.

With --ct-channel the layout is compressed-tensors `float-quantized` with the `channel` strategy, as
llm-compressor's FP8_DYNAMIC scheme writes it (zai-org's GLM-4.5-FP8 / GLM-4.7-FP8): each such weight
gets a BF16 `weight_scale` [out, 1], one per output row, of 8 random significant bits 2^-12 .. 2^-8
(BF16 scales: every product exact in F32 only); config.json gets that scheme's quantization_config
(weights and dynamic per-token input activations, 8-bit float, symmetric; lm_head ignored).

Usage: fp8_restore.py FLOAT_DIR OUT_DIR [--ct-channel]
"""
import json
import os
import shutil
import sys

import numpy as np

src, dst = sys.argv[1:3]
ct_channel = "--ct-channel" in sys.argv[3:]
shutil.copytree(src, dst)
rng = np.random.default_rng(39)
for f in sorted(x for x in os.listdir(src) if x.endswith(".safetensors")):
    raw = open(f"{src}/{f}", "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    meta = header.pop("__metadata__", None)
    out, blobs, offset = {}, [], 0

    def add(name, dtype, shape, data):
        global offset
        out[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)

    for name, e in header.items():
        begin, end = e["data_offsets"]
        shape = e["shape"]
        if len(shape) == 2 and name.endswith("_proj.weight") and "embed" not in name:
            codes = rng.integers(0, 256, size=shape[0] * shape[1], dtype=np.uint8)
            codes[(codes & 0x7F) == 0x7F] = 0x38
            if ct_channel:  # BF16: sign 0, exponent 2^-12 .. 2^-8, 7 random mantissa bits
                exps = rng.integers(127 - 12, 127 - 7, size=shape[0]).astype(np.uint16)
                bits = (exps << 7) | rng.integers(0, 128, size=shape[0]).astype(np.uint16)
                add(name, "F8_E4M3", shape, codes.tobytes())
                add(name[: -len("weight")] + "weight_scale", "BF16", [shape[0], 1], bits.astype("<u2").tobytes())
                continue
            blocks = [-(-shape[0] // 128), -(-shape[1] // 128)]
            scales = (2.0 ** -rng.integers(16, 21, size=blocks[0] * blocks[1])).astype("<f4")
            add(name, "F8_E4M3", shape, codes.tobytes())
            add(name + "_scale_inv", "F32", blocks, scales.tobytes())
        else:
            add(name, e["dtype"], shape, raw[8 + n + begin : 8 + n + end])
    if meta:
        out["__metadata__"] = meta
    text = json.dumps(out).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(f"{dst}/{f}", "wb") as w:
        w.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))
config = json.load(open(f"{dst}/config.json"))
if ct_channel:
    def scheme(strategy, dynamic, observer):
        return {"actorder": None, "block_structure": None, "dynamic": dynamic, "group_size": None,
                "num_bits": 8, "observer": observer, "observer_kwargs": {}, "strategy": strategy,
                "symmetric": True, "type": "float"}
    config["quantization_config"] = {
        "config_groups": {"group_0": {"input_activations": scheme("token", True, None),
                                      "output_activations": None, "targets": ["Linear"],
                                      "weights": scheme("channel", False, "minmax")}},
        "format": "float-quantized", "global_compression_ratio": None, "ignore": ["lm_head"],
        "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed"}
else:
    config["quantization_config"] = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                     "scale_fmt": "ue8m0", "weight_block_size": [128, 128]}
json.dump(config, open(f"{dst}/config.json", "w"), indent=2)
