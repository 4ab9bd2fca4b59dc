"""Semantic proof of the Q/K permutation: attention scores computed the Hugging Face way (rotate-half
RoPE on the source's unpermuted q_proj/k_proj) equal those computed the llama.cpp way (interleaved,
GGML_ROPE_TYPE_NORM RoPE on the GGUF's permuted attn_q/attn_k, with `rope_freqs.weight` dividing the
angles when present), for every layer and head, on random input.

HF side (transformers' LlamaAttention): q = x Wq^T per head; q*cos + rotate_half(q)*sin with
rotate_half(v) = cat(-v[D/2:], v[:D/2]) and angle_i = pos * inv_freq[i], inv_freq[i] = theta^(-2i/D),
rescaled by the "llama3" rope_scaling rule when the config has it (_compute_llama3_parameters).
llama.cpp side (ggml_rope, NORM mode): pairs (2i, 2i+1) rotated by pos * theta^(-2i/D) / freq_factors[i].
Both in float64 from float32 weights; scores must agree to 1e-9 relative (1e-5 with rope_freqs, a float32
tensor). A wrong permutation, or none, changes the scores at O(1).

Usage: llama_rope_semantics.py MODEL_DIR FILE.gguf
"""
import sys

import numpy as np
import gguf

from hf_forward import rope_inv_freq
from source_values import Source

model_dir, gguf_path = sys.argv[1:3]
src = Source(model_dir)
cfg = src.config
H = cfg["num_attention_heads"]
Hkv = cfg.get("num_key_value_heads", H)
D = cfg.get("head_dim") or cfg["hidden_size"] // H
theta = float(cfg.get("rope_theta", 10000.0))
E = cfg["hidden_size"]
T = 7

reader = gguf.GGUFReader(gguf_path)
gguf_tensors = {t.name: t for t in reader.tensors}


def gguf_values(name):
    t = gguf_tensors[name]
    if t.tensor_type == gguf.GGMLQuantizationType.F32:
        v = np.asarray(t.data, dtype=np.float32)
    else:
        v = gguf.quants.dequantize(t.data, t.tensor_type)
    return v.reshape([int(x) for x in t.shape][::-1]).astype(np.float64)


def hf_inv_freq():
    return rope_inv_freq(cfg, D)


def hf_rope(q, pos):  # q [T, heads, D]
    ang = pos[:, None] * hf_inv_freq()[None, :]
    cos = np.concatenate([np.cos(ang), np.cos(ang)], axis=1)[:, None, :]
    sin = np.concatenate([np.sin(ang), np.sin(ang)], axis=1)[:, None, :]
    rot = np.concatenate([-q[..., D // 2:], q[..., : D // 2]], axis=-1)
    return q * cos + rot * sin


def llama_cpp_rope(q, pos, freq_factors):
    ang = pos[:, None] * (theta ** (-np.arange(0, D, 2, dtype=np.float64) / D))[None, :] / freq_factors[None, :]
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    x0, x1 = q[..., 0::2], q[..., 1::2]
    out = np.empty_like(q)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def scores(q, k):  # [T, H, D], [T, Hkv, D] -> [H, T, T]
    k = np.repeat(k, H // Hkv, axis=1)
    return np.einsum("thd,shd->hts", q, k)


rng = np.random.default_rng(7)
x = rng.standard_normal((T, E))
pos = np.arange(T, dtype=np.float64) * 37.0  # spread positions so every frequency turns
has_freqs = "rope_freqs.weight" in gguf_tensors
freq_factors = gguf_values("rope_freqs.weight") if has_freqs else np.ones(D // 2)
tolerance = 1e-5 if has_freqs else 1e-9
worst = 0.0
problems = []
layer = 0
while f"blk.{layer}.attn_q.weight" in gguf_tensors:
    def hf(name):
        for prefix in ("model.", ""):
            if prefix + name in src.tensors or prefix + name in src.mcq:
                return src.values(prefix + name).astype(np.float64)
        raise KeyError(name)

    q_hf = (x @ hf(f"layers.{layer}.self_attn.q_proj.weight").T).reshape(T, H, D)
    k_hf = (x @ hf(f"layers.{layer}.self_attn.k_proj.weight").T).reshape(T, Hkv, D)
    q_gg = (x @ gguf_values(f"blk.{layer}.attn_q.weight").T).reshape(T, H, D)
    k_gg = (x @ gguf_values(f"blk.{layer}.attn_k.weight").T).reshape(T, Hkv, D)
    s_hf = scores(hf_rope(q_hf, pos), hf_rope(k_hf, pos))
    s_gg = scores(llama_cpp_rope(q_gg, pos, freq_factors), llama_cpp_rope(k_gg, pos, freq_factors))
    rel = float(np.max(np.abs(s_hf - s_gg)) / np.max(np.abs(s_hf)))
    worst = max(worst, rel)
    if not rel <= tolerance:
        problems.append(f"layer {layer}: scores differ, max relative error {rel:.3g} (allowed {tolerance:g})")
    # The check must be able to fail: the same llama.cpp-style RoPE on unpermuted weights disagrees.
    s_wrong = scores(llama_cpp_rope(q_hf, pos, freq_factors), llama_cpp_rope(k_hf, pos, freq_factors))
    if float(np.max(np.abs(s_hf - s_wrong)) / np.max(np.abs(s_hf))) < 1e-3:
        problems.append(f"layer {layer}: unpermuted weights give the same scores; the fixture cannot tell")
    layer += 1

if layer == 0:
    problems.append("no blk.N.attn_q.weight in the GGUF")
print(f"  {gguf_path.rsplit('/', 1)[-1]}: {layer} layers, H={H} Hkv={Hkv} D={D}, rope_freqs "
      f"{'used' if has_freqs else 'absent'}: HF rotate-half vs llama.cpp interleaved scores, max rel error {worst:.3g}")
if problems:
    print("FAIL: " + "; ".join(problems))
    sys.exit(1)
