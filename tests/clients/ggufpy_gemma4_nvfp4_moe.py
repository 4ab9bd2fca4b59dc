"""A rebox-converted Gemma 4 MoE (26B-A4B layout) from ModelOpt NVFP4 against llama.cpp's converter run on
the same checkpoint, its own NVFP4 path: Gemma4Model._generate_nvfp4_tensors (router.per_expert_scale of
each layer multiplied into every expert's down_proj weight_scale_2, `s() * r()[i]`) then
ModelBase._generate_nvfp4_tensors (_nvfp4_pack, the per-expert modules stacked per layer and projection by
_flush_nvfp4_experts, _write_scales_tensor / _write_scale_tensor), all run as written from the bundle
(converter_run.py) on the checkpoint's bytes; torch is a numpy stand-in with torch's dtype rules for the
calls these methods make (F32 times F32 rounds once; per_expert_scale is BF16, widened exactly). The tensors
it leaves go through filter_tensors + modify_tensors as in ggufpy_gemma4.py, and set_gguf_parameters /
set_vocab give the KVs.

Checked with gguf-py's GGUFReader: every NVFP4 tensor byte for byte and ne, every .scale bit for bit
(F32), every other tensor's values bit for bit, every gemma4.* / tokenizer.* KV (converter_compare.py),
no tensor either side lacks, except the .input_scale tensors the converter writes and rebox leaves out
(activation calibration no llama.cpp graph reads, docs/formats.md §2.2): their count is printed.

Usage: ggufpy_gemma4_nvfp4_moe.py LLAMA_SRC MODEL_DIR FILE.gguf TYPES
"""
import re
import sys

import numpy as np
import gguf

from converter_compare import compare_gguf
from converter_run import Converter, block_id
from ggufpy_gemma4 import CHAIN, plain  # also installs its transformers stand-in
from source_values import Source, float_values


class TT(np.ndarray):
    """A torch tensor as far as the NVFP4 repack uses one."""

    def numpy(self):
        return np.asarray(self)

    def float(self):
        return np.asarray(self, dtype=np.float32).view(TT)

    def to(self, dtype):
        return np.asarray(self).astype(dtype).view(TT)

    def numel(self):
        return self.size


class TorchNp:
    uint8 = np.uint8
    float32 = np.float32

    @staticmethod
    def stack(items, dim=0):
        return np.stack([np.asarray(i) for i in items], axis=dim).view(TT)

    @staticmethod
    def tensor(value, dtype=np.float32):
        return np.asarray(value, dtype=dtype).view(TT)


class Lazy:
    @staticmethod
    def to_eager(t):
        return t


def source_array(t):
    """A checkpoint tensor as torch would load it: U8 / F8_E4M3 as their bytes, floats widened to F32
    (exact for BF16)."""
    if t.dtype in ("U8", "F8_E4M3"):
        return np.asarray(t.bytes, dtype=np.uint8).reshape(t.shape).view(TT)
    return float_values(t).reshape(t.shape).astype(np.float32).view(TT)


def check(llama_src, model_dir, gguf_path, expect_types):
    src = Source(model_dir)
    hparams = dict(src.config)
    hparams.update(src.config.get("text_config") or {})
    conv = Converter(llama_src, CHAIN, model_dir, hparams,
                     extra_globals={"torch": TorchNp, "LazyTorchTensor": Lazy, "re": re})
    obj = conv.obj
    model_tensors = {}
    for name, t in src.tensors.items():  # ModelBase.index_tensors: filter_tensors at indexing
        kept = obj.filter_tensors((name, None))
        if kept is not None:
            model_tensors[kept[0]] = (lambda t=t: source_array(t))
    obj.model_tensors = model_tensors
    written = {}
    obj.gguf_writer.add_tensor = lambda name, data, raw_dtype=None, **_: written.__setitem__(
        name, (np.asarray(data), raw_dtype))
    obj._generate_nvfp4_tensors()
    if not any(name.endswith("ffn_down_exps.weight") for name in written):
        return [f"{gguf_path}: the converter stacked no NVFP4 experts from {model_dir}"]
    wanted, origin, raw = {}, {}, {}
    for g, data in obj.generate_extra_tensors():
        wanted[g], origin[g] = np.asarray(data, dtype=np.float32), "(generated from config.json)"
    input_scales = 0
    for g, (data, qtype) in written.items():
        if g.endswith(".input_scale"):
            input_scales += 1
            continue
        if qtype == gguf.GGMLQuantizationType.NVFP4:
            raw[g] = data
            wanted[g] = gguf.quants.dequantize(data, qtype).astype(np.float32)
        else:
            wanted[g] = np.asarray(data, dtype=np.float32)
        origin[g] = "the converter's NVFP4 path"
    for name, gen in obj.model_tensors.items():  # what _generate_nvfp4_tensors left
        for g, data in conv.tensors(name, np.asarray(gen(), dtype=np.float32), block_id(name)):
            wanted[g], origin[g] = np.asarray(data, dtype=np.float32), name
    obj.set_gguf_parameters()
    obj.set_vocab()
    arch = obj.gguf_writer.arch
    want_kvs = {key: (value.type, plain(value.value))
                for key, value in obj.gguf_writer.kv_data[0].items() if not key.startswith("general.")}
    problems, reader, same, types = compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types,
                                                 kv_prefixes=("tokenizer.",), in_order=True)
    for t in reader.tensors:
        if t.name in raw and np.asarray(t.data).tobytes() != raw[t.name].tobytes():
            problems.append(f"{t.name}: NVFP4 bytes differ from the converter's repack")
        if t.name.endswith(".input_scale"):
            problems.append(f"{t.name}: rebox writes no .input_scale")
    folded = [g for g in wanted if g.endswith("ffn_down_exps.scale")]
    print(f"  {gguf_path.rsplit('/', 1)[-1]} (ModelOpt NVFP4 MoE): {same}/{len(reader.tensors)} tensors as "
          f"llama.cpp's converter writes them ({len(raw)} NVFP4 byte for byte, {len(folded)} ffn_down_exps.scale "
          f"with router.per_expert_scale folded in); {len(want_kvs)} KVs; {input_scales} converter "
          f".input_scale tensors left out; types {types}")
    return [f"{gguf_path}: {p}" for p in problems]


if __name__ == "__main__":
    assert len(sys.argv) == 5, __doc__
    found = check(*sys.argv[1:])
    if found:
        print("FAIL:")
        for p in found[:60]:
            print("  " + p)
        sys.exit(1)
