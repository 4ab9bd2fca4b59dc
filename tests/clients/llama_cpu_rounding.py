"""The one rounding llama.cpp's CPU matrix products add to a linear layer's input, modelled in numpy so that
hf_forward.py can hold BF16 and Q4_1/Q5_1 files to a tight bound (--kernel-pass). ggml-cpu converts the
activations to the weight type's vec_dot_type before every product (ggml_compute_forward_mul_mat):
  BF16 weights -> BF16 activations: round to nearest even to 8 mantissa bits (GGML_FP32_TO_BF16);
  F16 weights -> F16 activations (GGML_CPU_FP32_TO_FP16: round to nearest even);
  Q4_0 / Q5_0 / Q8_0 weights -> Q8_0 activations (quantize_row_q8_0): per block of 32 values
    d = amax / 127, q = round(x * 127 / amax) (the AVX2 row rounds half to even), d stored as fp16; the
    product of a block is d_w * d * sum(q_w * q), i.e. w times q * fp16(d);
  Q4_1 / Q5_1 weights -> Q8_1 activations (quantize_row_q8_1): per block of 32 values d = amax / 127,
    q = round(x * 127 / amax), d stored as fp16 and s = fp16(d * sum(q)); the product of a block
    w = q_w * d_w + m_w is then d_w * d * sum(q_w * q) + m_w * s.
The values themselves stay the source's: only x is rounded, and w's per-block min m_w (Q4_1/Q5_1 hold the
mcq-v1 min unchanged, docs/formats.md) comes from the source's own mins.
"""
import numpy as np

BLOCK = 32


def bf16_round(x):
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def f16_round(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float64)


def q8_blocks(x):
    """x [T, n] -> (q [T, n/32, 32], d [T, n/32, 1]) as quantize_row_q8_0 / _q8_1 compute them:
    d = amax / 127, q = round(x * 127 / amax) (half to even, as the AVX2 rows round)."""
    blocks = np.asarray(x, dtype=np.float32).reshape(x.shape[0], -1, BLOCK)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    d = amax / np.float32(127)
    inverse = np.where(amax != 0, np.float32(127) / np.where(amax != 0, amax, 1), 0).astype(np.float32)
    return np.rint(blocks * inverse).astype(np.float64), d


def q8_0(x):
    """x [T, n] -> x as ggml-cpu's Q8_0 row holds it (q * fp16(d) per block of 32)."""
    q, d = q8_blocks(x)
    return (q * d.astype(np.float16).astype(np.float64)).reshape(x.shape)


def q8_1(x):
    """x [T, n] -> (x rounded as Q8_1 [T, n/32, 32], the fp16 block sums s [T, n/32])."""
    q, d = q8_blocks(x)
    d16 = d.astype(np.float16).astype(np.float64)
    sums = (d * q.sum(axis=-1, keepdims=True).astype(np.float32)).astype(np.float16).astype(np.float64)
    return q * d16, sums[..., 0]


def q8_1_product(x, w, block_min):
    """x W^T as ggml-cpu's Q4_1/Q5_1 x Q8_1 dot products: w [rows, n] float64 values, block_min [rows, n/32]."""
    rows, n = w.shape
    x_blocks, sums = q8_1(x)
    codes_part = (w - np.repeat(block_min, BLOCK, axis=1)).reshape(rows, n // BLOCK, BLOCK)
    return np.einsum("tbk,rbk->tr", x_blocks, codes_part) + sums @ block_min.T
