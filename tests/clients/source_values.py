"""The values of a source checkpoint, computed here in numpy from the files alone (test side, shares no
code with rebox): every logical Hugging Face tensor as a float32 array in its HF shape.

Formats:
  mcq-v1  `__metadata__.mcq` lists quantized tensors; NAME.qcodes is an lsb0 bit stream, NAME.scales and
          NAME.mins fp16 per group of `group` consecutive codes; w = float(code) * float(scale) + float(min)
          evaluated in float32 (docs/mcq-v1.md).
  MLX     config.json `quantization` (global bits/group_size, per-module overrides); NAME.weight is uint32
          words, each row's codes packed LSB first across the row's words, NAME.scales / NAME.biases per
          group along the row (F16/BF16/F32); w = code * scale + bias in float32 (docs/formats.md).
          Stacked experts (mlx-lm switch_mlp) are [E, rows, words]: E*rows rows of the same layout,
          read as an [E, rows, cols] array.
  float   plain F32/F16/BF16 tensors, widened exactly to float32.
"""
import json
import os

import numpy as np


class StTensor:
    def __init__(self, raw, base, entry):
        self.dtype = entry["dtype"]
        self.shape = list(entry["shape"])
        begin, end = entry["data_offsets"]
        self.bytes = raw[base + begin : base + end]


def read_safetensors(path):
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    header_len = int.from_bytes(bytes(raw[:8]), "little")
    header = json.loads(bytes(raw[8 : 8 + header_len]).decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    return {name: StTensor(raw, 8 + header_len, e) for name, e in header.items()}, meta


def unpack_lsb0(packed, bits, first, count):
    """codes[first : first + count] of an lsb0 stream (code LSB first, stream bit k = bit k%8 of byte k/8)."""
    start_bit, end_bit = first * bits, (first + count) * bits
    chunk = np.asarray(packed[start_bit // 8 : (end_bit + 7) // 8])
    stream = np.unpackbits(chunk, bitorder="little")[start_bit % 8 : start_bit % 8 + count * bits]
    weights = (np.uint32(1) << np.arange(bits, dtype=np.uint32)).astype(np.uint32)
    return stream.reshape(count, bits).astype(np.uint32) @ weights


def float_values(t):
    data = t.bytes.tobytes()
    if t.dtype == "F32":
        return np.frombuffer(data, dtype="<f4").astype(np.float32)
    if t.dtype == "F16":
        return np.frombuffer(data, dtype="<f2").astype(np.float32)
    if t.dtype == "BF16":
        return (np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
    raise ValueError(f"{t.dtype} is not a float dtype")


def affine(codes, scales, mins, group):
    g = np.arange(codes.size, dtype=np.int64) // group
    return codes.astype(np.float32) * scales[g] + mins[g]


class Source:
    """tensors: HF name -> StTensor; format: 'mcq-v1', 'mlx' or 'float'; values(name) -> float32 array."""

    def __init__(self, model_dir):
        index = os.path.join(model_dir, "model.safetensors.index.json")
        files = sorted(set(json.load(open(index))["weight_map"].values())) if os.path.exists(index) else [
            "model.safetensors"]
        self.tensors, self.mcq = {}, {}
        for f in files:
            tensors, meta = read_safetensors(os.path.join(model_dir, f))
            self.tensors.update(tensors)
            if "mcq" in meta:
                self.mcq.update(json.loads(meta["mcq"])["tensors"])
        self.config = json.load(open(os.path.join(model_dir, "config.json")))
        self.mlx = self.config.get("quantization") if not self.mcq else None
        self.format = "mcq-v1" if self.mcq else ("mlx" if self.mlx else "float")

    def names(self):
        """The logical tensor names (quantized triples counted once)."""
        if self.mcq:
            parts = {q + s for q in self.mcq for s in (".qcodes", ".scales", ".mins")}
            return sorted(set(self.mcq) | {n for n in self.tensors if n not in parts})
        if self.mlx:
            return sorted(n for n in self.tensors if not n.endswith((".scales", ".biases")))
        return sorted(self.tensors)

    def is_quantized(self, name):
        if self.mcq:
            return name in self.mcq
        return bool(self.mlx) and self.tensors[name].dtype == "U32"

    def _mlx_params(self, name):
        module = name[: -len(".weight")]
        for key in (module, module[len("model."):] if module.startswith("model.") else "model." + module):
            if isinstance(self.mlx.get(key), dict):
                return self.mlx[key]["bits"], self.mlx[key]["group_size"]
        return self.mlx["bits"], self.mlx["group_size"]

    def values(self, name):
        if self.mcq and name in self.mcq:
            meta = self.mcq[name]
            shape, bits, group = meta["shape"], meta["bits"], meta["group"]
            n = int(np.prod(shape))
            codes = unpack_lsb0(self.tensors[name + ".qcodes"].bytes, bits, 0, n)
            scales = np.frombuffer(self.tensors[name + ".scales"].bytes.tobytes(), dtype="<f2").astype(np.float32)
            mins = np.frombuffer(self.tensors[name + ".mins"].bytes.tobytes(), dtype="<f2").astype(np.float32)
            return affine(codes, scales, mins, group).reshape(shape)
        t = self.tensors[name]
        if self.is_quantized(name):
            bits, group = self._mlx_params(name)
            module = name[: -len(".weight")]
            *lead, words = t.shape  # [rows, words] or stacked experts [E, rows, words]
            rows = int(np.prod(lead))
            cols = words * 32 // bits
            codes = unpack_lsb0(t.bytes, bits, 0, rows * cols)  # rows are whole words, so one stream
            scales = float_values(self.tensors[module + ".scales"])
            mins = float_values(self.tensors[module + ".biases"])
            return affine(codes, scales, mins, group).reshape(*lead, cols)
        return float_values(t).reshape(t.shape)

    def native(self, name):
        """The values in the dtype llama.cpp's converter holds them in when modify_tensors runs: F16 as float16
        (prepare_tensors keeps F16), BF16 and F32 as float32 (it converts every other dtype to float32);
        quantized tensors as their float32 values."""
        if not self.is_quantized(name) and self.tensors[name].dtype == "F16":
            return self.values(name).astype(np.float16)
        return self.values(name)
