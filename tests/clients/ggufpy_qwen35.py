"""Rebox-converted GGUFs of Qwen3.5 (qwen35, and qwen35moe) and Qwen3-Next (qwen3next) against llama.cpp's own converter class chain
from the bundle, bit for bit, several files in one process.

For each MODEL_DIR FILE.gguf TYPES triple: the source's values (source_values.py, the dequantized
checkpoint; an MLX one with mlx-lm's sanitize undone, hf_checkpoint) go through Qwen3_5TextModel -> _Qwen35MRopeMixin -> _LinearAttentionVReorderBase ->
Qwen3NextModel -> _QwenMtpMixin -> Qwen2MoeModel -> TextModel -> ModelBase (for a qwen3_next
config.json the chain from Qwen3NextModel on, whose modify_tensors splits in_proj_qkvz per key head
into attn_qkv and attn_gate; its MTP layer count is the one filter_tensors takes from the checkpoint)
(run as written by
converter_run.py; torch stood in for by numpy: permute is transpose, cat is concatenate, exp is
the correctly rounded float32 exp, from Python's decimal at 60 digits): filter_tensors (the MTP renames), modify_tensors (the V-head reorder of rows
and out_proj's column blocks, -exp(A_log), the + 1 on every norm but linear_attn.norm, conv1d
squeezed; Qwen2MoeModel's split of the fused gate_up_proj and its stacking of per-expert tensors for
a MoE, whose chain starts at Qwen3_5MoeTextModel) and gguf-py's tensor name map give every GGUF name and array llama.cpp's converter
writes. gguf-py's GGUFReader reads FILE.gguf: every tensor must be one of those (name, ne, values bit
for bit) and every one of those must be in the file; every qwen35.* KV set_gguf_parameters writes
must be in the file with the same type and value, and the file may hold no other qwen35.* KV.

torch's own CPU exp (SLEEF, 1-ulp bound) is not correctly rounded, nor is numpy's: the file is held
to the correctly rounded value (what docs/architectures.md "qwen35" says rebox writes), and the
script prints how many ssm_a values numpy's float32 exp would have rounded otherwise.

Usage: ggufpy_qwen35.py LLAMA_SRC MODEL_DIR FILE.gguf TYPES [MODEL_DIR FILE.gguf TYPES ...]
"""
import sys
from decimal import Decimal, getcontext

import numpy as np

from converter_compare import compare_gguf, field_value, no_mtp_option, run_triples
from converter_run import Converter, block_id
from source_values import Source

getcontext().prec = 60


def chain(first):
    """Qwen3_5(Moe)TextModel's class chain, or Qwen3NextModel's own (first None: qwen3next)."""
    qwen35 = (first, "_Qwen35MRopeMixin", "_LinearAttentionVReorderBase") if first else ()
    return [("qwen.py", c) for c in qwen35 + ("Qwen3NextModel", "_QwenMtpMixin", "Qwen2MoeModel")] + \
           [("base.py", "TextModel"), ("base.py", "ModelBase")]


class T(np.ndarray):
    """A torch tensor as far as these modify_tensors use one."""

    def permute(self, *dims):
        return np.transpose(self, dims).view(T)

    def contiguous(self):
        return np.ascontiguousarray(self).view(T)

    def unsqueeze(self, dim):
        return np.expand_dims(self, dim).view(T)

    def view(self, *args):
        """torch's view(*shape) is a reshape; numpy's view(type) stays numpy's."""
        if args and all(isinstance(a, (int, np.integer)) for a in args):
            return np.reshape(self, args).view(T)
        return np.ndarray.view(self, *args)


def exp_f32(v, dtype=np.float32):
    """e^v for a float32 (float16) v, rounded once to the nearest float32 (float16; ties to even)."""
    exact = Decimal(float(v)).exp()
    f = dtype(float(exact))
    best = f
    bits = np.uint32 if dtype == np.float32 else np.uint16
    for g in (np.nextafter(f, dtype(0)), np.nextafter(f, dtype(np.inf))):
        d_best, d_g = abs(Decimal(float(best)) - exact), abs(Decimal(float(g)) - exact)
        if d_g < d_best or (d_g == d_best and int(g.view(bits)) % 2 == 0):
            best = g
    return best


NUMPY_EXP_OFF = [0]


class Torch:
    @staticmethod
    def exp(x):
        dtype = np.float16 if np.asarray(x).dtype == np.float16 else np.float32  # F16 stays F16
        out = np.array([exp_f32(v, dtype) for v in np.asarray(x, dtype=dtype).ravel()],
                       dtype=dtype).reshape(np.shape(x))
        NUMPY_EXP_OFF[0] += int((np.exp(np.asarray(x, dtype=dtype)) != out).sum())
        return out.view(T)

    @staticmethod
    def cat(parts, dim=0):
        return np.concatenate(parts, axis=dim).view(T)

    @staticmethod
    def stack(parts, dim=0):
        return np.stack(parts, axis=dim).view(T)

    @staticmethod
    def split(x, sizes, dim=0):
        """torch.split with a list of sizes (Qwen3NextModel's in_proj_qkvz split)."""
        return [p.view(T) for p in np.split(x, np.cumsum(sizes)[:-1], axis=dim)]


MLX_SHIFTED = (".input_layernorm.weight", ".post_attention_layernorm.weight", ".q_norm.weight",
               ".k_norm.weight")


# E2M1 by its bits (code 8 is -0).
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def e4m3(byte):
    """OCP E4M3 (4 exponent bits, bias 7, 3 mantissa bits) as float64."""
    b = np.asarray(byte, dtype=np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    e, m = (b >> 3) & 0xF, b & 7
    return sign * np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7.0))


def modelopt_nvfp4(src, module):
    """A ModelOpt NVFP4 linear's weight [out, in] (modelopt's nvfp4_tensor.py layout: P.weight U8
    [out, in/2], element 2i in the low nibble; P.weight_scale E4M3 [out, in/16]; P.weight_scale_2
    F32): E2M1 * scale * scale_2 in float64 (exact), then float32."""
    packed = np.asarray(src.tensors[module + ".weight"].bytes, dtype=np.uint8)
    out, half = src.tensors[module + ".weight"].shape
    codes = np.stack([packed & 0xF, packed >> 4], axis=-1).reshape(out, 2 * half)
    scales = e4m3(np.asarray(src.tensors[module + ".weight_scale"].bytes)).reshape(out, -1)
    factor = float(src.values(module + ".weight_scale_2").ravel()[0])
    return (E2M1[codes] * np.repeat(scales, 16, axis=1) * factor).astype(np.float32)


def hf_checkpoint(src):
    """(config, [(name, values)]) of the checkpoint as transformers holds it. An MLX one (mlx-lm's
    qwen3_5 / qwen3_5_moe Model.sanitize undone, as read in mlx-lm): "language_model.model." ->
    "model.", "language_model.lm_head" -> "lm_head", the text_config's numbers at the top, conv1d
    [channels, kernel, 1] back to [channels, 1, kernel], switch_mlp [E, out, in] as the E per-expert
    tensors, and 1 taken off the norms sanitize shifted (input_layernorm, post_attention_layernorm,
    q_norm, k_norm, model.norm; binary32, exact for these BF16 values), so that the converter's own
    + 1 gives back the stored value."""
    nvfp4 = {n[: -len(".weight_scale_2")] for n in src.tensors if n.endswith(".weight_scale_2")}
    if nvfp4:  # ModelOpt NVFP4: each FP4 linear as its float32 values
        parts = {m + p for m in nvfp4 for p in (".weight_scale", ".weight_scale_2", ".input_scale")}
        return dict(src.config), [
            (n, modelopt_nvfp4(src, n[: -len(".weight")]) if n[: -len(".weight")] in nvfp4
             else src.native(n)) for n in src.names() if n not in parts]
    if src.format != "mlx":  # F16 as float16, as prepare_tensors keeps it (the + 1 and exp in F16)
        config = dict(src.config)  # Qwen3_5ForConditionalGeneration: TextModel merges text_config up
        config.update(config.pop("text_config", {}))
        return config, [(n, src.native(n)) for n in src.names()]
    config = {k: v for k, v in src.config.items() if k not in ("quantization", "quantization_config")}
    config.update(config.pop("text_config", {}))
    out = []
    for name in src.names():
        values = src.values(name)
        hf = name.replace("language_model.model.", "model.").replace("language_model.lm_head", "lm_head")
        if hf.endswith(MLX_SHIFTED) or hf == "model.norm.weight":
            values = (values.astype(np.float32) - np.float32(1)).astype(np.float32)
        if hf.endswith("conv1d.weight"):
            values = np.ascontiguousarray(np.transpose(values, (0, 2, 1)))
        if ".switch_mlp." in hf:
            head, proj = hf.split(".switch_mlp.")
            out += [(f"{head}.experts.{e}.{proj}", values[e]) for e in range(values.shape[0])]
            continue
        out.append((hf, values))
    return config, out


def check(llama_src, model_dir, gguf_path, expect_types):
    problems = []
    expect_types, asked_no_mtp = no_mtp_option(expect_types)
    src = Source(model_dir)
    config, tensors = hf_checkpoint(src)
    layers = config["num_hidden_layers"]
    # A checkpoint without any mtp.* tensor (mlx-lm drops them) is converted with --no-mtp.
    no_mtp = asked_no_mtp or not any(name.startswith("mtp.") for name, _ in tensors)
    attrs = {"_experts": None, "no_mtp": no_mtp, "mtp_only": False, "_original_block_count": layers,
             "opt_num_mtp_layers": 0,
             "block_count": layers + (0 if no_mtp else config.get("mtp_num_hidden_layers", 0))}
    moe = config["model_type"].startswith("qwen3_5_moe")
    nxt = config["model_type"] == "qwen3_next"
    first = None if nxt else "Qwen3_5MoeTextModel" if moe else "Qwen3_5TextModel"
    if nxt and not no_mtp:
        # No mtp_num_hidden_layers: _QwenMtpMixin.__init__ takes the count filter_tensors made while
        # ModelBase.__init__ indexed the checkpoint (which the stand-in does not run): a first
        # object, built with no_mtp so its __init__ does not assert, runs filter_tensors over every
        # name the same way.
        first_pass = Converter(llama_src, chain(first), model_dir, config,
                               attrs={**attrs, "no_mtp": True}, extra_globals={"torch": Torch})
        first_pass.obj.no_mtp = False
        for name, _ in tensors:
            first_pass.obj.filter_tensors((name, None))
        attrs["opt_num_mtp_layers"] = first_pass.obj.opt_num_mtp_layers
    conv = Converter(llama_src, chain(first), model_dir, config, attrs=attrs,
                     extra_globals={"torch": Torch})
    conv.obj.set_gguf_parameters()
    arch = conv.obj.gguf_writer.arch
    want_kvs = {key: (value.type, value.value) for key, value in conv.obj.gguf_writer.kv_data[0].items()
                if not key.startswith("general.")}
    wanted, origin = {}, {}
    NUMPY_EXP_OFF[0] = 0
    for name, values in tensors:
        kept = conv.obj.filter_tensors((name, None))
        if kept is None and name.startswith("model.visual."):
            continue  # the vision tower: the mmproj's (ggufpy_mmproj.py)
        if kept is None and asked_no_mtp and name.startswith("mtp."):
            continue  # --no-mtp
        if kept is None:
            problems.append(f"source tensor {name}: the converter skips it")
            continue
        renamed = kept[0]
        for g, data in conv.obj.modify_tensors(values.view(T), renamed, block_id(renamed)):
            if g in wanted:
                problems.append(f"{origin[g]} and {name} both become {g}")
            wanted[g], origin[g] = np.asarray(data, dtype=np.float32), name

    found, reader, same, types = compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types,
                                              in_order=True, fold_scales=True)
    problems += found
    pre = field_value(reader.fields["tokenizer.ggml.pre"])
    want_pre = "qwen2" if nxt else "qwen35"  # Qwen3-Next ships Qwen2's tokenizer and regex
    if pre != want_pre:
        problems.append(f"tokenizer.ggml.pre {pre!r}: the fixture's split regex is llama.cpp's {want_pre!r}")
    print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}): {same}/{len(reader.tensors)} tensors and "
          f"{len(want_kvs)} {arch} KVs as llama.cpp's converter writes them ({NUMPY_EXP_OFF[0]} ssm_a values "
          f"numpy's float32 exp rounds otherwise); types {types}")
    return [f"{gguf_path}: {p}" for p in problems]


if __name__ == "__main__":  # ggufpy_nemotronh.py imports T, Torch
    run_triples(check, sys.argv, __doc__)
