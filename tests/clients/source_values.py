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
  GPTQ / AWQ / compressed-tensors (config.json quantization_config.quant_method; docs/formats.md §5):
          integer codes q, zero points z and scales s unpacked here from the packed words (GPTQ: LSB-first
          bit streams along the input dim per column, qzeros along the output dim, v1 stores z-1, g_idx;
          AWQ gemm: [in, out/8] words in nibble order 0 2 4 6 1 3 5 7 (gemv: [out, in/8] natural order);
          compressed-tensors pack-quantized:
          32//bits whole fields per word, signed codes stored + 2^(bits-1), zero points packed along dim 0;
          int-quantized: I8 codes); w = (q - z) * s computed in float64 (exact), then float32.
  ModelOpt NVFP4 (hf_quant_config.json quant_algo NVFP4; docs/formats.md): P.weight U8 [out, in/2], element
          2i in the low nibble of byte i, an E2M1 code (sign, 2 exponent bits, 1 mantissa bit);
          P.weight_scale one E4M3 byte (4 exponent bits, bias 7, 3 mantissa bits) per 16 values;
          P.weight_scale_2 the F32 per-tensor factor; w = E2M1 * scale * factor in float64 (at most
          2 + 4 + 24 significant bits: exact), then float32; code 8 is -0 (an NVFP4 GGUF reads it
          back as +0: ggml's E2M1 table has no negative zero, which converter_compare allows for).
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


def int_values(t):
    data = t.bytes.tobytes()
    kinds = {"I8": "<i1", "I16": "<i2", "I32": "<i4", "I64": "<i8", "U8": "<u1", "U32": "<u4"}
    if t.dtype not in kinds:
        raise ValueError(f"{t.dtype} is not an integer dtype")
    return np.frombuffer(data, dtype=kinds[t.dtype]).astype(np.int64).reshape(t.shape)


def word_bits(words):
    """uint32 words [..., W] -> their bits [..., W*32], LSB of the first word first."""
    w = np.ascontiguousarray((np.asarray(words, dtype=np.int64) & 0xFFFFFFFF).astype("<u4"))
    return np.unpackbits(w.view(np.uint8).reshape(*w.shape[:-1], -1), axis=-1, bitorder="little")


def stream_fields(words, bits, count):
    """Each row of words [R, W] as one LSB-first bit stream of `bits`-bit fields: [R, count]."""
    stream = word_bits(words)[:, : count * bits].reshape(words.shape[0], count, bits).astype(np.int64)
    return stream @ (np.int64(1) << np.arange(bits, dtype=np.int64))


def word_fields(words, bits, count):
    """compressed-tensors: 32//bits whole fields per word, LSB first, never crossing: [R, count]."""
    pf = 32 // bits
    w = np.asarray(words, dtype=np.int64) & 0xFFFFFFFF
    fields = np.stack([(w >> (bits * i)) & ((1 << bits) - 1) for i in range(pf)], axis=-1)
    return fields.reshape(w.shape[0], -1)[:, :count]


AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]  # nibble i of a word holds column 8w + AWQ_ORDER[i]


def awq_columns(words):
    """AWQ gemm words [R, out/8] -> fields [R, out] in logical column order."""
    w = np.asarray(words, dtype=np.int64) & 0xFFFFFFFF
    out = np.zeros((w.shape[0], w.shape[1], 8), dtype=np.int64)
    for i in range(8):
        out[:, :, AWQ_ORDER[i]] = (w >> (4 * i)) & 0xF
    return out.reshape(w.shape[0], -1)


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
        qc = self.config.get("quantization_config") or {}
        self.pq = qc if qc.get("quant_method") in ("gptq", "awq", "compressed-tensors") else None
        self.pq_modules = {}  # "P.weight" -> module path P of a quantized linear
        self.nvfp4 = set()  # ModelOpt NVFP4: the "P.weight" names with a P.weight_scale
        side = os.path.join(model_dir, "hf_quant_config.json")
        if os.path.exists(side) and json.load(open(side))["quantization"].get("quant_algo") == "NVFP4":
            self.format = "modelopt-nvfp4"
            self.nvfp4 = {n for n, t in self.tensors.items() if n.endswith(".weight") and t.dtype == "U8"
                          and n[: -len(".weight")] + ".weight_scale" in self.tensors}
        if self.pq:
            self.format = qc["quant_method"]
            marker = {"gptq": ".qweight", "awq": ".qweight"}.get(self.format, ".weight_packed")
            for n, t in self.tensors.items():
                if n.endswith(marker):
                    self.pq_modules[n[: -len(marker)] + ".weight"] = n[: -len(marker)]
                elif self.format == "compressed-tensors" and n.endswith(".weight") and t.dtype == "I8":
                    self.pq_modules[n] = n[: -len(".weight")]

    PQ_PARTS = (".qweight", ".qzeros", ".scales", ".g_idx", ".weight_packed", ".weight_scale",
                ".weight_zero_point", ".weight_shape", ".weight_g_idx")

    def names(self):
        """The logical tensor names (quantized triples counted once)."""
        if self.nvfp4:
            parts = {n[: -len(".weight")] + p for n in self.nvfp4
                     for p in (".weight_scale", ".weight_scale_2", ".input_scale")}
            return sorted(n for n in self.tensors if n not in parts)
        if self.pq:
            parts = {m + p for m in self.pq_modules.values() for p in self.PQ_PARTS + (".weight",)}
            return sorted(set(self.pq_modules) | {n for n in self.tensors if n not in parts})
        if self.mcq:
            parts = {q + s for q in self.mcq for s in (".qcodes", ".scales", ".mins")}
            return sorted(set(self.mcq) | {n for n in self.tensors if n not in parts})
        if self.mlx:
            return sorted(n for n in self.tensors if not n.endswith((".scales", ".biases")))
        return sorted(self.tensors)

    def hf_tensors(self, switch=None):
        """The source as a transformers checkpoint holds it, [(name, values)]: names with "model."
        (lm_head without), and an MLX switch_mlp tensor [E, out, in] as the E per-expert tensors
        mlx-lm's sanitize stacked ("...mlp.experts.{e}.<proj>.weight", slice e = expert e; `switch`
        renames the projections, Mixtral's gate_proj / down_proj / up_proj to w1 / w2 / w3)."""
        out = []
        for name in self.names():
            short = name[len("model."):] if name.startswith("model.") else name
            hf = short if short.startswith("lm_head") else "model." + short
            values = self.values(name)
            if ".switch_mlp." not in hf:
                out.append((hf, values))
                continue
            head, proj = hf.split(".switch_mlp.")
            proj = proj[: -len(".weight")]
            for e in range(values.shape[0]):
                out.append((f"{head}.experts.{e}.{(switch or {}).get(proj, proj)}.weight", values[e]))
        return out

    def is_quantized(self, name):
        if self.nvfp4:
            return name in self.nvfp4
        if self.pq:
            return name in self.pq_modules
        if self.mcq:
            return name in self.mcq
        return bool(self.mlx) and self.tensors[name].dtype == "U32"

    def _mlx_params(self, name):
        module = name[: -len(".weight")]
        for key in (module, module[len("model."):] if module.startswith("model.") else "model." + module):
            if isinstance(self.mlx.get(key), dict):
                return self.mlx[key]["bits"], self.mlx[key]["group_size"]
        return self.mlx["bits"], self.mlx["group_size"]

    def pq_bits_group(self):
        """(bits, group_size) of the quantization_config (-1 or None: one group per row)."""
        qc = self.pq
        if self.format == "compressed-tensors":
            weights = next(iter(qc["config_groups"].values()))["weights"]
            group = weights["group_size"] if weights.get("strategy") == "group" else -1
            return weights["num_bits"], group, weights.get("symmetric", True)
        return qc["bits"], qc["group_size"], qc.get("sym", False)

    def pq_parts(self, name):
        """Integer codes q, zero points z (per value) and scales s (per value, float64) of a quantized
        linear, all [out, in], in the unsigned-field convention of docs/formats.md §5.0 (GPTQ/AWQ as
        stored, v1 zero point + 1; compressed-tensors the stored offset fields, symmetric z = 2^(bits-1))."""
        m = self.pq_modules[name]
        bits, group, sym = self.pq_bits_group()
        t = self.tensors
        if self.format == "gptq":
            qw = int_values(t[m + ".qweight"])  # [in*bits/32, out]
            words, out = qw.shape
            n_in = words * 32 // bits
            q = stream_fields(qw.T, bits, n_in)  # each column n is one stream over k
            qz = int_values(t[m + ".qzeros"])  # [groups, out*bits/32]
            z = stream_fields(qz, bits, out)  # [groups, out]
            fmt = self.pq.get("checkpoint_format", self.pq.get("format", "gptq"))
            if fmt != "gptq_v2":
                z = z + 1
            s = float_values(t[m + ".scales"]).astype(np.float64).reshape(t[m + ".scales"].shape)
            g_idx = int_values(t[m + ".g_idx"])
            return q, z[g_idx, :].T, s[g_idx, :].T
        if self.format == "awq" and self.pq.get("version") == "gemv":
            qw = int_values(t[m + ".qweight"])  # [out, in/8], natural nibble order along the row
            out, n_in = qw.shape[0], qw.shape[1] * 8
            q = stream_fields(qw, 4, n_in)
            grp = n_in if group in (-1, None) else group
            groups = n_in // grp
            qz = int_values(t[m + ".qzeros"])  # [out, W]: groups then zero padding
            z = stream_fields(qz, 4, qz.shape[1] * 8)[:, :groups]
            s = float_values(t[m + ".scales"]).astype(np.float64).reshape(t[m + ".scales"].shape)[:, :groups]
            g = np.arange(n_in) // grp
            return q, z[:, g], s[:, g]
        if self.format == "awq":
            qw = int_values(t[m + ".qweight"])  # [in, out/8]
            n_in = qw.shape[0]
            q = awq_columns(qw).T  # [out, in]
            z = awq_columns(int_values(t[m + ".qzeros"]))  # [groups, out]
            s = float_values(t[m + ".scales"]).astype(np.float64).reshape(t[m + ".scales"].shape)
            g = np.arange(n_in) // (n_in if group in (-1, None) else group)
            return q, z[g, :].T, s[g, :].T
        # compressed-tensors
        half = 1 << (bits - 1)
        if m + ".weight_packed" in t:
            out, n_in = (int(x) for x in int_values(t[m + ".weight_shape"]))
            q = word_fields(int_values(t[m + ".weight_packed"]), bits, n_in)
        else:  # int-quantized: I8 signed codes, shown here with the same + 2^(bits-1) offset
            q = int_values(t[m + ".weight"]) + half
            out, n_in = q.shape
        s = float_values(t[m + ".weight_scale"]).astype(np.float64).reshape(t[m + ".weight_scale"].shape)
        groups = s.shape[1]
        if m + ".weight_zero_point" in t:
            zt = t[m + ".weight_zero_point"]
            if zt.dtype == "I8":
                z = int_values(zt) + half  # [out, groups]
            else:  # packed along dim 0: [ceil(out/pf), groups]
                z = word_fields(int_values(zt).T, bits, out).T
        else:
            z = np.full((out, groups), half, dtype=np.int64)
        g = np.arange(n_in) // (n_in // groups)
        return q, z[:, g], s[:, g]

    def pq_column_groups(self, name):
        """The group of each input column k of a quantized linear (GPTQ: g_idx as stored)."""
        m = self.pq_modules[name]
        if self.format == "gptq":
            return int_values(self.tensors[m + ".g_idx"])
        q, _, _ = self.pq_parts(name)
        n_in = q.shape[1]
        if self.format == "awq":
            group = self.pq["group_size"]
            return np.arange(n_in) // (n_in if group in (-1, None) else group)
        return np.arange(n_in) // (n_in // self.tensors[m + ".weight_scale"].shape[1])

    def nvfp4_values(self, name):
        t, module = self.tensors[name], name[: -len(".weight")]
        b = np.frombuffer(t.bytes.tobytes(), dtype=np.uint8)
        codes = np.empty(b.size * 2, dtype=np.int64)
        codes[0::2], codes[1::2] = b & 15, b >> 4
        e, m = (codes >> 1) & 3, (codes & 1).astype(np.float64)
        e2m1 = np.where(codes & 8, -1.0, 1.0) * np.where(e == 0, m * 0.5, (1.0 + m * 0.5) * 2.0 ** (e - 1.0))
        sb = np.frombuffer(self.tensors[module + ".weight_scale"].bytes.tobytes(), dtype=np.uint8).astype(np.int64)
        se, sm = (sb >> 3) & 15, (sb & 7).astype(np.float64)
        scale = np.where(sb & 128, -1.0, 1.0) * np.where(se == 0, sm / 8 * 2.0 ** -6, (1 + sm / 8) * 2.0 ** (se - 7.0))
        factor = float(float_values(self.tensors[module + ".weight_scale_2"])[0])
        value = e2m1 * np.repeat(scale, 16) * factor
        return value.astype(np.float32).reshape(t.shape[0], t.shape[1] * 2)

    def values(self, name):
        if name in self.nvfp4:
            return self.nvfp4_values(name)
        if self.pq and name in self.pq_modules:
            q, z, s = self.pq_parts(name)
            return ((q - z).astype(np.float64) * s).astype(np.float32)  # exact: <= 9 x 11 bits
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


def first_difference(name, got, want, diff):
    """The problem line of a tensor whose values differ where `diff` is set, or None."""
    if not diff.any():
        return None
    i = tuple(np.argwhere(diff)[0])
    return (f"{name}: {int(diff.sum())} of {want.size} values differ; first at {i}: "
            f"gguf {got[i]!r} source {want[i]!r}")
