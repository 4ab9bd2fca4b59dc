"""A Hugging Face forward pass of the source checkpoint in numpy, the reference for llama.cpp's embeddings
of rebox's GGUF: nothing here reads the GGUF or shares code with rebox, so a wrong KV, a wrong
permutation or a wrong tensor in rebox's file shows up as a cosine below the bound.

The weights are the source values as source_values.Source computes them from the safetensors alone
(float: widened exactly; mcq-v1 / MLX / GPTQ / AWQ / compressed-tensors: dequantized from the format's own
documentation, docs/mcq-v1.md and docs/formats.md). Arithmetic is float64 throughout, so the reference
carries no rounding of its own worth speaking of.

Mirrors transformers' modeling code, by function:
  Qwen3RMSNorm / LlamaRMSNorm.forward    x * rsqrt(mean(x^2) + eps) * weight (eps = config rms_norm_eps)
  Qwen3RotaryEmbedding / LlamaRotaryEmbedding (rope_init_fn = _compute_default_rope_parameters, or
  _compute_llama3_parameters for rope_scaling.rope_type "llama3")
                                         inv_freq[i] = rope_theta^(-2i/D); emb = cat(freqs, freqs)
  rotate_half, apply_rotary_pos_emb      q*cos + rotate_half(q)*sin, rotate_half(x) = cat(-x2, x1):
                                         NEOX-style halves on the unpermuted HF q_proj/k_proj rows
  Qwen3Attention.forward                 q_norm/k_norm (per-head RMSNorm over head_dim) before the rope;
                                         Qwen2Attention: q/k/v biases, no q/k norm; LlamaAttention:
                                         biases when attention_bias
  repeat_kv, eager_attention_forward     GQA: each kv head serves num_attention_heads / num_key_value_heads
                                         query heads; softmax(q k^T * head_dim^-0.5 + causal mask) v
  Qwen3MLP / LlamaMLP.forward            down_proj(silu(gate_proj(x)) * up_proj(x))
  Qwen3DecoderLayer.forward              x += attn(input_layernorm(x)); x += mlp(post_attention_layernorm(x))
  Qwen3Model.forward                     embed_tokens, the layers, norm -> last_hidden_state
then sentence-transformers' Pooling (modules.json + 1_Pooling/config.json: lasttoken / mean / cls) and,
when modules.json lists sentence_transformers.models.Normalize, the L2 normalization; without a
Normalize module the pooled vector is returned as is (as node-llama-cpp returns llama.cpp's pooled
vector unnormalized).

Usage: hf_forward.py MODEL_DIR IDS.json [--pass VECS.json[=MIN_COS] ...] [--kernel-pass VECS.json[=MIN_COS] ...]
                    [--fail VECS.json[=MIN_COS] ...] [--min-cos 0.9999]
  IDS.json: a list of token id lists (already tokenized, special tokens included).
  VECS.json: {"label": ..., "vectors": [[...], ...]} (one per id list, from forward_embed.mjs).
  --pass: every cosine(reference, vector) must be >= MIN_COS (default --min-cos); --fail: the minimum
  must be below MIN_COS (a deliberately broken file); --kernel-pass: as --pass, against the same forward
  pass with each linear layer's input rounded as llama.cpp's CPU product rounds it for the weight's type
  in rebox's default file (llama_cpu_rounding.py; mcq-v1 / MLX -> Q4_1/Q5_1 and BF16 sources only), which lets
  those files meet a tight bound. Prints the cosines; exit 1 on any failure.
"""
import argparse
import json
import os
import sys

import numpy as np

import llama_cpu_rounding as rounding
from source_values import Source, float_values

SUPPORTED = ("qwen3", "qwen2", "llama", "mistral")


class HfModel:
    def __init__(self, model_dir):
        self.src = Source(model_dir)
        cfg = self.src.config
        self.cfg = cfg
        self.model_type = cfg["model_type"]
        if self.model_type not in SUPPORTED:
            raise SystemExit(f"hf_forward.py: {model_dir}: model_type {self.model_type} not supported {SUPPORTED}")
        self.n_layers = cfg["num_hidden_layers"]
        self.n_heads = cfg["num_attention_heads"]
        self.n_kv_heads = cfg.get("num_key_value_heads") or self.n_heads
        self.head_dim = cfg.get("head_dim") or cfg["hidden_size"] // self.n_heads
        self.eps = float(cfg["rms_norm_eps"])
        self.cache = {}
        self.kernel_rounding = False  # set: linear() rounds x as llama.cpp's CPU product does (--kernel-pass)
        self.names = set(self.src.names())
        self.pooling, self.normalize = sentence_transformers_pooling(model_dir)

    def stored_name(self, name):
        """A source tensor's stored name from its HF name without the `model.` prefix (fixtures use both)."""
        return next((n for n in ("model." + name, name) if n in self.names), None)

    def weight(self, name, required=True):
        if name not in self.cache:
            stored = self.stored_name(name)
            self.cache[name] = self.src.values(stored).astype(np.float64) if stored else None
        if required and self.cache[name] is None:
            raise SystemExit(f"hf_forward.py: the checkpoint has no {name} (nor model.{name})")
        return self.cache[name]

    def linear(self, x, name):  # nn.Linear: x W^T + b
        w = self.weight(name + ".weight")
        y = self.kernel_product(x, name + ".weight", w) if self.kernel_rounding else x @ w.T
        bias = self.weight(name + ".bias", required=False)
        return y + bias if bias is not None else y

    def kernel_product(self, x, name, w):
        """x W^T with the rounding llama.cpp's CPU product adds to x for the weight's type in rebox's default
        file (llama_cpu_rounding.py): mcq-v1 and MLX tensors become Q4_1/Q5_1 (m = the group's min or bias,
        as docs/formats.md says), BF16 float tensors stay BF16."""
        stored = self.stored_name(name)
        if stored in self.src.mcq:
            meta = self.src.mcq[stored]
            rows, cols = meta["shape"]
            if meta["group"] % rounding.BLOCK:
                raise SystemExit(f"hf_forward.py: {stored}: group {meta['group']} is not whole Q4_1 blocks")
            mins = np.frombuffer(self.src.tensors[stored + ".mins"].bytes.tobytes(), dtype="<f2")
            first_of_block = np.arange(0, rows * cols, rounding.BLOCK)
            block_min = mins[first_of_block // meta["group"]].astype(np.float64).reshape(rows, -1)
            return rounding.q8_1_product(x, w, block_min)
        if self.src.format == "mlx" and self.src.is_quantized(stored):  # Q4_1/Q5_1 m = the MLX bias
            _, group = self.src._mlx_params(stored)
            biases = self.src.tensors[stored[: -len(".weight")] + ".biases"]
            per_group = float_values(biases).astype(np.float64).reshape(biases.shape)
            first_of_block = np.arange(0, w.shape[1], rounding.BLOCK)
            return rounding.q8_1_product(x, w, per_group[:, first_of_block // group])
        if self.src.format == "float" and self.src.tensors[stored].dtype == "BF16":
            return rounding.bf16_round(x) @ w.T
        raise SystemExit(f"hf_forward.py: {stored}: llama.cpp's rounding is not modelled for this source format")

    def rms_norm(self, x, name):  # Qwen3RMSNorm.forward
        variance = np.mean(x * x, axis=-1, keepdims=True)
        return x / np.sqrt(variance + self.eps) * self.weight(name + ".weight")

    def inv_freq(self):
        return rope_inv_freq(self.cfg, self.head_dim)

    def rope(self, x):  # apply_rotary_pos_emb on x [T, heads, D] with rotate_half
        T, D = x.shape[0], self.head_dim
        freqs = np.arange(T, dtype=np.float64)[:, None] * self.inv_freq()[None, :]
        emb = np.concatenate([freqs, freqs], axis=-1)[:, None, :]
        rotated = np.concatenate([-x[..., D // 2 :], x[..., : D // 2]], axis=-1)  # rotate_half
        return x * np.cos(emb) + rotated * np.sin(emb)

    def attention(self, x, layer):  # Qwen3Attention / Qwen2Attention / LlamaAttention.forward
        T, D = x.shape[0], self.head_dim
        p = f"layers.{layer}.self_attn."
        q = self.linear(x, p + "q_proj").reshape(T, self.n_heads, D)
        k = self.linear(x, p + "k_proj").reshape(T, self.n_kv_heads, D)
        v = self.linear(x, p + "v_proj").reshape(T, self.n_kv_heads, D)
        if self.model_type == "qwen3":  # per-head RMSNorm over head_dim, before the rope
            q, k = self.rms_norm(q, p + "q_norm"), self.rms_norm(k, p + "k_norm")
        q, k = self.rope(q), self.rope(k)
        group = self.n_heads // self.n_kv_heads  # repeat_kv
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        scores = np.einsum("thd,shd->hts", q, k) * D**-0.5  # eager_attention_forward
        scores = np.where(np.tril(np.ones((T, T), dtype=bool))[None], scores, -np.inf)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        out = np.einsum("hts,shd->thd", probs, v).reshape(T, self.n_heads * D)
        return self.linear(out, p + "o_proj")

    def mlp(self, x, layer):  # Qwen3MLP.forward, act_fn silu
        p = f"layers.{layer}.mlp."
        gate = self.linear(x, p + "gate_proj")
        return self.linear(gate / (1 + np.exp(-gate)) * self.linear(x, p + "up_proj"), p + "down_proj")

    def last_hidden_state(self, ids):  # Qwen3Model.forward
        x = self.weight("embed_tokens.weight")[np.asarray(ids)]
        for layer in range(self.n_layers):
            x = x + self.attention(self.rms_norm(x, f"layers.{layer}.input_layernorm"), layer)
            x = x + self.mlp(self.rms_norm(x, f"layers.{layer}.post_attention_layernorm"), layer)
        return self.rms_norm(x, "norm")

    def embed(self, ids):  # SentenceTransformer.encode: Transformer -> Pooling [-> Normalize]
        h = self.last_hidden_state(ids)
        pooled = {"lasttoken": h[-1], "mean": h.mean(axis=0), "cls": h[0]}[self.pooling]
        return pooled / np.linalg.norm(pooled) if self.normalize else pooled


def rope_inv_freq(cfg, head_dim):
    """LlamaRotaryEmbedding's inv_freq: _compute_default_rope_parameters, or _compute_llama3_parameters for
    rope_scaling.rope_type "llama3" (its attention_factor is 1)."""
    theta = float(cfg.get("rope_theta", 10000.0))
    inv = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    scaling = cfg.get("rope_scaling") or {}
    kind = scaling.get("rope_type") or scaling.get("type")
    if kind == "llama3":
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old_context = scaling["original_max_position_embeddings"]
        wavelen = 2 * np.pi / inv
        scaled = np.where(wavelen > old_context / low, inv / factor, inv)
        smooth = (old_context / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < old_context / high) & ~(wavelen > old_context / low)
        inv = np.where(medium, smoothed, scaled)
    elif kind not in (None, "default"):
        raise SystemExit(f"hf_forward.py: rope_scaling {kind} not supported")
    return inv


def sentence_transformers_pooling(model_dir):
    """(pooling mode, normalize) as sentence-transformers would build them from modules.json."""
    path = os.path.join(model_dir, "modules.json")
    if not os.path.exists(path):
        raise SystemExit(f"hf_forward.py: {model_dir}: no modules.json, so no sentence-transformers pooling")
    modules = json.load(open(path))
    pooling_dirs = [m["path"] for m in modules if m["type"].endswith("models.Pooling")]
    normalize = any(m["type"].endswith("models.Normalize") for m in modules)
    pooling = json.load(open(os.path.join(model_dir, pooling_dirs[0], "config.json")))
    for mode, key in (("lasttoken", "pooling_mode_lasttoken"), ("mean", "pooling_mode_mean_tokens"),
                      ("cls", "pooling_mode_cls_token")):
        if pooling.get(key):
            return mode, normalize
    raise SystemExit(f"hf_forward.py: {model_dir}: pooling mode in {pooling_dirs[0]}/config.json not supported")


def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def pooled_cosines(hidden, model_dir, ids_path, vectors_path):
    """The cosines between llama.cpp's vectors (VECS.json from bert_embed.mjs) and hidden(ids) pooled as the
    checkpoint's sentence-transformers files say (cls / mean, then Normalize if listed), per token list.
    Returns (pooling, cosines, the file's label, the number of token lists)."""
    pooling, normalize = sentence_transformers_pooling(model_dir)
    id_lists = json.load(open(ids_path))
    got = json.load(open(vectors_path))
    cosines = []
    for ids, vector in zip(id_lists, got["vectors"]):
        h = hidden(ids)
        ref = {"cls": h[0], "mean": h.mean(axis=0)}[pooling]
        if normalize:
            ref = ref / np.linalg.norm(ref)
        cosines.append(cosine(ref, np.asarray(vector, dtype=np.float64)))
    return pooling, cosines, got["label"], len(id_lists)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("ids")
    ap.add_argument("--pass", dest="must_pass", action="append", default=[])
    ap.add_argument("--kernel-pass", action="append", default=[])
    ap.add_argument("--fail", dest="must_fail", action="append", default=[])
    ap.add_argument("--min-cos", type=float, default=0.9999)
    args = ap.parse_args()

    model = HfModel(args.model_dir)
    id_lists = json.load(open(args.ids))
    name = os.path.basename(os.path.normpath(args.model_dir))
    print(f"  {name}: HF forward pass ({model.model_type}, {model.src.format}, {model.n_layers} layers, "
          f"{model.n_heads}/{model.n_kv_heads} heads of {model.head_dim}, pooling {model.pooling}"
          f"{', normalized' if model.normalize else ''}) on {len(id_lists)} token lists")
    references = {}

    def reference(kernel_rounding):
        if kernel_rounding not in references:
            model.kernel_rounding = kernel_rounding
            references[kernel_rounding] = [model.embed(ids) for ids in id_lists]
        return references[kernel_rounding]

    bound = lambda spec: (spec.partition("=")[0], float(spec.partition("=")[2] or args.min_cos))
    checks = [(*bound(p), True, False) for p in args.must_pass]
    checks += [(*bound(p), True, True) for p in args.kernel_pass]
    checks += [(*bound(p), False, False) for p in args.must_fail]
    problems = []
    for path, min_cos, must_pass, kernel_rounding in checks:
        got = json.load(open(path))
        vectors = [np.asarray(v, dtype=np.float64) for v in got["vectors"]]
        expected = reference(kernel_rounding)
        if len(vectors) != len(expected):
            problems.append(f"{path}: {len(vectors)} vectors for {len(expected)} token lists")
            continue
        cosines = np.array([cosine(r, v) for r, v in zip(expected, vectors)])
        norm_ratio = np.array([np.linalg.norm(v) / np.linalg.norm(r) for r, v in zip(expected, vectors)])
        relative_error = max(np.linalg.norm(v - r) / np.linalg.norm(r) for r, v in zip(expected, vectors))
        worst = int(np.argmin(cosines))
        against = "HF with llama.cpp's CPU rounding of x" if kernel_rounding else "HF"
        print(f"  {got['label']}: cos({against}, llama.cpp) min {cosines.min():.7f} = 1 - {1 - cosines.min():.1e} "
              f"(list {worst + 1}, {len(id_lists[worst])} tokens), median 1 - {1 - np.median(cosines):.1e}; "
              f"|llama.cpp| / |HF| {norm_ratio.min():.5f}..{norm_ratio.max():.5f}, "
              f"|llama.cpp - HF| / |HF| <= {relative_error:.1e}; "
              f"{'need >=' if must_pass else 'must break <'} {min_cos}")
        if must_pass and not cosines.min() >= min_cos:
            problems.append(f"{got['label']}: min cosine {cosines.min():.7f} at token list {worst + 1} is below "
                            f"{min_cos}: llama.cpp computes something else than the HF model")
        if not must_pass and cosines.min() >= min_cos:
            problems.append(f"{got['label']}: a deliberately broken file still reaches cosine "
                            f"{cosines.min():.7f} >= {min_cos}: the check cannot see this defect")
    if problems:
        print("FAIL: HF forward pass vs llama.cpp:")
        for p in problems:
            print("  " + p)
        sys.exit(1)


if __name__ == "__main__":
    main()
