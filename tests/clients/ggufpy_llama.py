"""A rebox-converted llama-family GGUF against llama.cpp's own conversion code, bit for bit.

gguf-py (GGUFReader + gguf.quants.dequantize) reads every tensor of FILE.gguf; the expected values are
computed from the source checkpoint in numpy (source_values.py: mcq-v1, MLX or float) and, for
attn_q / attn_k (weights and biases), passed through `LlamaModel.permute` taken from llama.cpp's
conversion/llama.py in the bundle. `rope_freqs.weight` must equal what the bundle's
`generate_extra_tensors` computes from config.json (and be absent when it yields nothing), run on the
converter's own LlamaModel -> TextModel -> ModelBase chain (converter_run.py; TextModel.__init__ builds
rope_parameters). torch is replaced by a small shim that keeps torch's float32 semantics (a python scalar
does not widen a float32 tensor, `scalar / tensor` is `tensor.reciprocal() * scalar` as torch defines
`__rtruediv__`). Every GGUF tensor must come from exactly one source tensor and every source tensor must
appear.

Usage: ggufpy_llama.py LLAMA_SRC MODEL_DIR FILE.gguf [--expect-types T1,T2,...]
"""
import math
import sys

import numpy as np
import gguf

from converter_run import Converter
from source_values import Source


class T:
    """A float32 torch tensor as far as generate_extra_tensors uses one."""

    def __init__(self, a):
        self.a = np.asarray(a, dtype=np.float32)

    @staticmethod
    def _v(x):
        return x.a if isinstance(x, T) else np.float32(x)

    def __iter__(self):
        return (T(v) for v in self.a)

    def __truediv__(self, o):
        return T(self.a / self._v(o))

    def __rtruediv__(self, o):  # torch: self.reciprocal() * other
        return T((np.float32(1) / self.a) * self._v(o))

    def __rpow__(self, o):
        return T(np.power(self._v(o), self.a))

    def __add__(self, o):
        return T(self.a + self._v(o))

    __radd__ = __add__

    def __sub__(self, o):
        return T(self.a - self._v(o))

    def __rsub__(self, o):
        return T(self._v(o) - self.a)

    def __mul__(self, o):
        return T(self.a * self._v(o))

    __rmul__ = __mul__

    def __lt__(self, o):
        return bool(self.a < self._v(o))

    def __gt__(self, o):
        return bool(self.a > self._v(o))


class Torch:
    float32 = np.float32

    @staticmethod
    def arange(start, end, step, dtype=None):
        return T(np.arange(start, end, step, dtype=np.float32))

    @staticmethod
    def tensor(items, dtype=None):
        return np.array([T._v(x) for x in items], dtype=np.float32)


llama_src, model_dir, gguf_path = sys.argv[1:4]
expect_types = set()
if "--expect-types" in sys.argv:
    expect_types = set(sys.argv[sys.argv.index("--expect-types") + 1].split(","))
problems = []

src = Source(model_dir)
cfg = src.config
n_head = cfg["num_attention_heads"]
n_kv = cfg.get("num_key_value_heads", n_head)
conv = Converter(llama_src, [("llama.py", "LlamaModel"), ("base.py", "TextModel"), ("base.py", "ModelBase")],
                 model_dir, dict(cfg), extra_globals={"torch": Torch, "math": math})
permute = conv.obj.permute

# HF -> GGUF names of the llama graph, written out here (independent of rebox's registry).
LAYER = {
    "input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.bias": "attn_v.bias", "self_attn.o_proj.bias": "attn_output.bias",
    "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}
TOP = {"embed_tokens.weight": "token_embd.weight", "norm.weight": "output_norm.weight",
       "lm_head.weight": "output.weight"}


def gguf_name(hf):
    short = hf[len("model."):] if hf.startswith("model.") else hf
    if short in TOP:
        return TOP[short]
    parts = short.split(".", 2)
    if len(parts) == 3 and parts[0] == "layers" and parts[2] in LAYER:
        return f"blk.{int(parts[1])}.{LAYER[parts[2]]}"
    return None


def expected(hf):
    w = src.values(hf)
    if hf.endswith(("q_proj.weight", "q_proj.bias")):
        return permute(w, n_head, n_head), True
    if hf.endswith(("k_proj.weight", "k_proj.bias")):
        return permute(w, n_head, n_kv), True
    return w, False


by_gguf = {}
for hf in src.names():
    g = gguf_name(hf)
    if g is None:
        problems.append(f"source tensor {hf}: no llama GGUF name known to this test")
    elif g in by_gguf:
        problems.append(f"{by_gguf[g]} and {hf} both map to {g}")
    else:
        by_gguf[g] = hf
extras = {name: np.asarray(value, dtype=np.float32) for name, value in conv.obj.generate_extra_tensors()}

reader = gguf.GGUFReader(gguf_path)
seen, types = set(), {}
same = permuted = 0
for t in reader.tensors:
    seen.add(t.name)
    types[t.tensor_type.name] = types.get(t.tensor_type.name, 0) + 1
    if t.tensor_type == gguf.GGMLQuantizationType.F32:
        got = np.asarray(t.data, dtype=np.float32)
    else:
        got = gguf.quants.dequantize(t.data, t.tensor_type)
    if t.name in extras:
        want, hf, moved = extras[t.name], "(generated from config.json)", False
    elif t.name in by_gguf:
        hf = by_gguf[t.name]
        want, moved = expected(hf)
    else:
        problems.append(f"GGUF tensor {t.name}: no source tensor and not generated by llama.cpp's converter")
        continue
    ne = [int(x) for x in t.shape]
    if ne[::-1] != list(want.shape) and not (len(want.shape) == 2 and want.shape[0] == 1 and ne == [want.shape[1]]):
        problems.append(f"{t.name}: ne {ne}, expected the reverse of {list(want.shape)} from {hf}")
        continue
    got = got.reshape(want.shape)
    diff = got.view(np.uint32) != want.astype(np.float32).view(np.uint32)
    if diff.any():
        i = tuple(int(x) for x in np.argwhere(diff)[0])
        problems.append(f"{t.name} ({t.tensor_type.name}): {int(diff.sum())} of {want.size} values differ from "
                        f"llama.cpp's conversion of {hf}; first at {i}: gguf {got[i]!r}, expected {want[i]!r}")
        continue
    same += 1
    if moved:
        if np.array_equal(src.values(hf), want):
            problems.append(f"{t.name}: the permutation left {hf} unchanged; the fixture cannot tell")
        permuted += 1

for g, hf in by_gguf.items():
    if g not in seen:
        problems.append(f"source tensor {hf}: missing from the GGUF (expected {g})")
for g in extras:
    if g not in seen:
        problems.append(f"{g}: llama.cpp's converter generates it from config.json; missing from the GGUF")
if permuted == 0:
    problems.append("no attn_q/attn_k tensor was checked")
if expect_types and set(types) != expect_types:
    problems.append(f"tensor types {sorted(types)}, expected {sorted(expect_types)}")

print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}): {same}/{len(reader.tensors)} tensors equal to llama.cpp's "
      f"conversion of the source, {permuted} of them through LlamaModel.permute; types {types}; "
      f"extra tensors {sorted(extras) or 'none'}")
if problems:
    print(f"FAIL: {gguf_path} vs {model_dir}:")
    for p in problems[:40]:
        print("  " + p)
    sys.exit(1)
