"""Writes the float twin of a GPTQ / AWQ / compressed-tensors checkpoint: every quantized linear as
F32 (q - z) * s computed by source_values.py (numpy, from the packed words alone), every other tensor
byte for byte, config.json without quantization_config, the other side files copied. Converting the
twin with rebox gives a GGUF that `rebox verify` must find identical to the packed checkpoint.
Usage: prequant_twin.py MODEL_DIR TWIN_DIR"""
import json
import os
import shutil
import sys

import numpy as np

from source_values import Source


def main():
    model_dir, twin_dir = sys.argv[1], sys.argv[2]
    src = Source(model_dir)
    if src.pq is None:
        sys.exit(f"{model_dir}: not a GPTQ / AWQ / compressed-tensors checkpoint")
    os.makedirs(twin_dir, exist_ok=True)
    for entry in os.listdir(model_dir):
        path = os.path.join(model_dir, entry)
        if entry == "config.json" or entry.endswith(".safetensors") or entry.endswith(".index.json"):
            continue
        (shutil.copytree if os.path.isdir(path) else shutil.copy)(path, os.path.join(twin_dir, entry))
    config = dict(src.config)
    config.pop("quantization_config")
    json.dump(config, open(os.path.join(twin_dir, "config.json"), "w"), indent=2)

    header, blobs, offset = {}, [], 0
    for name in src.names():
        if src.is_quantized(name):
            values = np.ascontiguousarray(src.values(name), dtype="<f4")
            dtype, shape, data = "F32", list(values.shape), values.tobytes()
        else:
            t = src.tensors[name]
            dtype, shape, data = t.dtype, t.shape, t.bytes.tobytes()
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(twin_dir, "model.safetensors"), "wb") as out:
        out.write(len(text).to_bytes(8, "little"))
        out.write(text)
        for data in blobs:
            out.write(data)
    print(f"{twin_dir}: {sum(src.is_quantized(n) for n in src.names())} quantized tensors as F32")


if __name__ == "__main__":
    main()
