"""A nomic-bert forward pass of the source checkpoint in numpy, the reference for llama.cpp's embeddings of
rebox's nomic-bert GGUF: nothing here reads the GGUF or shares code with rebox.

The weights are the source values as source_values.Source computes them from the safetensors alone (float,
or MLX dequantized). Arithmetic is float64. Mirrors nomic-ai's modeling_hf_nomic_bert (NomicBertModel, the
remote code nomic-embed-text v1 / v1.5 load), by function:
  NomicBertEmbeddings.forward  word_embeddings[ids] + token_type_embeddings[0] (no position table: rotary)
  NomicBertModel.forward       emb_ln LayerNorm (eps = layer_norm_epsilon), then the blocks (prenorm false)
  NomciBertAttention.forward   Wqkv(x) split as (three, heads, head_dim) -> q | k | v; rotary on q and k,
                               non-interleaved (rotate_half on the two halves of each head), inv_freq =
                               rotary_emb_base^(-2i/head_dim), positions 0..T-1; softmax(q k^T / sqrt(d)) v,
                               no mask; out_proj
  NomicBertBlock.forward       x = norm1(attn(x) + x); x = norm2(mlp(x) + x)
  NomciBertGatedMLP.forward    fc2(fc11(x) * silu(fc12(x)))  (activation_function swiglu)
then sentence-transformers' Pooling (modules.json + 1_Pooling/config.json), unnormalized.

Usage: nomic_forward.py MODEL_DIR --embed IDS.json VECS.json [--min-cos 0.9999]
Exit 1 when a cosine is below the bound.
"""
import argparse
import math
import os
import sys

import numpy as np

from hf_forward import pooled_cosines
from source_values import Source


class NomicBert:
    def __init__(self, model_dir):
        self.src = Source(model_dir)
        cfg = self.src.config
        self.layers, self.heads = cfg["n_layer"], cfg["n_head"]
        self.eps = float(cfg.get("layer_norm_epsilon", 1e-12))
        self.base = float(cfg["rotary_emb_base"])
        self.cache = {}

    def w(self, name):
        if name not in self.cache:
            self.cache[name] = self.src.values(name).astype(np.float64)
        return self.cache[name]

    def linear(self, x, name):
        return x @ self.w(name + ".weight").T

    def layer_norm(self, x, name):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w(name + ".weight") + self.w(name + ".bias")

    def rotary(self, x):  # x [heads, T, d]
        t, d = x.shape[1], x.shape[2]
        inv_freq = 1.0 / self.base ** (np.arange(0, d, 2, dtype=np.float64) / d)
        freqs = np.outer(np.arange(t, dtype=np.float64), inv_freq)
        cos, sin = np.cos(freqs), np.sin(freqs)
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)

    def hidden(self, ids):
        ids = np.asarray(ids)
        x = self.w("embeddings.word_embeddings.weight")[ids] + self.w("embeddings.token_type_embeddings.weight")[0]
        x = self.layer_norm(x, "emb_ln")
        for i in range(self.layers):
            p = f"encoder.layers.{i}."
            t, e = x.shape
            d = e // self.heads
            qkv = self.linear(x, p + "attn.Wqkv").reshape(t, 3, self.heads, d)
            q, k, v = (qkv[:, j].transpose(1, 0, 2) for j in range(3))
            q, k = self.rotary(q), self.rotary(k)
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            ctx = ((scores / scores.sum(axis=-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(t, e)
            x = self.layer_norm(self.linear(ctx, p + "attn.out_proj") + x, p + "norm1")
            up, gate = self.linear(x, p + "mlp.fc11"), self.linear(x, p + "mlp.fc12")
            x = self.layer_norm(self.linear(up * (gate / (1 + np.exp(-gate))), p + "mlp.fc2") + x, p + "norm2")
        return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--embed", nargs=2, metavar=("IDS", "VECS"), required=True)
    ap.add_argument("--min-cos", type=float, default=0.9999)
    args = ap.parse_args()
    model = NomicBert(args.model_dir)
    name = os.path.basename(os.path.normpath(args.model_dir))
    pooling, cosines, label, lists = pooled_cosines(model.hidden, args.model_dir, *args.embed)
    worst = min(cosines)
    print(f"  {name}: nomic-bert forward ({model.layers} layers, pooling {pooling}) vs llama.cpp on "
          f"{len(cosines)} token lists: min cos {worst:.7f} = 1 - {1 - worst:.1e}; need >= {args.min_cos}")
    if len(cosines) != lists or not worst >= args.min_cos:
        print(f"FAIL: nomic_forward: {label}: min cosine {worst:.7f} below {args.min_cos}")
        sys.exit(1)


if __name__ == "__main__":
    main()
