"""A Hugging Face forward pass of a Gemma 4 text model (the language model of
Gemma4ForConditionalGeneration, or Gemma4ForCausalLM) in numpy (float64): the reference for llama.cpp's
output on rebox's GGUF. Nothing here reads the GGUF or shares code with rebox or with the converter
reference: the weights are the safetensors' values (source_values.py: BF16 widened exactly; mcq-v1, MLX,
GPTQ and AWQ dequantized by each format's definition), widened to float64.

Mirrors transformers' models/gemma4/modeling_gemma4.py (and modeling_rope_utils' proportional rope), by
function; the trunk only (Gemma4TextModel: lm_head and final_logit_softcapping act on the logits, not on
the last hidden state compared here; the vision / audio towers are not loaded):
  Gemma4RMSNorm                 x * (mean(x^2) + eps)^-0.5 * weight: the weight as stored, NO 1 + w
                                (unlike Gemma 3); with_scale=False (v_norm, the router's norm) drops the
                                weight
  Gemma4TextScaledWordEmbedding embed_tokens(ids) * sqrt(hidden_size) (the scale cast to the weight's
                                dtype first: BF16's rounding of sqrt(64) = 8 changes nothing)
  Gemma4TextRotaryEmbedding     one inv_freq per layer type, from rope_parameters[layer_type]:
    compute_default_rope_parameters  sliding_attention: 1 / theta^(2i/head_dim), all of head_dim
    _compute_proportional_rope_parameters  full_attention ("proportional", head_dim_key
                                global_head_dim): rope_angles = int(partial_rotary_factor * D // 2)
                                frequencies 1 / theta^(2i/D) (the exponent over the whole D, not over
                                the rotated part), then D/2 - rope_angles zeros; / factor (1)
                                cos/sin = cat(freqs, freqs) over all D channels
  apply_rotary_pos_emb          x * cos + rotate_half(x) * sin: channel i pairs with i + D/2; a zero
                                frequency leaves its pair unrotated
  Gemma4TextAttention           head_dim = global_head_dim on full layers; attention_k_eq_v full layers
                                (use_alternative_attention) have no v_proj: value = the raw k_proj
                                output (before k_norm and rope), num_global_key_value_heads heads;
                                q_norm / k_norm per head, v_norm (no weight) on the values, rope on q
                                and k; scaling 1.0 (no head_dim^-0.5), no attention softcap; causal
                                mask, and on sliding layers only keys with 0 <= q - k < sliding_window;
                                each kv head serves num_heads/num_kv_heads consecutive query heads
                                (repeat_kv); KV-shared layers (the last num_kv_shared_layers) take the
                                keys/values of the last non-shared layer of their own layer type
                                (store_full_length_kv) and own no k/v weights
  Gemma4TextMLP                 down(gelu_tanh(gate(x)) * up(x)); intermediate_size doubled on the
                                KV-shared layers when use_double_wide_mlp
  Gemma4TextRouter              rmsnorm(x) (no weight) * scale * hidden^-0.5 -> proj -> softmax over all
                                experts -> top_k_experts, weights / their sum, * per_expert_scale[e]
  Gemma4TextExperts             gate_up_proj [E, 2*ff, H] -> chunk(2): gate first, up second;
                                down(gelu_tanh(gate) * up) * weight
  Gemma4TextDecoderLayer        x += post_attention_layernorm(attn(input_layernorm(x)));
                                h = mlp(pre_feedforward_layernorm(x)); with the MoE block (on the same
                                x): h = post_feedforward_layernorm_1(h) + post_feedforward_layernorm_2(
                                experts(pre_feedforward_layernorm_2(x), router(x)));
                                x += post_feedforward_layernorm(h);
                                per-layer input (hidden_size_per_layer_input > 0): x +=
                                post_per_layer_input_norm(per_layer_projection(gelu_tanh(
                                per_layer_input_gate(x)) * per_layer_input[layer]));
                                x *= layer_scalar (the whole stream, residual included)
  get_per_layer_inputs / project_per_layer_inputs
                                (embed_tokens_per_layer(ids) * sqrt(ple_dim)) viewed [n, layers, ple];
                                (per_layer_projection_norm(per_layer_model_projection(embeds) *
                                hidden^-0.5 viewed [n, layers, ple]) + that) * 2^-0.5
  Gemma4TextModel               embeddings, per-layer inputs, layers, norm -> last_hidden_state

Usage: gemma4_forward.py MODEL_DIR IDS.json VECS.json... [--broken VECS.json]... [--min-cos 0.999]
  IDS.json: token id lists; VECS.json: {"vectors": [...]}, llama.cpp's last-token embedding of each list
  (forward_embed.mjs), one file per GGUF of the same checkpoint. Prints the cosines of the last position's
  final hidden state per file; exit 1 when any is below --min-cos, or when a --broken file (a GGUF
  broken on purpose) is not below it on some line.
"""
import math
import sys

import numpy as np

import forward_cosines
from source_values import Source

model_dir, ids_path, vec_paths, broken, min_cos, flags = forward_cosines.parse(sys.argv[1:])
src = Source(model_dir)
cfg = src.config.get("text_config", src.config)
# transformers' Gemma4ForConditionalGeneration saves "model.language_model.", Gemma4ForCausalLM "model.",
# mlx-lm's gemma4.Model "language_model.model."
PREFIX = next(p for p in ("model.language_model.", "language_model.model.", "model.")
              if p + "embed_tokens.weight" in src.names())


def f64(name):
    return src.values(PREFIX + name).astype(np.float64)


H, NH, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["rms_norm_eps"]
N_LAYERS, TYPES = cfg["num_hidden_layers"], cfg["layer_types"]
PLE = cfg.get("hidden_size_per_layer_input") or 0
FIRST_SHARED = N_LAYERS - (cfg.get("num_kv_shared_layers") or 0)


def head_dim(kind):
    return cfg["global_head_dim"] if kind == "full_attention" and cfg.get("global_head_dim") else cfg["head_dim"]


def inv_freq(kind):
    rope = cfg["rope_parameters"][kind]
    theta, D = rope["rope_theta"], head_dim(kind)
    if rope.get("rope_type", "default") == "default":
        return 1.0 / theta ** (np.arange(0, D, 2) / D)
    if rope["rope_type"] != "proportional":
        raise SystemExit(f"gemma4_forward.py: rope_type {rope['rope_type']} not modelled")
    angles = int(rope.get("partial_rotary_factor", 1.0) * D // 2)
    freqs = np.concatenate([1.0 / theta ** (np.arange(0, 2 * angles, 2) / D), np.zeros(D // 2 - angles)])
    return freqs / rope.get("factor", 1.0)


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def rms(x, w=None):  # Gemma4RMSNorm: no 1 + w
    out = x * (np.mean(x * x, axis=-1, keepdims=True) + eps) ** -0.5
    return out if w is None else out * w


def apply_rope(x, kind):  # x [heads, n, D]
    freqs = np.arange(x.shape[1])[:, None] * inv_freq(kind)[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * np.cos(emb) + rotated * np.sin(emb)


def attention(x, i, shared_kv):
    kind, p = TYPES[i], f"layers.{i}.self_attn."
    n, D = x.shape[0], head_dim(kind)
    q = (x @ f64(p + "q_proj.weight").T).reshape(n, NH, D)
    q = apply_rope(rms(q, f64(p + "q_norm.weight")).transpose(1, 0, 2), kind)
    if i >= FIRST_SHARED:
        k, v = shared_kv[kind]
    else:
        k_raw = x @ f64(p + "k_proj.weight").T
        nkv = k_raw.shape[1] // D
        has_v = PREFIX + p + "v_proj.weight" in src.names()
        v_raw = x @ f64(p + "v_proj.weight").T if has_v else k_raw
        k = apply_rope(rms(k_raw.reshape(n, nkv, D), f64(p + "k_norm.weight")).transpose(1, 0, 2), kind)
        v = rms(v_raw.reshape(n, nkv, D)).transpose(1, 0, 2)
        shared_kv[kind] = (k, v)  # the last non-shared layer of a type wins, as store_full_length_kv
    rep = NH // k.shape[0]
    k, v = np.repeat(k, rep, axis=0), np.repeat(v, rep, axis=0)
    scores = q @ k.transpose(0, 2, 1)  # scaling 1.0
    dist = np.arange(n)[:, None] - np.arange(n)[None, :]
    allowed = dist >= 0
    if kind == "sliding_attention":
        allowed &= dist < cfg["sliding_window"]
    scores = np.where(allowed[None], scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=-1, keepdims=True)
    out = (probs @ v).transpose(1, 0, 2).reshape(n, NH * D)
    return out @ f64(p + "o_proj.weight").T


def mlp(x, p):
    return (gelu_tanh(x @ f64(p + "gate_proj.weight").T) * (x @ f64(p + "up_proj.weight").T)) @ f64(
        p + "down_proj.weight").T


def moe(x, p):
    h = rms(x) * f64(p + "router.scale") * H**-0.5
    logits = h @ f64(p + "router.proj.weight").T
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    per_expert = f64(p + "router.per_expert_scale")
    if PREFIX + p + "experts.gate_up_proj" in src.names():
        gate_up, down = f64(p + "experts.gate_up_proj"), f64(p + "experts.down_proj")
    else:  # mlx-lm's sanitize split gate_up_proj in 2 along axis -2 (switch_glu): joined back here
        glu = p + "experts.switch_glu."
        gate_up = np.concatenate([f64(glu + "gate_proj.weight"), f64(glu + "up_proj.weight")], axis=-2)
        down = f64(glu + "down_proj.weight")
    ff = gate_up.shape[1] // 2
    xin = rms(x, f64(p + "pre_feedforward_layernorm_2.weight"))
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        chosen = np.argsort(-probs[t], kind="stable")[: cfg["top_k_experts"]]
        weights = probs[t, chosen] / probs[t, chosen].sum() * per_expert[chosen]
        for e, wt in zip(chosen, weights):
            g, u = gate_up[e, :ff] @ xin[t], gate_up[e, ff:] @ xin[t]
            out[t] += wt * (down[e] @ (gelu_tanh(g) * u))
    return out


def per_layer_inputs(ids, embeds):
    n = len(ids)
    token = f64("embed_tokens_per_layer.weight")[ids] * math.sqrt(PLE)
    proj = (embeds @ f64("per_layer_model_projection.weight").T) * H**-0.5
    proj = rms(proj.reshape(n, N_LAYERS, PLE), f64("per_layer_projection_norm.weight"))
    return (proj + token.reshape(n, N_LAYERS, PLE)) * 2**-0.5


def forward(ids):
    x = f64("embed_tokens.weight")[ids] * math.sqrt(H)
    ple = per_layer_inputs(ids, x) if PLE else None
    shared_kv = {}
    for i in range(N_LAYERS):
        p = f"layers.{i}."
        x = x + rms(attention(rms(x, f64(p + "input_layernorm.weight")), i, shared_kv),
                    f64(p + "post_attention_layernorm.weight"))
        h = mlp(rms(x, f64(p + "pre_feedforward_layernorm.weight")), p + "mlp.")
        if cfg.get("enable_moe_block"):
            h = rms(h, f64(p + "post_feedforward_layernorm_1.weight")) + rms(
                moe(x, p), f64(p + "post_feedforward_layernorm_2.weight"))
        x = x + rms(h, f64(p + "post_feedforward_layernorm.weight"))
        if PLE:
            g = gelu_tanh(x @ f64(p + "per_layer_input_gate.weight").T) * ple[:, i, :]
            x = x + rms(g @ f64(p + "per_layer_projection.weight").T, f64(p + "post_per_layer_input_norm.weight"))
        x = x * f64(p + "layer_scalar")
    return rms(x, f64("norm.weight"))


sys.exit(forward_cosines.judge("Gemma 4", forward, ids_path, vec_paths, broken, min_cos))
