"""Multiplies, in place, every BF16 tensor of a safetensors file whose name ends with one of the given
suffixes by 2^K (K may be negative). A power of two changes only the exponent, so every value stays exact
in BF16 (the fixtures' values are far from BF16's range limits; a result that would leave the normal
range is an error). Used to make a tiny fixture's attention sharp, so a forward-pass test depends on its
rope and score scaling rather than on a near-uniform softmax.

Usage: bf16_pow2_scale.py FILE.safetensors SUFFIX=K...
"""
import json
import struct
import sys

import numpy as np

path, rules = sys.argv[1], [a.rsplit("=", 1) for a in sys.argv[2:]]
with open(path, "r+b") as f:
    (length,) = struct.unpack("<Q", f.read(8))
    header = json.loads(f.read(length))
    base = 8 + length
    done = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        k = next((int(v) for s, v in rules if name.endswith(s)), None)
        if k is None:
            continue
        if entry["dtype"] != "BF16":
            raise SystemExit(f"{name}: {entry['dtype']}, expected BF16")
        start, end = entry["data_offsets"]
        f.seek(base + start)
        bits = np.frombuffer(f.read(end - start), dtype="<u2")
        values = (bits.astype(np.uint32) << 16).view(np.float32)
        scaled = values * np.float32(2.0**k)
        nonzero = values != 0
        if not np.all(np.isfinite(scaled)) or np.any(np.abs(scaled[nonzero]) < np.float32(2.0**-126)):
            raise SystemExit(f"{name}: 2^{k} leaves BF16's normal range")
        out = (scaled.view(np.uint32) >> 16).astype("<u2")
        assert np.array_equal((out.astype(np.uint32) << 16).view(np.float32), scaled)
        f.seek(base + start)
        f.write(out.tobytes())
        done += 1
print(f"  {path}: {done} tensors scaled by powers of two")
