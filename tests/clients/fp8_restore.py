"""Re-stores a float checkpoint as an FP8 block-quantized one (docs/formats.md §6), written here from
the format's definition: every 2-D `*_proj.weight` but the embedding becomes F8_E4M3 codes (seeded
random bytes, the NaNs 0x7F / 0xFF replaced by 0x38) with an F32 `weight_scale_inv` of one power of two
2^-16 .. 2^-20 per 128 x 128 block (DeepSeek-V3.1's `scale_fmt: ue8m0`); config.json gets
DeepSeek-V3.1's quantization_config. Used for architectures rebox-mkfixture has no FP8 layout for.

Usage: fp8_restore.py FLOAT_DIR OUT_DIR
"""
import json
import os
import shutil
import sys

import numpy as np

src, dst = sys.argv[1:3]
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
config["quantization_config"] = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                 "scale_fmt": "ue8m0", "weight_block_size": [128, 128]}
json.dump(config, open(f"{dst}/config.json", "w"), indent=2)
