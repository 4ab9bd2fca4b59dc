"""A ModernBERT forward pass of the source checkpoint in numpy, the reference for llama.cpp's embeddings of
rebox's modern-bert GGUF: nothing here reads the GGUF or shares code with rebox.

The weights are the source values as source_values.Source computes them from the safetensors alone (float,
or MLX dequantized). Arithmetic is float64. Mirrors transformers' modeling_modernbert (ModernBertModel,
eager attention, one unpadded sequence), by class:
  ModernBertEmbeddings      norm(tok_embeddings[ids]) (LayerNorm without bias, eps = norm_eps)
  ModernBertEncoderLayer    x = x + attn(attn_norm(x)) (layer 0: attn_norm is an Identity);
                            x = x + mlp(mlp_norm(x))
  ModernBertAttention       Wqkv(x) viewed as (3, heads, head_dim) -> q | k | v; rotary (rotate_half on the two
                            halves of each head), inv_freq = theta^(-2i/head_dim), theta = global_rope_theta on
                            layers with layer_id % global_attn_every_n_layers == 0, else local_rope_theta;
                            softmax(q k^T / sqrt(head_dim)) v where local layers see only the keys with
                            |i - j| <= local_attention // 2 (the sliding-window mask); Wo
  ModernBertMLP             input, gate = Wi(x).chunk(2); Wo(act(input) * gate), act = ACT2FN[hidden_activation]
                            ("gelu": the exact erf GELU; "silu")
  ModernBertModel           final_norm
then sentence-transformers' Pooling (modules.json + 1_Pooling/config.json), unnormalized; or
  ModernBertForSequenceClassification  (classifier_pooling "mean") the mean of the hidden states, then
                            ModernBertPredictionHead norm(act(dense(x))) (act = ACT2FN[classifier_activation],
                            the exact GELU), then classifier; node-llama-cpp reports sigmoid(logit)

Usage: modernbert_forward.py MODEL_DIR --embed IDS.json VECS.json [--min-cos 0.9999]
       modernbert_forward.py MODEL_DIR --rank RANK.json [--max-diff 1e-3] [--min-logit 1] [--min-spread 0.1]
Exit 1 when a cosine is below the bound, a score differs by more than --max-diff, or the reference's scores
are too flat for the comparison to mean anything (largest |logit| below --min-logit, max - min of the
sigmoid scores below --min-spread).
"""
import argparse
import json
import math
import os
import sys

import numpy as np

from hf_forward import pooled_cosines
from source_values import Source

ERF = np.vectorize(math.erf)


class ModernBert:
    def __init__(self, model_dir):
        self.src = Source(model_dir)
        cfg = self.src.config
        self.layers, self.heads = cfg["num_hidden_layers"], cfg["num_attention_heads"]
        self.eps = float(cfg["norm_eps"])
        self.every = cfg.get("global_attn_every_n_layers", 1)
        self.window = cfg["local_attention"]
        self.theta_global = float(cfg.get("global_rope_theta", 160000.0))
        local = cfg.get("local_rope_theta")
        self.theta_local = float(local) if local is not None else self.theta_global
        self.act = cfg.get("hidden_activation", "gelu")
        self.prefix = "model." if any(n.startswith("model.") for n in self.src.names()) else ""
        self.cache = {}

    def w(self, name, prefix=None):
        name = (self.prefix if prefix is None else prefix) + name
        if name not in self.cache:
            self.cache[name] = self.src.values(name).astype(np.float64)
        return self.cache[name]

    def logit(self, ids):  # ModernBertForSequenceClassification, classifier_pooling "mean"
        x = self.hidden(ids).mean(axis=0)
        x = self.activation(x @ self.w("head.dense.weight", "").T)
        mean, var = x.mean(), ((x - x.mean()) ** 2).mean()
        x = (x - mean) / np.sqrt(var + self.eps) * self.w("head.norm.weight", "")
        return float((x @ self.w("classifier.weight", "").T + self.w("classifier.bias", ""))[0])

    def linear(self, x, name):
        return x @ self.w(name + ".weight").T

    def layer_norm(self, x, name):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w(name + ".weight")

    @staticmethod
    def rotary(x, theta):  # x [heads, T, d]
        t, d = x.shape[1], x.shape[2]
        inv_freq = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
        freqs = np.outer(np.arange(t, dtype=np.float64), inv_freq)
        cos, sin = np.cos(freqs), np.sin(freqs)
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)

    def activation(self, x):
        if self.act == "gelu":
            return 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0)))
        if self.act == "silu":
            return x / (1.0 + np.exp(-x))
        raise SystemExit(f"modernbert_forward: hidden_activation {self.act!r} not written here")

    def hidden(self, ids):
        ids = np.asarray(ids)
        x = self.layer_norm(self.w("embeddings.tok_embeddings.weight")[ids], "embeddings.norm")
        t, e = x.shape
        d = e // self.heads
        pos = np.arange(t)
        window = np.abs(pos[:, None] - pos[None, :]) <= self.window // 2
        for i in range(self.layers):
            p = f"layers.{i}."
            is_global = i % self.every == 0
            h = x if i == 0 else self.layer_norm(x, p + "attn_norm")
            qkv = self.linear(h, p + "attn.Wqkv").reshape(t, 3, self.heads, d)
            q, k, v = (qkv[:, j].transpose(1, 0, 2) for j in range(3))
            theta = self.theta_global if is_global else self.theta_local
            q, k = self.rotary(q, theta), self.rotary(k, theta)
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            if not is_global:
                scores = np.where(window[None], scores, -np.inf)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            ctx = ((scores / scores.sum(axis=-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(t, e)
            x = x + self.linear(ctx, p + "attn.Wo")
            up = self.linear(self.layer_norm(x, p + "mlp_norm"), p + "mlp.Wi")
            inp, gate = up[:, : up.shape[1] // 2], up[:, up.shape[1] // 2:]
            x = x + self.linear(self.activation(inp) * gate, p + "mlp.Wo")
        return self.layer_norm(x, "final_norm")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--embed", nargs=2, metavar=("IDS", "VECS"))
    ap.add_argument("--min-cos", type=float, default=0.9999)
    ap.add_argument("--rank")
    ap.add_argument("--max-diff", type=float, default=1e-3)
    ap.add_argument("--min-logit", type=float, default=0.0, help="--rank: the largest |logit| at least this")
    ap.add_argument("--min-spread", type=float, default=0.0,
                    help="--rank: max - min of the reference scores at least this (no vacuous pass on flat scores)")
    args = ap.parse_args()
    model = ModernBert(args.model_dir)
    name = os.path.basename(os.path.normpath(args.model_dir))
    if args.rank:
        got = json.load(open(args.rank))
        logits = [model.logit(ids) for ids in got["inputs"]]
        want = [1 / (1 + math.exp(-logit)) for logit in logits]
        diffs = [abs(w - score) for w, score in zip(want, got["scores"])]
        spread = max(want) - min(want) if want else 0.0
        print(f"  {name}: ModernBERT reranker scores of {len(diffs)} pairs (logits "
              f"{min(logits):+.2f}..{max(logits):+.2f}, scores {min(want):.3f}..{max(want):.3f}), "
              f"max |HF - llama.cpp| {max(diffs):.1e}; need <= {args.max_diff}")
        if not diffs or len(diffs) != len(got["inputs"]) or not max(diffs) <= args.max_diff:
            print(f"FAIL: modernbert_forward: {got['label']}: a score differs by {max(diffs):.1e} > {args.max_diff}")
            sys.exit(1)
        if not max(abs(x) for x in logits) >= args.min_logit or not spread >= args.min_spread:
            print(f"FAIL: modernbert_forward: {got['label']}: scores too flat to test (largest |logit| "
                  f"{max(abs(x) for x in logits):.2f}, need >= {args.min_logit}; score spread {spread:.3f}, "
                  f"need >= {args.min_spread})")
            sys.exit(1)
        return
    pooling, cosines, label, lists = pooled_cosines(model.hidden, args.model_dir, *args.embed)
    worst = min(cosines)
    longest = max(len(ids) for ids in json.load(open(args.embed[0])))
    print(f"  {name}: ModernBERT forward ({model.layers} layers, window {model.window}, pooling {pooling}) vs "
          f"llama.cpp on {len(cosines)} token lists (up to {longest} tokens): min cos {worst:.7f} = "
          f"1 - {1 - worst:.1e}; need >= {args.min_cos}")
    if len(cosines) != lists or not worst >= args.min_cos:
        print(f"FAIL: modernbert_forward: {label}: min cosine {worst:.7f} below {args.min_cos}")
        sys.exit(1)


if __name__ == "__main__":
    main()
