"""Two image embeddings llama.cpp's mtmd wrote (clip.cpp's MTMD_DEBUG_EMBEDDINGS=PATH dump: int32 n_tokens, int32
n_embd, then n_tokens x n_embd float32) of the same image through two mmproj files: the same shape, and every
token's cosine similarity at least MIN.

Usage: mtmd_embd_cos.py A.emb B.emb MIN   (prints the smallest cosine and whether the values are bit-identical)
"""
import sys

import numpy as np


def read(path):
    raw = open(path, "rb").read()
    n_tokens, n_embd = np.frombuffer(raw[:8], dtype="<i4")
    values = np.frombuffer(raw[8:], dtype="<f4")
    if values.size != n_tokens * n_embd or n_tokens <= 0:
        sys.exit(f"FAIL {path}: {values.size} values for [{n_tokens}, {n_embd}]")
    return values.reshape(n_tokens, n_embd)


a, b, least = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
if a.shape != b.shape:
    sys.exit(f"FAIL: embeddings of shape {a.shape} and {b.shape}")
a64, b64 = a.astype(np.float64), b.astype(np.float64)
cos = (a64 * b64).sum(1) / np.maximum(np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1), 1e-300)
identical = bool((a.view(np.uint32) == b.view(np.uint32)).all())
if not np.isfinite(a).all() or cos.min() < least:
    sys.exit(f"FAIL: smallest token cosine {cos.min():.6f} < {least} (token {int(cos.argmin())}), shape {a.shape}")
print(f"ok: {a.shape[0]} image tokens x {a.shape[1]}, smallest cosine {cos.min():.7f}"
      f"{', bit-identical' if identical else ''}")
