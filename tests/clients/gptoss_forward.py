"""A Hugging Face forward pass of a gpt-oss checkpoint in numpy (float64), the reference for llama.cpp's
output on rebox's GGUF. Nothing here reads the GGUF or shares code with rebox or with the converter
reference: the weights are read from the safetensors (BF16 widened; the MXFP4 experts decoded by the
format's definition, element 2i in the low nibble of byte i of a block, E2M1 * 2^(scale-127)).

Mirrors transformers' models/gpt_oss/modeling_gpt_oss.py, by function:
  GptOssRMSNorm                 x * rsqrt(mean(x^2) + eps) * weight
  GptOssRotaryEmbedding         rope_init_fn "yarn" (_compute_yarn_parameters): inv_freq blended between
                                interpolation (1/(factor*base^(2i/d))) and extrapolation by a linear ramp
                                over the correction range of beta_fast / beta_slow (floor/ceil only when
                                rope_scaling.truncate is true), cos/sin scaled by 0.1*ln(factor) + 1
  _apply_rotary_emb             first/second halves: (x1*cos - x2*sin, x2*cos + x1*sin)
  eager_attention_forward       scores q k^T * head_dim^-0.5, causal mask, and on sliding_attention layers
                                only keys with q - k < sliding_window; the per-head sink logit appended
                                as an extra column, softmax over all, the sink column dropped
  GptOssTopKRouter              logits = x W^T + b; top-k (experts_per_token), softmax over those k
  GptOssExperts                 gate_up = x W^T + b; gate = even, up = odd columns; gate clamped above
                                at swiglu_limit, up to +-swiglu_limit; (up + 1) * gate * sigmoid(1.702
                                gate); down_proj + bias; weighted by the router scores
  GptOssDecoderLayer            x += attn(input_layernorm(x)); x += mlp(post_attention_layernorm(x))
  GptOssModel                   embed_tokens, layers, norm -> last_hidden_state

Usage: gptoss_forward.py MODEL_DIR IDS.json VECS.json [--min-cos 0.999]
  IDS.json: token id lists; VECS.json: {"vectors": [...]}, llama.cpp's last-token embedding of each
  list (forward_embed.mjs). Prints the cosines of the last position's final hidden state; exit 1 when
  any is below --min-cos.
"""
import json
import math
import os
import sys

import numpy as np



def read_safetensors(path):
    """{name: array}: BF16 widened to float32 (the bits shifted up), U8 as stored."""
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    out = {}
    for name, info in json.loads(raw[8:8 + n]).items():
        if name == "__metadata__":
            continue
        data = raw[8 + n + info["data_offsets"][0]:8 + n + info["data_offsets"][1]]
        dtype = {"BF16": np.uint16, "U8": np.uint8, "F32": np.float32}[info["dtype"]]
        a = np.frombuffer(data, dtype)
        if info["dtype"] == "BF16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        out[name] = a.reshape(info["shape"])
    return out

model_dir, ids_path, vecs_path = sys.argv[1:4]
min_cos = float(sys.argv[sys.argv.index("--min-cos") + 1]) if "--min-cos" in sys.argv else 0.999
cfg = json.load(open(os.path.join(model_dir, "config.json")))
W = read_safetensors(os.path.join(model_dir, "model.safetensors"))
E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])


def mxfp4(stem):
    blocks, scales = W[stem + "_blocks"], W[stem + "_scales"]
    codes = np.stack([blocks & 15, blocks >> 4], axis=-1).reshape(*blocks.shape[:-1], 32)
    values = E2M1[codes] * np.exp2(scales.astype(np.float64) - 127)[..., None]
    return values.reshape(*blocks.shape[:2], -1)  # [E, out, in]


def f64(name):
    return W[name].astype(np.float64)


H, NH, NKV, D = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
eps, limit, alpha = cfg["rms_norm_eps"], cfg["swiglu_limit"], 1.702
top_k = cfg.get("num_experts_per_tok", cfg.get("experts_per_token"))


def rms(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def yarn():
    rs, base = cfg["rope_scaling"], cfg["rope_theta"]
    factor, orig = rs["factor"], rs["original_max_position_embeddings"]
    beta_fast, beta_slow = rs.get("beta_fast", 32), rs.get("beta_slow", 1)
    pos_freqs = base ** (np.arange(0, D, 2) / D)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)

    def correction_dim(rot):
        return (D * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if rs.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, D - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(D // 2) - low) / (high - low), 0, 1)
    extrapolation_factor = 1 - ramp
    inv_freq = interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor
    return inv_freq, 0.1 * math.log(factor) + 1.0


INV_FREQ, ATTN_SCALE = yarn()


def rope(x, n):  # x [heads, n, D]
    freqs = np.arange(n)[:, None] * INV_FREQ[None, :]
    cos, sin = np.cos(freqs) * ATTN_SCALE, np.sin(freqs) * ATTN_SCALE
    x1, x2 = x[..., : D // 2], x[..., D // 2:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def attention(x, p, sliding):
    n = x.shape[0]
    q = (x @ f64(p + "q_proj.weight").T + f64(p + "q_proj.bias")).reshape(n, NH, D).transpose(1, 0, 2)
    k = (x @ f64(p + "k_proj.weight").T + f64(p + "k_proj.bias")).reshape(n, NKV, D).transpose(1, 0, 2)
    v = (x @ f64(p + "v_proj.weight").T + f64(p + "v_proj.bias")).reshape(n, NKV, D).transpose(1, 0, 2)
    q, k = rope(q, n), rope(k, n)
    k, v = np.repeat(k, NH // NKV, axis=0), np.repeat(v, NH // NKV, axis=0)
    scores = q @ k.transpose(0, 2, 1) * D ** -0.5
    qi, ki = np.arange(n)[:, None], np.arange(n)[None, :]
    allowed = ki <= qi
    if sliding:
        allowed &= (qi - ki) < cfg["sliding_window"]
    scores = np.where(allowed[None], scores, -np.inf)
    sinks = np.broadcast_to(f64(p + "sinks")[:, None, None], (NH, n, 1))
    combined = np.concatenate([scores, sinks], axis=-1)
    combined -= combined.max(axis=-1, keepdims=True)
    probs = np.exp(combined)
    probs /= probs.sum(axis=-1, keepdims=True)
    out = probs[..., :-1] @ v  # [NH, n, D]
    out = out.transpose(1, 0, 2).reshape(n, NH * D)
    return out @ f64(p + "o_proj.weight").T + f64(p + "o_proj.bias")


def moe(x, p):
    logits = x @ f64(p + "router.weight").T + f64(p + "router.bias")
    gate_up, gate_up_b = mxfp4(p + "experts.gate_up_proj"), f64(p + "experts.gate_up_proj_bias")
    down, down_b = mxfp4(p + "experts.down_proj"), f64(p + "experts.down_proj_bias")
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        chosen = np.argsort(-logits[t], kind="stable")[:top_k]
        weights = np.exp(logits[t, chosen] - logits[t, chosen].max())
        weights /= weights.sum()
        for e, w in zip(chosen, weights):
            gu = gate_up[e] @ x[t] + gate_up_b[e]
            gate, up = np.minimum(gu[0::2], limit), np.clip(gu[1::2], -limit, limit)
            glu = gate / (1 + np.exp(-gate * alpha))
            out[t] += w * (down[e] @ ((up + 1) * glu) + down_b[e])
    return out


def forward(ids):
    x = f64("model.embed_tokens.weight")[ids]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        sliding = cfg["layer_types"][i] == "sliding_attention"
        x = x + attention(rms(x, f64(p + "input_layernorm.weight")), p + "self_attn.", sliding)
        x = x + moe(rms(x, f64(p + "post_attention_layernorm.weight")), p + "mlp.")
    return rms(x, f64("model.norm.weight"))


id_lists = json.load(open(ids_path))
vectors = json.load(open(vecs_path))["vectors"]
cosines = []
for ids, got in zip(id_lists, vectors):
    want = forward(np.array(ids))[-1]
    got = np.asarray(got, dtype=np.float64)
    cosines.append(float(want @ got / (np.linalg.norm(want) * np.linalg.norm(got))))
print(f"  HF gpt-oss forward (numpy) vs llama.cpp: {len(cosines)} lines, cosine min {min(cosines):.6f} "
      f"mean {sum(cosines) / len(cosines):.6f} (bound {min_cos})")
if len(cosines) != len(id_lists) or min(cosines) < min_cos:
    print("FAIL: gptoss_forward: cosine below the bound")
    sys.exit(1)
