"""An EmbeddingGemma forward pass of the source checkpoint in numpy, the reference for llama.cpp's embeddings of
rebox's gemma-embedding GGUF: nothing here reads the GGUF or shares code with rebox.

The weights are the source values as source_values.Source reads them from the safetensors alone (the main
model.safetensors, and each Dense folder's). Arithmetic is float64. Mirrors transformers'
models/gemma3/modeling_gemma3.py (Gemma3TextModel, as EmbeddingGemma's config builds it) by function:
  Gemma3TextScaledWordEmbedding  embed_tokens[ids] * sqrt(hidden_size)
  Gemma3RMSNorm                  x / sqrt(mean(x^2) + eps) * (1 + weight)
  Gemma3DecoderLayer.forward     h = x + post_attention_layernorm(attn(input_layernorm(x)));
                                 out = h + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(h)))
  Gemma3Attention.forward        q / k / v projections per head (k, v shared by num_attention_heads /
                                 num_key_value_heads heads), q_norm / k_norm (Gemma3RMSNorm over head_dim),
                                 rotary (rotate_half; theta rope_theta on full_attention layers,
                                 rope_local_base_freq on sliding_attention layers), softmax(q k^T *
                                 query_pre_attn_scalar^-0.5 + mask) v, o_proj
  masks                          use_bidirectional_attention: Gemma3TextConfig turns sliding_window into
                                 sliding_window // 2 + 1 and the sliding layers see kv within
                                 |q - kv| < that (sliding_window_bidirectional_mask_function); full layers
                                 see every token
  Gemma3MLP.forward              down_proj(gelu_tanh(gate_proj(x)) * up_proj(x))  (gelu_pytorch_tanh)
  Gemma3TextModel.forward        the layers, then norm
then sentence-transformers' modules in modules.json order: Pooling (mean over the tokens), each Dense
(linear.weight, no bias, identity activation) and Normalize. A Dense module whose folder is absent is
mlx-embeddings' layout: its gemma3_text Model applies `dense[k]`, saved in the model's file as dense.k.weight
(k the module's rank among the Dense modules), after the mean pooling. Quantized weights (mcq-v1, MLX) are
taken at their dequantized values (source_values.py, from each format's definition).

Usage: egemma_forward.py MODEL_DIR --embed IDS.json VECS.json [--min-cos 0.9999]
Exit 1 when a cosine is below the bound.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

from hf_forward import cosine
from source_values import Source, float_values, read_safetensors


class EmbeddingGemma:
    def __init__(self, model_dir):
        self.src = Source(model_dir)
        cfg = self.cfg = self.src.config
        self.layers, self.heads, self.kv_heads = cfg["num_hidden_layers"], cfg["num_attention_heads"], \
            cfg["num_key_value_heads"]
        self.head_dim, self.eps = cfg["head_dim"], float(cfg["rms_norm_eps"])
        self.window = cfg["sliding_window"] // 2 + 1 if cfg.get("use_bidirectional_attention") else \
            cfg["sliding_window"]
        self.layer_types = cfg["layer_types"]
        self.scale = cfg["query_pre_attn_scalar"] ** -0.5
        self.cache = {}
        self.names = set(self.src.names())
        self.modules = json.load(open(os.path.join(model_dir, "modules.json")))
        self.model_dir = model_dir

    def w(self, name):  # HF's Gemma3TextModel names; mlx-lm / mlx-embeddings files keep them under "model."
        if name not in self.cache:
            stored = name if name in self.names else "model." + name
            self.cache[name] = self.src.values(stored).astype(np.float64)
        return self.cache[name]

    def linear(self, x, name):
        return x @ self.w(name + ".weight").T

    def rms_norm(self, x, name):
        return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + self.eps) * (1.0 + self.w(name + ".weight"))

    def rotary(self, x, theta):  # x [heads, T, d]
        t, d = x.shape[1], x.shape[2]
        inv_freq = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
        freqs = np.outer(np.arange(t, dtype=np.float64), inv_freq)
        emb = np.concatenate([freqs, freqs], axis=-1)
        cos, sin = np.cos(emb), np.sin(emb)
        rotated = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
        return x * cos + rotated * sin

    def attention(self, x, i):
        p = f"layers.{i}.self_attn."
        t = x.shape[0]
        d = self.head_dim
        q = self.linear(x, p + "q_proj").reshape(t, self.heads, d)
        k = self.linear(x, p + "k_proj").reshape(t, self.kv_heads, d)
        v = self.linear(x, p + "v_proj").reshape(t, self.kv_heads, d)
        q, k = self.rms_norm(q, p + "q_norm"), self.rms_norm(k, p + "k_norm")
        sliding = self.layer_types[i] == "sliding_attention"
        theta = float(self.cfg["rope_local_base_freq"] if sliding else self.cfg["rope_theta"])
        q = self.rotary(q.transpose(1, 0, 2), theta)
        k = self.rotary(k.transpose(1, 0, 2), theta)
        v = v.transpose(1, 0, 2)
        group = self.heads // self.kv_heads
        k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)
        scores = q @ k.transpose(0, 2, 1) * self.scale
        if sliding:
            pos = np.arange(t)
            scores = np.where(np.abs(pos[:, None] - pos[None, :]) < self.window, scores, -np.inf)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        ctx = ((scores / scores.sum(axis=-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(t, self.heads * d)
        return self.linear(ctx, p + "o_proj")

    def mlp(self, x, i):
        p = f"layers.{i}.mlp."
        gate = self.linear(x, p + "gate_proj")
        gelu = 0.5 * gate * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (gate + 0.044715 * gate ** 3)))
        return self.linear(gelu * self.linear(x, p + "up_proj"), p + "down_proj")

    def hidden(self, ids):
        x = self.w("embed_tokens.weight")[np.asarray(ids)] * math.sqrt(self.cfg["hidden_size"])
        for i in range(self.layers):
            p = f"layers.{i}."
            h = x + self.rms_norm(self.attention(self.rms_norm(x, p + "input_layernorm"), i),
                                  p + "post_attention_layernorm")
            x = h + self.rms_norm(self.mlp(self.rms_norm(h, p + "pre_feedforward_layernorm"), i),
                                  p + "post_feedforward_layernorm")
        return self.rms_norm(x, "norm")

    def embed(self, ids):  # SentenceTransformer.encode: the modules in order
        vector, dense_rank = None, 0
        for module in self.modules:
            kind, path = module["type"], module["path"]
            if kind.endswith("Transformer"):
                states = self.hidden(ids)
            elif kind.endswith("Pooling"):
                pooling = json.load(open(os.path.join(self.model_dir, path, "config.json")))
                if not pooling.get("pooling_mode_mean_tokens"):
                    raise SystemExit(f"egemma_forward.py: {path}: only mean pooling is written here")
                vector = states.mean(axis=0)
            elif kind.endswith("Dense"):
                folder_file = os.path.join(self.model_dir, path, "model.safetensors")
                if os.path.exists(folder_file):
                    tensors, _ = read_safetensors(folder_file)
                    t = tensors["linear.weight"]
                    weight = float_values(t).reshape(t.shape).astype(np.float64)
                else:
                    weight = self.w(f"dense.{dense_rank}.weight")
                dense_rank += 1
                vector = weight @ vector
            elif kind.endswith("Normalize"):
                vector = vector / np.linalg.norm(vector)
        return vector


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--embed", nargs=2, metavar=("IDS", "VECS"), required=True)
    ap.add_argument("--min-cos", type=float, default=0.9999)
    args = ap.parse_args()
    model = EmbeddingGemma(args.model_dir)
    name = os.path.basename(os.path.normpath(args.model_dir))
    id_lists = json.load(open(args.embed[0]))
    got = json.load(open(args.embed[1]))
    cosines = [cosine(model.embed(ids), np.asarray(vector, dtype=np.float64))
               for ids, vector in zip(id_lists, got["vectors"])]
    worst = min(cosines)
    longest = max(len(ids) for ids in id_lists)
    print(f"  {name}: EmbeddingGemma forward ({model.layers} layers, window {model.cfg['sliding_window']}, "
          f"lists up to {longest} tokens, mean + Dense + Dense + Normalize) vs llama.cpp on {len(cosines)} token "
          f"lists: min cos {worst:.7f} = 1 - {1 - worst:.1e}; need >= {args.min_cos}")
    if len(cosines) != len(id_lists) or not worst >= args.min_cos:
        print(f"FAIL: egemma_forward: {got['label']}: min cosine {worst:.7f} below {args.min_cos}")
        sys.exit(1)


if __name__ == "__main__":
    main()
