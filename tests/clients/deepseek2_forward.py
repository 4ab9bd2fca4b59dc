"""A Hugging Face forward pass of a DeepSeek-V3 text model (DeepseekV3ForCausalLM's DeepseekV3Model) in
numpy (float64): the reference for llama.cpp's output on rebox's deepseek2 GGUF. Nothing here reads the
GGUF or shares code with rebox or with the converter reference: the weights are the safetensors' values
(source_values.py: BF16 widened exactly; mcq-v1 and compressed-tensors dequantized by each format's
definition), widened to float64.

Mirrors transformers' models/deepseek_v3/modeling_deepseek_v3.py (and modeling_rope_utils' yarn), by
function; the trunk only (the MTP layers at num_hidden_layers and above are not run, as DeepseekV3Model
runs layers[:num_hidden_layers]):
  DeepseekV3RMSNorm        x * (mean(x^2) + eps)^-0.5 * weight
  DeepseekV3RotaryEmbedding  yarn (rope_scaling.type): dim = qk_rope_head_dim (the config's head_dim);
                           pos_freqs = theta^(2i/dim); extrapolation 1/pos_freqs, interpolation
                           1/(factor*pos_freqs), factor = max_position_embeddings /
                           original_max_position_embeddings; the correction range of beta_fast /
                           beta_slow over original_max_position_embeddings, floored / ceiled, clamped
                           to [0, dim-1]; the linear ramp over dim/2 frequencies; attention_factor =
                           get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim) scales cos
                           and sin
  apply_rotary_pos_emb_interleave  (rope_interleave, DeepseekV3Config's default True): the rope
                           channels de-interleaved (pairs 2i, 2i+1 become i, i + dim/2), then
                           x * cos + rotate_half(x) * sin
  DeepseekV3Attention      q = q_b_proj(q_a_layernorm(q_a_proj(x))) (or q_proj), per head split into
                           q_pass (qk_nope_head_dim) and q_rot (qk_rope_head_dim); kv_a_proj_with_mqa(x)
                           split into k_pass (kv_lora_rank) and k_rot (one head, shared by all);
                           kv_b_proj(kv_a_layernorm(k_pass)) per head split into k_pass and value;
                           query = [q_pass, rope(q_rot)], key = [k_pass, rope(k_rot)];
                           scaling = qk_head_dim^-0.5 * yarn_get_mscale(factor, mscale_all_dim)^2;
                           causal softmax; o_proj
  DeepseekV3MLP            down(silu(gate(x)) * up(x)); the first first_k_dense_replace layers
  DeepseekV3TopkRouter     scores = sigmoid(x @ gate.weight^T); choice = scores + e_score_correction_bias;
                           group score = sum of each group's top 2 choices; the topk_group best groups
                           kept (others 0); top_k experts by choice; weights = their scores, / (sum +
                           1e-20) when norm_topk_prob, * routed_scaling_factor
  DeepseekV3MoE            sum of weight * expert(x) + shared_experts(x)
  DeepseekV3DecoderLayer   x += attn(input_layernorm(x)); x += mlp(post_attention_layernorm(x))
  DeepseekV3Model          embed_tokens, layers, norm -> last_hidden_state

Usage: deepseek2_forward.py MODEL_DIR IDS.json VECS.json... [--broken VECS.json]... [--min-cos 0.999]
  as gemma4_forward.py (forward_cosines.py: the last position's final hidden state against llama.cpp's
  last-token embedding of each id list, per file).
"""
import math
import sys

import numpy as np

import forward_cosines
from source_values import Source

model_dir, ids_path, vec_paths, broken, min_cos, flags = forward_cosines.parse(sys.argv[1:])
src = Source(model_dir)
cfg = src.config


def f64(name):
    return src.values("model." + name).astype(np.float64)


H, NH, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["rms_norm_eps"]
NOPE, ROPE, VD = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
KV_RANK = cfg["kv_lora_rank"]
SCALING = (NOPE + ROPE) ** -0.5


def get_mscale(scale, mscale=1.0):
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def yarn():
    """(inv_freq, attention_factor) of _compute_yarn_parameters (or the default rope)."""
    base, dim = cfg["rope_theta"], ROPE
    pos_freqs = base ** (np.arange(0, dim, 2) / dim)
    rs = cfg.get("rope_scaling")
    if not rs:
        return 1.0 / pos_freqs, 1.0
    if rs.get("rope_type", rs.get("type")) != "yarn":
        raise SystemExit(f"deepseek2_forward.py: rope_scaling {rs} not modelled")
    factor = rs["factor"]
    original = rs.get("original_max_position_embeddings") or cfg["max_position_embeddings"]
    if "original_max_position_embeddings" in rs:
        factor = cfg["max_position_embeddings"] / original
    mscale, mscale_all = rs.get("mscale"), rs.get("mscale_all_dim")
    attention_factor = rs.get("attention_factor")
    if attention_factor is None:
        attention_factor = (get_mscale(factor, mscale) / get_mscale(factor, mscale_all)
                            if mscale and mscale_all else get_mscale(factor))
    beta_fast, beta_slow = rs.get("beta_fast") or 32, rs.get("beta_slow") or 1

    def correction_dim(rotations):
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2) - low) / (high - low), 0, 1)
    extrapolation = 1 - ramp
    inv_freq = (1.0 / (factor * pos_freqs)) * (1 - extrapolation) + (1.0 / pos_freqs) * extrapolation
    return inv_freq, attention_factor


INV_FREQ, ATTENTION_FACTOR = yarn()
if cfg.get("rope_scaling") and cfg["rope_scaling"].get("mscale_all_dim"):
    m = get_mscale(cfg["rope_scaling"]["factor"], cfg["rope_scaling"]["mscale_all_dim"])
    SCALING *= m * m


def rms(x, w):
    return x * (np.mean(x * x, axis=-1, keepdims=True) + eps) ** -0.5 * w


def silu(x):
    return x / (1 + np.exp(-x))


def rope(x):  # x [heads, n, ROPE], interleaved pairs
    n = x.shape[1]
    if cfg.get("rope_interleave", True):
        x = x.reshape(*x.shape[:-1], ROPE // 2, 2).swapaxes(-1, -2).reshape(x.shape)
    freqs = np.arange(n)[:, None] * INV_FREQ[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb) * ATTENTION_FACTOR, np.sin(emb) * ATTENTION_FACTOR
    half = ROPE // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def attention(x, p):
    n = x.shape[0]
    if cfg.get("q_lora_rank"):
        q = rms(x @ f64(p + "q_a_proj.weight").T, f64(p + "q_a_layernorm.weight")) @ f64(p + "q_b_proj.weight").T
    else:
        q = x @ f64(p + "q_proj.weight").T
    q = q.reshape(n, NH, NOPE + ROPE).transpose(1, 0, 2)
    compressed = x @ f64(p + "kv_a_proj_with_mqa.weight").T
    k_pass, k_rot = compressed[:, :KV_RANK], compressed[:, KV_RANK:]
    kv = rms(k_pass, f64(p + "kv_a_layernorm.weight")) @ f64(p + "kv_b_proj.weight").T
    kv = kv.reshape(n, NH, NOPE + VD).transpose(1, 0, 2)
    k_nope, v = kv[..., :NOPE], kv[..., NOPE:]
    k_rot = np.broadcast_to(rope(k_rot[None]), (NH, n, ROPE))
    query = np.concatenate([q[..., :NOPE], rope(q[..., NOPE:])], axis=-1)
    key = np.concatenate([k_nope, k_rot], axis=-1)
    scores = query @ key.transpose(0, 2, 1) * SCALING
    scores = np.where(np.tril(np.ones((n, n), dtype=bool))[None], scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=-1, keepdims=True)
    out = (probs @ v).transpose(1, 0, 2).reshape(n, NH * VD)
    return out @ f64(p + "o_proj.weight").T


def mlp(x, p):
    return (silu(x @ f64(p + "gate_proj.weight").T) * (x @ f64(p + "up_proj.weight").T)) @ f64(
        p + "down_proj.weight").T


def moe(x, p):
    E, top_k = cfg["n_routed_experts"], cfg["num_experts_per_tok"]
    groups, keep = cfg.get("n_group") or 1, cfg.get("topk_group") or 1
    scores = 1 / (1 + np.exp(-(x @ f64(p + "gate.weight").T)))
    choice = scores + f64(p + "gate.e_score_correction_bias")[None, :]
    out = mlp(x, p + "shared_experts.")
    for t in range(x.shape[0]):
        per_group = choice[t].reshape(groups, E // groups)
        group_scores = np.sort(per_group, axis=-1)[:, -2:].sum(axis=-1)
        kept = np.argsort(-group_scores, kind="stable")[:keep]
        masked = np.where(np.isin(np.arange(E) // (E // groups), kept), choice[t], 0.0)
        chosen = np.argsort(-masked, kind="stable")[:top_k]
        weights = scores[t, chosen]
        if cfg.get("norm_topk_prob"):
            weights = weights / (weights.sum() + 1e-20)
        weights = weights * cfg.get("routed_scaling_factor", 1.0)
        for e, wt in zip(chosen, weights):
            out[t] += wt * mlp(x[t : t + 1], f"{p}experts.{e}.")[0]
    return out


def forward(ids):
    x = f64("embed_tokens.weight")[ids]
    for i in range(cfg["num_hidden_layers"]):
        p = f"layers.{i}."
        x = x + attention(rms(x, f64(p + "input_layernorm.weight")), p + "self_attn.")
        h = rms(x, f64(p + "post_attention_layernorm.weight"))
        x = x + (mlp(h, p + "mlp.") if i < cfg.get("first_k_dense_replace", 0) else moe(h, p + "mlp."))
    return rms(x, f64("norm.weight"))


sys.exit(forward_cosines.judge("DeepSeek-V3", forward, ids_path, vec_paths, broken, min_cos))
