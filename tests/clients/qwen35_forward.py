"""A Hugging Face forward pass of a Qwen3.5 text checkpoint (dense Qwen3_5ForCausalLM, or MoE
Qwen3_5MoeForCausalLM; or Qwen3NextForCausalLM, from transformers' modeling_qwen3_next) in numpy (float64): the reference for llama.cpp's output on rebox's GGUF. Nothing
here reads the GGUF or shares code with rebox or with the converter reference: the weights are the
safetensors' values (source_values.py, BF16 widened exactly), widened to float64.

Mirrors transformers' models/qwen3_5/modeling_qwen3_5.py (and qwen3_5_moe/modeling_qwen3_5_moe.py for the
MoE block), by function; the trunk only (Qwen3_5TextModel: the mtp.* layers are not loaded, lm_head unused):
  Qwen3_5RMSNorm                x * rsqrt(mean(x^2) + eps) * (1 + weight): input_layernorm,
                                post_attention_layernorm, q_norm, k_norm, the final norm
  Qwen3_5RMSNormGated           x * rsqrt(mean(x^2) + eps) * weight * silu(z) over one value head
                                (head_v_dim), the weight used as stored (no + 1): linear_attn.norm
  Qwen3_5TextRotaryEmbedding    inv_freq = 1 / theta^(2i/dim), dim = head_dim * partial_rotary_factor;
                                positions (3, n) for T/H/W, all three arange(n) for a text-only input, so
                                recomposition_frequencies' interleaved mrope_section picks (H at 1, 4, ..,
                                W at 2, 5, ..) change nothing: freqs = pos * inv_freq, cos/sin =
                                cat(freqs, freqs)
  apply_rotary_pos_emb          only the first `dim` channels of each head rotate, as rotate_half's
                                halves: channel i pairs with i + dim/2 (x1*cos - x2*sin, x2*cos + x1*sin);
                                channels dim.. pass through
  Qwen3_5Attention              q_proj rows viewed per head as [head_dim query | head_dim gate];
                                q_norm / k_norm per head, rope, causal softmax(q k^T * head_dim^-0.5)
                                with each key/value head serving num_heads/num_kv_heads consecutive query
                                heads (repeat_kv), heads concatenated, * sigmoid(gate), o_proj
  Qwen3_5GatedDeltaNet          in_proj_qkv -> causal depthwise conv1d (kernel K, left zero padding K-1,
                                torch's cross-correlation: out[t] = sum_j w[j] x[t-K+1+j]) + silu ->
                                split [q (key_dim) | k (key_dim) | v (value_dim)]; in_proj_z -> z;
                                beta = sigmoid(in_proj_b x); g = -exp(A_log) * softplus(in_proj_a x +
                                dt_bias); query/key head h // (num_v/num_k) serves value head h
                                (repeat_interleave, grouped value attention)
  torch_recurrent_gated_delta_rule (torch_chunk_gated_delta_rule computes the same recurrence by chunks)
                                q, k l2-normalised (x * rsqrt(sum(x^2) + 1e-6)), q * head_k_dim^-0.5;
                                per value head a state S [dk, dv] = 0; each token: S *= exp(g);
                                delta = (v - S^T k) * beta; S += k delta^T; out = S^T q
                                then Qwen3_5RMSNormGated(out, z) per value head, out_proj
  Qwen3NextGatedDeltaNet        (a qwen3_next checkpoint) the same recurrence; its inputs from
                                fix_query_key_value_ordering: in_proj_qkvz viewed per key head as
                                [q (head_k_dim) | k (head_k_dim) | v (r * head_v_dim) | z (r * head_v_dim)],
                                r = num_v/num_k, in_proj_ba per key head as [b (r) | a (r)]; q, k, v
                                flattened and concatenated as the conv input
  Qwen3_5MLP                    down(silu(gate(x)) * up(x))
  Qwen3_5MoeSparseMoeBlock      Qwen3_5MoeTopKRouter: softmax over all experts' logits, top-k, the k
                                weights divided by their sum (always; no norm_topk_prob in Qwen3.5;
                                Qwen3-Next's Qwen2MoeSparseMoeBlock when norm_topk_prob);
                                Qwen3_5MoeExperts: gate_up_proj [E, 2*ff, H] -> chunk(2): gate first,
                                up second, down(silu(gate) * up) * weight (per-expert
                                experts.N.{gate,up,down}_proj read the same way); plus
                                sigmoid(shared_expert_gate x) * shared_expert(x)
  Qwen3_5DecoderLayer           x += mixer(input_layernorm(x)) (linear_attention: GatedDeltaNet,
                                full_attention: Attention, per config layer_types);
                                x += mlp(post_attention_layernorm(x))
  Qwen3_5TextModel              embed_tokens, layers, norm -> last_hidden_state

With --kernel the reference adds the one rounding llama.cpp's CPU products add to a linear layer's input
for the weight type rebox writes (llama_cpu_rounding.py): mcq-v1 tensors are Q4_1 (x as Q8_1, the
block's min the source's), GPTQ / compressed-tensors symmetric int4 tensors Q4_0 (x as Q8_0), float
tensors their own type (BF16 / F16 x rounded so, F32 untouched), each expert's products by its own
tensor's type (a fused expert tensor's float type), the routers F32 (untouched) as the converter
writes them. It is the model
of the quantized file's arithmetic, against which its cosine is held to the same bound as the F32
twin's against the plain pass.

Usage: qwen35_forward.py MODEL_DIR IDS.json VECS.json... [--broken VECS.json]... [--min-cos 0.999]
                         [--kernel]
  IDS.json: token id lists; VECS.json: {"vectors": [...]}, llama.cpp's last-token embedding of each list
  (forward_embed.mjs), one file per GGUF of the same checkpoint. Prints the cosines of the last position's
  final hidden state per file; exit 1 when any is below --min-cos, or when a --broken file (a GGUF
  broken on purpose) is not below it on some line.
"""
import sys

import numpy as np

import forward_cosines
import llama_cpu_rounding as rounding
from source_values import Source

model_dir, ids_path, vec_paths, broken, min_cos, flags = forward_cosines.parse(sys.argv[1:])
KERNEL = "--kernel" in flags
src = Source(model_dir)
cfg = src.config.get("text_config", src.config)


# Qwen3_5(Moe)ForConditionalGeneration's text model is under model.language_model.
TEXT = "model.language_model." if any(n.startswith("model.language_model.") for n in src.tensors) \
    else "model."


def real(name):
    """The checkpoint's name of a text-model tensor named as Qwen3_5ForCausalLM names it."""
    return TEXT + name[len("model."):] if name.startswith("model.") else name


NAMES = set(src.names())  # the checkpoint's tensors by name (a quantized one's parts as one)


def f64(name):
    return src.values(real(name)).astype(np.float64)



ROUTERS = ("mlp.gate.weight", "mlp.shared_expert_gate.weight")


def lin(x, name, w=None):
    """x W^T; with --kernel, x first rounded as ggml-cpu rounds it for the weight's type in rebox's file.
    W is the tensor `name`, or `w` taken from it (one expert of a fused tensor)."""
    w = f64(name) if w is None else w
    name = real(name)
    if not KERNEL or name.endswith(ROUTERS):  # the routers are F32 in the file, as the converter
        return x @ w.T                        # writes ffn_gate_inp / ffn_gate_inp_shexp
    x2 = np.atleast_2d(x)
    if src.format == "mcq-v1" and name in src.mcq:
        meta = src.mcq[name]
        rows, cols = meta["shape"]
        if meta["group"] % rounding.BLOCK:
            raise SystemExit(f"qwen35_forward.py: {name}: group {meta['group']} is not whole Q4_1 blocks")
        mins = np.frombuffer(src.tensors[name + ".mins"].bytes.tobytes(), dtype="<f2")
        first_of_block = np.arange(0, rows * cols, rounding.BLOCK)
        block_min = mins[first_of_block // meta["group"]].astype(np.float64).reshape(rows, -1)
        y = rounding.q8_1_product(x2, w, block_min)
    elif src.format in ("gptq", "compressed-tensors") and src.is_quantized(name):
        y = rounding.q8_0(x2) @ w.T  # symmetric int4 -> Q4_0
    elif not src.is_quantized(name):
        dtype = src.tensors[name].dtype
        rounded = {"BF16": rounding.bf16_round, "F16": rounding.f16_round}.get(dtype)
        y = (rounded(x2) if rounded else x2) @ w.T
    else:
        raise SystemExit(f"qwen35_forward.py: {name}: llama.cpp's rounding is not modelled for {src.format}")
    return y.reshape(*np.shape(x)[:-1], w.shape[0])


H, NH, NKV, D = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
NK, NV = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
DK, DV, K = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"], cfg["linear_conv_kernel_dim"]
eps = cfg["rms_norm_eps"]
rope = cfg.get("rope_parameters") or {}
theta = rope.get("rope_theta", cfg.get("rope_theta"))
ROT = int(D * rope.get("partial_rotary_factor", cfg.get("partial_rotary_factor", 1.0)))
INV_FREQ = 1.0 / theta ** (np.arange(0, ROT, 2) / ROT)


def silu(x):
    return x / (1 + np.exp(-x))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def rms_1p(x, w):  # Qwen3_5RMSNorm
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (1.0 + w)


def rms_gated(x, w, z):  # Qwen3_5RMSNormGated
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w * silu(z)


def l2norm(x):
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + 1e-6)


def apply_rope(x):  # x [heads, n, D]
    n = x.shape[1]
    freqs = np.arange(n)[:, None] * INV_FREQ[None, :]  # [n, ROT/2]; T = H = W position for text
    cos, sin = np.cos(freqs), np.sin(freqs)
    x1, x2, rest = x[..., : ROT // 2], x[..., ROT // 2 : ROT], x[..., ROT:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], axis=-1)


def attention(x, p):
    n = x.shape[0]
    qg = lin(x, p + "q_proj.weight").reshape(n, NH, 2 * D)
    q, gate = qg[..., :D], qg[..., D:].reshape(n, NH * D)
    k = lin(x, p + "k_proj.weight").reshape(n, NKV, D)
    v = lin(x, p + "v_proj.weight").reshape(n, NKV, D).transpose(1, 0, 2)
    q = apply_rope(rms_1p(q, f64(p + "q_norm.weight")).transpose(1, 0, 2))
    k = apply_rope(rms_1p(k, f64(p + "k_norm.weight")).transpose(1, 0, 2))
    k, v = np.repeat(k, NH // NKV, axis=0), np.repeat(v, NH // NKV, axis=0)
    scores = q @ k.transpose(0, 2, 1) * D**-0.5
    scores = np.where(np.tri(n, dtype=bool)[None], scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=-1, keepdims=True)
    out = (probs @ v).transpose(1, 0, 2).reshape(n, NH * D)
    return lin(out * sigmoid(gate), p + "o_proj.weight")


def qwen3next_projections(x, p):
    """Qwen3NextGatedDeltaNet.fix_query_key_value_ordering: in_proj_qkvz holds, per key head, its
    query and key, then the value and z rows of its NV/NK value heads; in_proj_ba per key head its
    NV/NK b then a. Returns (the conv input q|k|v, z [n, NV, DV], b [n, NV], a [n, NV])."""
    n, r = x.shape[0], NV // NK
    qkvz = lin(x, p + "in_proj_qkvz.weight").reshape(n, NK, 2 * DK + 2 * r * DV)
    ba = lin(x, p + "in_proj_ba.weight").reshape(n, NK, 2 * r)
    q, k = qkvz[..., :DK], qkvz[..., DK : 2 * DK]
    v, z = qkvz[..., 2 * DK : 2 * DK + r * DV], qkvz[..., 2 * DK + r * DV :]
    mixed = np.concatenate([q.reshape(n, -1), k.reshape(n, -1), v.reshape(n, -1)], axis=-1)
    return mixed, z.reshape(n, NV, DV), ba[..., :r].reshape(n, NV), ba[..., r:].reshape(n, NV)


def gated_delta_net(x, p):
    n = x.shape[0]
    if real(p + "in_proj_qkvz.weight") in NAMES:  # Qwen3-Next
        mixed, z, b, a = qwen3next_projections(x, p)
    else:
        mixed = lin(x, p + "in_proj_qkv.weight")  # [n, conv_dim]
        z = lin(x, p + "in_proj_z.weight").reshape(n, NV, DV)
        b, a = lin(x, p + "in_proj_b.weight"), lin(x, p + "in_proj_a.weight")
    w = f64(p + "conv1d.weight")[:, 0, :]  # [conv_dim, K]
    padded = np.concatenate([np.zeros((K - 1, mixed.shape[1])), mixed], axis=0)
    conv = sum(padded[j : j + n] * w[:, j] for j in range(K))
    conv = silu(conv)
    q = conv[:, : NK * DK].reshape(n, NK, DK)
    k = conv[:, NK * DK : 2 * NK * DK].reshape(n, NK, DK)
    v = conv[:, 2 * NK * DK :].reshape(n, NV, DV)
    beta = sigmoid(b)  # [n, NV]
    a = a + f64(p + "dt_bias")
    g = -np.exp(f64(p + "A_log")) * np.logaddexp(0, a)  # softplus
    q = np.repeat(l2norm(q), NV // NK, axis=1) * DK**-0.5  # repeat_interleave on the head axis
    k = np.repeat(l2norm(k), NV // NK, axis=1)
    out = np.zeros((n, NV, DV))
    state = np.zeros((NV, DK, DV))
    for t in range(n):
        state *= np.exp(g[t])[:, None, None]
        kv_mem = np.einsum("hkv,hk->hv", state, k[t])
        delta = (v[t] - kv_mem) * beta[t][:, None]
        state += k[t][:, :, None] * delta[:, None, :]
        out[t] = np.einsum("hkv,hk->hv", state, q[t])
    out = rms_gated(out, f64(p + "norm.weight"), z).reshape(n, NV * DV)
    return lin(out, p + "out_proj.weight")


def mlp(x, p):
    return lin(silu(lin(x, p + "gate_proj.weight")) * lin(x, p + "up_proj.weight"), p + "down_proj.weight")


def experts(p):
    """[(gate [ff, H], up [ff, H], down [H, ff])] per expert, from the fused or per-expert tensors."""
    if real(p + "experts.gate_up_proj") in NAMES:
        gate_up, down = f64(p + "experts.gate_up_proj"), f64(p + "experts.down_proj")
        ff = gate_up.shape[1] // 2
        return [(gate_up[e, :ff], gate_up[e, ff:], down[e]) for e in range(gate_up.shape[0])]
    return [tuple(f64(f"{p}experts.{e}.{proj}_proj.weight") for proj in ("gate", "up", "down"))
            for e in range(cfg["num_experts"])]


def expert_names(p, e):
    """The source tensors of expert e's gate, up and down (the fused ones, or its own)."""
    if real(p + "experts.gate_up_proj") in NAMES:
        return p + "experts.gate_up_proj", p + "experts.gate_up_proj", p + "experts.down_proj"
    return tuple(f"{p}experts.{e}.{proj}_proj.weight" for proj in ("gate", "up", "down"))


def moe(x, p):
    logits = lin(x, p + "gate.weight")
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    ex = experts(p)
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        chosen = np.argsort(-probs[t], kind="stable")[: cfg["num_experts_per_tok"]]
        weights = probs[t, chosen]
        if cfg.get("norm_topk_prob", True):  # Qwen3.5 always; Qwen3-Next's Qwen2MoeSparseMoeBlock by config
            weights = weights / weights.sum()
        for e, wt in zip(chosen, weights):
            gate, up, down = ex[e]
            gate_name, up_name, down_name = expert_names(p, e)
            hidden = silu(lin(x[t], gate_name, gate)) * lin(x[t], up_name, up)
            out[t] += wt * lin(hidden, down_name, down)
    shared = mlp(x, p + "shared_expert.")
    return out + sigmoid(lin(x, p + "shared_expert_gate.weight")) * shared


def forward(ids):
    x = f64("model.embed_tokens.weight")[ids]
    is_moe = "num_experts" in cfg
    n_layers, interval = cfg["num_hidden_layers"], cfg.get("full_attention_interval", 4)
    kinds = cfg.get("layer_types") or ["full_attention" if (i + 1) % interval == 0 else "linear_attention"
                                       for i in range(n_layers)]
    for i, kind in enumerate(kinds[:n_layers]):
        p = f"model.layers.{i}."
        h = rms_1p(x, f64(p + "input_layernorm.weight"))
        x = x + (gated_delta_net(h, p + "linear_attn.") if kind == "linear_attention" else
                 attention(h, p + "self_attn."))
        h = rms_1p(x, f64(p + "post_attention_layernorm.weight"))
        x = x + (moe(h, p + "mlp.") if is_moe else mlp(h, p + "mlp."))
    return rms_1p(x, f64("model.norm.weight"))


sys.exit(forward_cosines.judge("Qwen3.5", forward, ids_path, vec_paths, broken, min_cos))
