"""The published (Hugging Face) names and layout of the vision tower of an mlx-vlm Qwen2-VL / Qwen2.5-VL /
Qwen3-VL checkpoint, undone here from mlx-vlm's own sanitize code (test side, shares no code with rebox), so
that llama.cpp's converter (which reads only the published names) can be run on the same tower values:

  Qwen2VL / Qwen2_5_VL Model.sanitize: "visual" -> "vision_tower"   (undone: vision_tower. -> visual.)
  Qwen3_VL Model.sanitize:             "model.visual" -> "vision_tower"   (undone: -> model.visual.)
  VisionModel.sanitize of all three: patch_embed.proj.weight, PyTorch [out, in, T, kh, kw], stored as
  v.transpose(0, 2, 3, 4, 1) = [out, T, kh, kw, in]   (undone: transpose(0, 4, 1, 2, 3)).

Only the tower's tensors are written (float: current mlx-vlm's quant predicate skips vision_tower); the text
model's are the text comparison's business. A tower Linear quantized by legacy mlx-vlm (U32 codes beside .scales
/ .biases) is written as its F32 values, w = code * scale + bias in float32 (source_values.py's MLX reading). config.json loses its MLX `quantization` /
`quantization_config` (nothing left is quantized); the other files are copied.

Usage: mlxvlm_restore.py MLX_VLM_DIR OUT_DIR
"""
import json
import os
import shutil
import sys

import numpy as np

from source_values import Source

src, dst = sys.argv[1:3]
shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.safetensors", "*.safetensors.index.json"))
config = json.load(open(f"{src}/config.json"))
qwen3 = config["architectures"][0].startswith("Qwen3")
published = "model.visual." if qwen3 else "visual."
SIZES = {"BF16": 2, "F16": 2, "F32": 4}
source = Source(src)
out, blobs, offset = {}, [], 0
for f in sorted(x for x in os.listdir(src) if x.endswith(".safetensors")):
    raw = open(f"{src}/{f}", "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    header.pop("__metadata__", None)
    for name, e in header.items():
        if not name.startswith("vision_tower.") or name.endswith((".scales", ".biases")):
            continue
        begin, end = e["data_offsets"]
        data, shape = raw[8 + n + begin : 8 + n + end], e["shape"]
        if e["dtype"] == "U32":
            values = np.ascontiguousarray(source.values(name), dtype="<f4")
            e = {"dtype": "F32"}
            data, shape = values.tobytes(), list(values.shape)
        if name.endswith("patch_embed.proj.weight") and len(shape) == 5:
            words = np.frombuffer(data, dtype={2: "<u2", 4: "<u4"}[SIZES[e["dtype"]]]).reshape(shape)
            words = np.ascontiguousarray(words.transpose(0, 4, 1, 2, 3))
            data, shape = words.tobytes(), list(words.shape)
        out[published + name[len("vision_tower."):]] = {
            "dtype": e["dtype"], "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
text = json.dumps(out).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(f"{dst}/model.safetensors", "wb") as w:
    w.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))
config.pop("quantization", None)
config.pop("quantization_config", None)
json.dump(config, open(f"{dst}/config.json", "w"), indent=2)
